package workflows

import (
	"errors"

	"github.com/recurhq/recur/jobs"
)

// toWire turns business errors into application errors the API can map;
// other errors pass unchanged.
func toWire(err error) error {
	var e *jobs.Error
	if errors.As(err, &e) {
		return e.ToApplicationError()
	}
	return err
}
