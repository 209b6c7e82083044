// Package activities holds the actions a job run performs, as Temporal
// activities: methods of one struct whose fields are their dependencies.
package activities

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/recurhq/recur/egress"
	"github.com/recurhq/recur/jobs"
)

// Activities are the actions of job runs. Workflows reference them through
// a nil *Activities.
type Activities struct {
	// Client sends every outbound call: HTTP actions, token requests,
	// storage queue and Service Bus sends (and, with their certificates,
	// client-certificate actions). New makes it an egress.Policy's client,
	// which refuses the destinations the policy refuses; nil is the strict
	// policy's (public addresses only). Another client is not guarded.
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
	// DataConverter decodes what the job workflows write to their memos
	// (JobPresence): the worker's client's, encryption included; nil is
	// Temporal's default.
	DataConverter converter.DataConverter
	// WorkflowTargets are where Workflow actions may start workflows; the
	// zero value allows none.
	WorkflowTargets jobs.WorkflowTargets
	// FinishedRetention is how long a completed or faulted job is kept
	// before it deletes itself; 0 keeps it until DELETE.
	FinishedRetention time.Duration
	// Attempts holds the first attempts of occurrences that outlast the
	// local activity starting them; nil makes that local activity decline,
	// and every attempt an activity of its own.
	Attempts *Attempts
	// Tracer, when set, makes each occurrence a trace (package tracing):
	// its span, each attempt's and each HTTP call's, whose request
	// carries the call's W3C trace context (traceparent, tracestate). nil
	// traces nothing and sends no trace context but a job's own headers.
	Tracer trace.Tracer

	// Caches of outbound authentication; their zero values are ready.
	tokens tokenCache
	certs  certClients
}

// New returns Activities whose outbound calls reach only what policy
// allows, that keep finished jobs jobs.DefaultFinishedRetention, and whose
// first attempts wait DefaultActionBudget for an answer before they are
// handed off; each attempt's time limit comes with its input.
func New(policy egress.Policy) *Activities {
	return &Activities{Client: policy.Client(), Authority: DefaultAuthority, FinishedRetention: jobs.DefaultFinishedRetention,
		Attempts: NewAttempts(DefaultActionBudget)}
}

// FinishedJobRetention is a local activity: it tells a job workflow the
// worker's FinishedRetention. As an activity, what it answered is in the
// job's history, so a replay on a worker configured otherwise agrees.
func (a *Activities) FinishedJobRetention(context.Context) (time.Duration, error) {
	return a.FinishedRetention, nil
}

// dataConverter returns a.DataConverter, or Temporal's default when it is
// nil.
func (a *Activities) dataConverter() converter.DataConverter {
	if a.DataConverter == nil {
		return converter.GetDefaultDataConverter()
	}
	return a.DataConverter
}

// strictClient is the client of Activities without one.
var strictClient = egress.Policy{}.Client()

// client returns a.Client, or the strict policy's client when it is nil.
func (a *Activities) client() *http.Client {
	if a.Client == nil {
		return strictClient
	}
	return a.Client
}

// Error types of failed attempts: how the job workflow tells them apart.
const (
	ErrTypeHTTPStatus    = "HttpStatus"    // an answer whose status is no success
	ErrTypeSuccessBody   = "SuccessBody"   // an answer whose body fails successBodyPattern
	ErrTypeTransport     = "HttpTransport" // no answer at all
	ErrTypeInvalidAction = "InvalidAction"
	// ErrTypeRefused is a call the egress policy refused: its destination
	// (an address it resolved to, a redirect's) or its scheme.
	ErrTypeRefused = "DestinationRefused"
)

