package activities

import (
	"cmp"
	"net/http"
	"strconv"
	"time"

	"github.com/recurhq/recur/jobs"
)

// sign sets the Standard Webhooks headers of a call of a request that
// signs (jobs.Signing), sent at now: they replace any of the job's own of
// those names, which validation refuses for a new definition.
func sign(req *http.Request, in jobs.HTTPRequestInput, now time.Time) error {
	s := in.Request.Signing
	if s == nil {
		return nil
	}
	// A re-run is signed as the run it runs again: its target knows it by
	// its webhook-id.
	id := jobs.WebhookID(cmp.Or(in.SignedAs, in.OccurrenceID), in.ActionName)
	sig, err := s.Signature(id, now, []byte(in.Request.Body))
	if err != nil {
		return err
	}
	req.Header.Set(jobs.HeaderWebhookID, id)
	req.Header.Set(jobs.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(jobs.HeaderWebhookSignature, sig)
	return nil
}
