package workflows

import (
	"errors"

	"go.temporal.io/sdk/workflow"

	"github.com/recurhq/recur/jobs"
)

// accepted is a write's definition in its accepted form, or why it was
// refused, as acceptOnce records it.
type accepted[T any] struct {
	Value T
	Error *jobs.Error `json:",omitempty"`
}

// acceptOnce returns the definition accept gives, accepted (normalized
// and validated), in a side effect: the accepted form enters history, and
// a replay takes it from there without validating again, so that a
// validator made stricter after a write was recorded never changes what
// the write did.
func acceptOnce[T any](ctx workflow.Context, accept func(workflow.Context) (T, error)) (T, error) {
	var out accepted[T]
	err := workflow.SideEffect(ctx, func(ctx workflow.Context) any {
		v, err := accept(ctx)
		if err != nil {
			e, ok := jobs.FromApplicationError(err)
			if !ok && !errors.As(err, &e) {
				e = &jobs.Error{Code: jobs.CodeInvalidRequest, Message: err.Error()}
			}
			return accepted[T]{Error: e}
		}
		return accepted[T]{Value: v}
	}).Get(&out)
	var zero T
	switch {
	case err != nil:
		return zero, err
	case out.Error != nil:
		return zero, out.Error.ToApplicationError()
	}
	return out.Value, nil
}
