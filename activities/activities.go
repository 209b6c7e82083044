// Package activities holds the actions a job run performs, as Temporal
// activities: methods of one struct whose fields are their dependencies.
package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/jobs"
)

// Activities are the actions of job runs. Workflows reference them through
// a nil *Activities.
type Activities struct {
	Client *http.Client
	// Authority is the base URL of the Azure AD authority that issues
	// ActiveDirectoryOAuth tokens; DefaultAuthority when empty.
	Authority string
	// StorageQueueEndpoint is the storage queue service's URL, with
	// "{account}" standing for the action's storageAccount; empty is
	// Azure's https://{account}.queue.core.windows.net. Azurite is
	// http://127.0.0.1:10001/{account}.
	StorageQueueEndpoint string
	// ServiceBusEndpoint is the Service Bus namespace's URL, with
	// "{namespace}" standing for the action's namespace; empty is Azure's
	// https://{namespace}.servicebus.windows.net.
	ServiceBusEndpoint string
	// Temporal starts the workflows of Workflow actions.
	Temporal client.Client

	// Caches of outbound authentication; their zero values are ready.
	tokens tokenCache
	certs  certClients
}

// New returns Activities with their own HTTP client; each attempt's time
// limit comes with its input.
func New() *Activities {
	return &Activities{Client: &http.Client{}, Authority: DefaultAuthority}
}

// Error types of failed attempts: how the run workflow tells them apart.
const (
	ErrTypeHTTPStatus    = "HttpStatus"    // a non-2xx answer
	ErrTypeTransport     = "HttpTransport" // no answer at all
	ErrTypeInvalidAction = "InvalidAction"
)

// Outbound headers every call carries, as Azure Scheduler sent them, plus
// the occurrence ID as idempotency key so that targets can drop the
// duplicates at-least-once delivery can cause.
const (
	HeaderIdempotencyKey   = "Idempotency-Key"
	HeaderExecutionTag     = "x-ms-execution-tag"
	HeaderJobID            = "x-ms-scheduler-jobid"
	HeaderCollectionID     = "x-ms-scheduler-jobcollectionid"
	HeaderExpectedExecTime = "x-ms-scheduler-expected-execution-time"
)

// HTTP performs a job's HTTP(S) request. A 2xx answer succeeds; any other
// status fails the attempt, retryably for 408, 429 and 5xx (the rule of
// Azure Logic Apps, Scheduler's successor) and for transport errors.
func (a *Activities) HTTP(ctx context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
	// Every failure carries out as its details: the run records the attempt
	// and the answer.
	out := jobs.HTTPResponse{Attempt: int(activity.GetInfo(ctx).Attempt)}
	ctx, cancel, _ := withAttemptTimeout(ctx, in.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, in.Request.Method, in.Request.URI, strings.NewReader(in.Request.Body))
	if err != nil {
		return out, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("build request: %v", err), ErrTypeInvalidAction, nil, out)
	}
	for name, value := range in.Request.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set(HeaderIdempotencyKey, in.OccurrenceID)
	req.Header.Set(HeaderExecutionTag, in.OccurrenceID)
	req.Header.Set(HeaderJobID, in.Key.Job)
	req.Header.Set(HeaderCollectionID, in.Key.Collection)
	req.Header.Set(HeaderExpectedExecTime, in.Nominal.UTC().Format(time.RFC3339))
	client, secrets, authErr := a.authenticate(ctx, req, in.Request.Authentication)
	if authErr != nil {
		return out, authErr.applicationError(out)
	}

	resp, err := client.Do(req)
	if err != nil {
		// The URL may carry a secret in its query; say only what failed.
		err = withoutURL(err)
		return out, temporal.NewApplicationError(
			fmt.Sprintf("%s %s: %v", in.Request.Method, redactURL(in.Request.URI), err), ErrTypeTransport, out)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, jobs.MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	// A target may echo what it got (credentials included) into history.
	out.StatusCode, out.Status, out.Body = resp.StatusCode, resp.Status, redactSecrets(string(body), secrets)
	out.Headers = headersOfNote(resp.Header)
	activity.GetLogger(ctx).Info("http action", "status", resp.StatusCode, "occurrence", in.OccurrenceID)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return out, nil
	}
	msg := fmt.Sprintf("%s %s: %s", in.Request.Method, redactURL(in.Request.URI), resp.Status)
	if retryableStatus(resp.StatusCode) {
		return out, temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	return out, temporal.NewNonRetryableApplicationError(msg, ErrTypeHTTPStatus, nil, out)
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// redactURL drops the query and user info of a URL for messages: both may
// carry secrets (SAS tokens, passwords).
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if scheme, rest, ok := strings.Cut(raw, "://"); ok {
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			rest = rest[at+1:]
		}
		raw = scheme + "://" + rest
	}
	return raw
}

// notableHeaders are the response headers a history row keeps: what says
// what the answer was, where the result went and when to come back.
var notableHeaders = []string{"Content-Type", "Location", "Retry-After", "Date", "x-ms-request-id", "x-ms-correlation-request-id"}

// headersOfNote returns the notable headers of an answer as
// "Name: value; ...", empty when none.
func headersOfNote(h http.Header) string {
	var parts []string
	for _, name := range notableHeaders {
		if v := h.Get(name); v != "" {
			parts = append(parts, name+": "+v)
		}
	}
	return strings.Join(parts, "; ")
}

// withAttemptTimeout bounds one attempt: timeout, or jobs.DefaultTimeout
// when it is not set. It returns the limit it applied.
func withAttemptTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, time.Duration) {
	if timeout <= 0 {
		timeout = jobs.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, timeout
}

// withoutURL unwraps the *url.Error of a failed request: its URL may carry
// a secret in its query or user info, so messages say only what failed.
func withoutURL(err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err
	}
	return err
}