// refusal returns the failure of an attempt whose call failed with err
// because the egress policy refused it, nil when it failed otherwise. It
// is not retryable: the next attempt would be refused as well. The
// message says what was refused and why, after what (which names the
// call without secrets); a redirect's destination, which the target
// chose, is redacted of secrets.
func refusal(what string, err error, out jobs.HTTPResponse, secrets []string) error {
	refused := egress.AsRefused(err)
	if refused == nil {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(what+": "+redactSecrets(refused.Error(), secrets), ErrTypeRefused, nil, out)
}

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

// HTTP performs a job's HTTP(S) request. A 2xx answer (or one of the
// request's successStatusCodes, whose body matches its
// successBodyPattern) succeeds; any other status fails the attempt, retryably for 408, 429 and 5xx (the rule of
// Azure Logic Apps, Scheduler's successor) and for transport errors: no
// answer within the attempt's timeout, or one whose body breaks off. At
// most jobs.MaxResponseBody of the body is kept; a bigger one is cut.
func (a *Activities) HTTP(ctx context.Context, in jobs.HTTPRequestInput) (_ jobs.HTTPResponse, err error) {
	ctx, logger, end := a.begin(ctx, in.Key, in.OccurrenceID, in.ActionName)
	defer func() { end(err) }()
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
	// Validation admits only http and https; a job stored before it did
	// must not reach another scheme either.
	if err := refusal(in.Request.Method+" "+redactURL(in.Request.URI), egress.CheckScheme(req.URL), out, nil); err != nil {
		return out, err
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
	secrets = append(secrets, userinfoSecrets(req.URL)...)
	atOrigin := slices.Collect(maps.Keys(in.Request.Headers))
	if in.Request.Signing != nil {
		// A signed call is for its target: the origin a redirect leads to
		// could replay it there within the signature's tolerance.
		atOrigin = append(atOrigin, jobs.SigningHeaders...)
	}
	client = keepHeadersAtOrigin(client, atOrigin)
	req, endCall := a.traceCall(req)
	defer func() { endCall(out.StatusCode, err) }()
	// Signed last, as the call is sent: the timestamp is the attempt's.
	if err := sign(req, in, time.Now()); err != nil {
		return out, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidAction, nil, out)
	}

	// A target that hangs, resets, answers garbage or redirects in a loop
	// (when redirects are followed, the 10th is refused) gives no answer:
	// all alike are retryable transport failures, as the target may be
	// fixed by the next attempt. A destination the egress policy refuses
	// stays refused.
	resp, err := client.Do(req)
	if err != nil {
		if rErr := refusal(in.Request.Method+" "+redactURL(in.Request.URI), err, out, secrets); rErr != nil {
			return out, rErr
		}
		return out, transportError(in.Request, describeTransport(ctx, err, limit, secrets), out)
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body, in.Request.SuccessBodyPattern != "")
	// A target may echo what it got (credentials included) into history,
	// and into the failure's message through its status line.
	kept := body[:min(len(body), jobs.MaxResponseBody)]
	out.StatusCode, out.Status, out.Body = resp.StatusCode, clip(redactSecrets(resp.Status, secrets)), redactSecrets(string(kept), secrets)
	out.Headers = redactSecrets(headersOfNote(resp.Header), secrets)
	logger.Info("http action", "status", resp.StatusCode)
	if err != nil {
		// An answer whose body breaks off (the target stalls past the
		// limit or resets) is not one the target finished: a 200 OK then
		// is no success, and the attempt fails as if nothing had come.
		return out, transportError(in.Request, out.Status+", then reading the body: "+describeTransport(ctx, err, limit, secrets), out)
	}
	if err := statusError(in.Request, out); err != nil {
		return out, err
	}
	return out, bodyError(in.Request, body, out)
}

// statusError is the failure of an attempt answered out.Status: nil for a
// status among the request's successStatusCodes (2xx by default);
// retryable for retryableStatus, and for a status the request's own codes
// refuse.
func statusError(r jobs.HTTPRequest, out jobs.HTTPResponse) error {
	if r.SuccessStatusCodes.Succeeded(out.StatusCode) {
		return nil
	}
	msg := fmt.Sprintf("%s %s: %s", r.Method, redactURL(r.URI), out.Status)
	if len(r.SuccessStatusCodes) > 0 {
		msg += ", not one of successStatusCodes " + strings.Join(r.SuccessStatusCodes, ",")
		return temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	if isRedirect(out.StatusCode) {
		// The client gave the redirect back rather than follow it: the
		// egress policy follows none unless told to.
		msg += " (a redirect, not followed)"
	}
	if retryableStatus(out.StatusCode) {
		return temporal.NewApplicationError(msg, ErrTypeHTTPStatus, out)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeHTTPStatus, nil, out)
}

// bodyError is the retryable failure of an attempt whose answer's body
// does not match the request's successBodyPattern; nil without one.
func bodyError(r jobs.HTTPRequest, body []byte, out jobs.HTTPResponse) error {
	if r.SuccessBodyPattern == "" {
		return nil
	}
	re, err := regexp.Compile(r.SuccessBodyPattern)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("successBodyPattern: "+err.Error(), ErrTypeInvalidAction, nil, out)
	}
	if re.Match(body) {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("%s %s: %s, but the body does not match successBodyPattern",
		r.Method, redactURL(r.URI), out.Status), ErrTypeSuccessBody, out)
}

// describingHeaders are the headers a job may set that only say what its
// body is and what answer it wants: they follow a redirect anywhere. Any
// other header of the job may hold a secret (an API key, a token; nothing
// tells which), and stays with the origin of the job's URI.
var describingHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "Content-Encoding", "Content-Language", "Content-Type", "User-Agent"}

