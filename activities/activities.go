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
	"unicode/utf8"

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
// Azure Logic Apps, Scheduler's successor) and for transport errors: no
// answer within the attempt's timeout, or one whose body breaks off. At
// most jobs.MaxResponseBody of the body is kept; a bigger one is cut.
func (a *Activities) HTTP(ctx context.Context, in jobs.HTTPRequestInput) (jobs.HTTPResponse, error) {
	// Every failure carries out as its details: the run records the attempt
	// and the answer.
	out := jobs.HTTPResponse{Attempt: int(activity.GetInfo(ctx).Attempt)}
	ctx, cancel, limit := withAttemptTimeout(ctx, in.Timeout)
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

	// A target that hangs, resets, answers garbage or redirects in a loop
	// (http.Client refuses the 10th redirect) gives no answer: all alike
	// are retryable transport failures, as the target may be fixed by the
	// next attempt.
	resp, err := client.Do(req)
	if err != nil {
		return out, transportError(in.Request, describeTransport(ctx, err, limit), out)
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body)
	// A target may echo what it got (credentials included) into history.
	out.StatusCode, out.Status, out.Body = resp.StatusCode, clip(resp.Status), redactSecrets(string(body), secrets)
	out.Headers = headersOfNote(resp.Header)
	activity.GetLogger(ctx).Info("http action", "status", resp.StatusCode, "occurrence", in.OccurrenceID)
	if err != nil {
		// An answer whose body breaks off (the target stalls past the
		// limit or resets) is not one the target finished: a 200 OK then
		// is no success, and the attempt fails as if nothing had come.
		return out, transportError(in.Request, out.Status+", then reading the body: "+describeTransport(ctx, err, limit), out)
	}
	return out, statusError(in.Request, out)
}

// statusError is the failure of an attempt answered out.Status: nil for
// 2xx, retryable for retryableStatus.
func statusError(r jobs.HTTPRequest, out jobs.HTTPResponse) error {
	if out.StatusCode >= 200 && out.StatusCode < 300 {
		return nil
	}
	msg := fmt.Sprintf("%s %s: %s", r.Method, redactURL(r.URI), out.Status)
	if retryableStatus(out.StatusCode) {
		return temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeHTTPStatus, nil, out)
}

// readBody reads at most jobs.MaxResponseBody of an answer's body, then
// drains up to 1 MiB more so that the connection may be reused; a bigger
// body is cut there (closing it drops the connection) rather than read to
// its end. The error is the first part's: what history keeps.
func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, jobs.MaxResponseBody))
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	}
	return body, err
}

// transportError is the retryable failure of an attempt that got no
// answer, or no whole one. The message names the request without the
// URL's query and user info: both may carry secrets.
func transportError(r jobs.HTTPRequest, what string, out jobs.HTTPResponse) error {
	return temporal.NewApplicationError(fmt.Sprintf("%s %s: %s", r.Method, redactURL(r.URI), what), ErrTypeTransport, out)
}

// describeTransport says what went wrong with a request or its body,
// without the URL *url.Error carries, and as "timed out after limit" when
// ctx, the attempt's, ran out of time ("context deadline exceeded" says
// neither what nor how long). The transport's own timeouts (TLS
// handshake, say) keep their words.
func describeTransport(ctx context.Context, err error, limit time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", limit)
	}
	return clip(withoutURL(err).Error())
}

// maxReported is how much of any one thing a target says besides its body
// (a status line, a header's value, the words of a malformed answer) an
// attempt reports. http.Transport accepts 10 MB of headers; were the
// attempt to report them whole, Temporal would refuse its result or
// failure as too big, and the attempt would be lost to its StartToClose
// timeout, record and all.
const maxReported = 1024

// clip cuts s to at most maxReported bytes, on a rune boundary, marking
// the cut.
func clip(s string) string {
	if len(s) <= maxReported {
		return s
	}
	cut := maxReported
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
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
			parts = append(parts, name+": "+clip(v))
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