// keepHeadersAtOrigin returns c, or when the call carries headers (names)
// that may be secret, a client like c whose redirects drop them once the
// chain has left the origin of the job's URI. c's own CheckRedirect (the
// egress policy's) drops Authorization and cookies there.
func keepHeadersAtOrigin(c *http.Client, names []string) *http.Client {
	var secret []string
	for _, name := range names {
		if !slices.ContainsFunc(describingHeaders, func(d string) bool { return strings.EqualFold(d, name) }) {
			secret = append(secret, name)
		}
	}
	if len(secret) == 0 {
		return c
	}
	check := c.CheckRedirect
	kept := *c
	kept.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if check != nil {
			if err := check(req, via); err != nil {
				return err
			}
		} else if len(via) >= 10 { // http.Client's default
			return errors.New("stopped after 10 redirects")
		}
		if egress.LeftOrigin(req, via) {
			for _, name := range secret {
				req.Header.Del(name)
			}
		}
		return nil
	}
	return &kept
}

// readBody reads at most jobs.MaxResponseBody of an answer's body
// (jobs.SuccessBodyLimit when matched against a successBodyPattern), then
// drains up to 1 MiB more so that the connection may be reused; a bigger
// body is cut there (closing it drops the connection) rather than read to
// its end. The error is the first part's: what history keeps.
func readBody(r io.Reader, matched bool) ([]byte, error) {
	limit := int64(jobs.MaxResponseBody)
	if matched {
		limit = jobs.SuccessBodyLimit
	}
	body, err := io.ReadAll(io.LimitReader(r, limit))
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
// err is ctx's (the attempt's) running out of time ("context deadline
// exceeded" says neither what nor how long). An error that came first
// keeps its words though the deadline passed before they are told: a busy
// worker may take that long. So do the transport's own timeouts (TLS
// handshake, say). The words of a malformed answer are the target's,
// redacted of secrets.
func describeTransport(ctx context.Context, err error, limit time.Duration, secrets []string) string {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", limit)
	}
	return clip(redactSecrets(withoutURL(err).Error(), secrets))
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

// isRedirect says whether code is a redirect http.Client follows.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// userinfoSecrets are the password and Basic credentials of u's user
// info, which Go's client sends as an Authorization header, and the user
// name when there is no password: then it is a token. New definitions
// are refused user info (jobs); a stored one that has it still runs, and
// these stay out of history as Basic authentication's do.
func userinfoSecrets(u *url.URL) []string {
	if u.User == nil {
		return nil
	}
	user := u.User.Username()
	if pass, ok := u.User.Password(); ok {
		return []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
	}
	return []string{user, base64.StdEncoding.EncodeToString([]byte(user + ":"))}
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
