package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

// armError is the body of every error answer: Azure Resource Manager's
// envelope.
type armError struct {
	Error armErrorBody `json:"error"`
}

type armErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Target  string `json:"target,omitempty"`
}

// apiError is an error the API itself decides the status of.
type apiError struct {
	status  int
	code    string
	message string
	target  string
}

func (e *apiError) Error() string { return e.message }

func abort(c *gin.Context, status int, code, message string) {
	c.AbortWithStatusJSON(status, armError{Error: armErrorBody{Code: code, Message: message}})
}

// statusOf maps business error codes to HTTP statuses.
var statusOf = map[string]int{
	jobs.CodeNotFound:           http.StatusNotFound,
	jobs.CodeCollectionMissing:  http.StatusNotFound,
	jobs.CodeQuotaExceeded:      http.StatusConflict,
	jobs.CodeConflict:           http.StatusConflict,
	jobs.CodePreconditionFailed: http.StatusPreconditionFailed,
	jobs.CodeBaseChanged:        http.StatusConflict,
}

// errTemporalUnreachable answers requests while Temporal is known to be
// down.
var errTemporalUnreachable = serviceerror.NewUnavailable("temporal is unreachable")

// retryAfterSeconds is the Retry-After of 503 answers.
const retryAfterSeconds = "5"

// unreachable reports whether err says Temporal could not be reached or did
// not answer in time, as opposed to an answer.
func unreachable(err error) bool {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
	)
	if errors.As(err, &unavailable) || errors.As(err, &deadline) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	switch grpcstatus.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

// refused reports whether Temporal answered ResourceExhausted: a namespace
// or host rate limit, an overloaded host or a busy workflow. The same code
// from gRPC itself (a message too large) is not a refusal to retry.
func refused(err error) bool {
	var re *serviceerror.ResourceExhausted
	return errors.As(err, &re)
}

// transient reports whether err is an answer the SDK retries: Temporal
// unavailable, or refusing for a moment (refused).
func transient(err error) bool {
	var unavailable *serviceerror.Unavailable
	return errors.As(err, &unavailable) || grpcstatus.Code(err) == codes.Unavailable || refused(err)
}

// statusClientClosedRequest is the status of a request whose client went
// away before its answer: nginx's 499, for the access log.
const statusClientClosedRequest = 499

// writeError is the one place errors become HTTP answers. Business errors
// keep their code, message and target; anything else is a 500 whose
// details go to the log only.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var (
		apiErr *apiError
		jobErr *jobs.Error
		valErr *recurrence.ValidationError
	)
	body := armErrorBody{Code: "InternalServerError", Message: "the request failed; see the server log"}
	status := http.StatusInternalServerError
	if e, ok := jobs.FromApplicationError(err); ok {
		jobErr = e
	}
	switch {
	case errors.As(err, &apiErr):
		status, body = apiErr.status, armErrorBody{Code: apiErr.code, Message: apiErr.message, Target: apiErr.target}
	case jobErr != nil || errors.As(err, &jobErr):
		status, body = jobAnswer(jobErr)
	case errors.As(err, &valErr):
		status, body = http.StatusBadRequest, armErrorBody{Code: valErr.Code, Message: valErr.Error(), Target: valErr.Path}
	case c.Request.Context().Err() != nil:
		// The client went away (or the server is shutting down): what
		// failed is the wait for Temporal, which says nothing of Temporal,
		// and nobody reads the answer. Business errors come first: net/http
		// cancels the context of a request whose body read timed out too,
		// and that client waits for its 400.
		status, body = statusClientClosedRequest, armErrorBody{Code: "ClientClosedRequest", Message: "the client closed the request"}
		log.InfoContext(c.Request.Context(), "the client went away before the answer", "method", c.Request.Method,
			"path", c.Request.URL.Path, "error", err)
	case workflowMissing(err):
		status, body = jobAnswer(jobs.NotFound(unnamedResource))
	case unreachable(err):
		// Temporal is down or overloaded: the client may retry, and the
		// gate answers the next requests at once until it is back.
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable",
			Message: "Temporal is unreachable or did not answer in time; try again later"}
		c.Set(keyTemporalDown, true)
	case refused(err):
		// Temporal refuses for now (a rate limit, an overloaded host, a
		// busy workflow) but is up: retry later, and leave the gate open
		// for the other requests.
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable",
			Message: "Temporal is refusing requests for now (rate limit or overload); try again later"}
		log.WarnContext(c.Request.Context(), "temporal refused the request for now", "method", c.Request.Method,
			"path", c.Request.URL.Path, "error", err)
	case unmappedSearchAttribute(err):
		// A frontend whose namespace cache predates recur's search
		// attributes (Options.Ready saw another one, or the attributes were
		// registered by hand a moment ago): its next refresh cures it.
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable",
			Message: "Temporal does not know recur's search attributes yet; try again later"}
		log.WarnContext(c.Request.Context(), "temporal does not map recur's search attributes yet", "method", c.Request.Method,
			"path", c.Request.URL.Path, "error", err)
	default:
		log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method, "path", c.Request.URL.Path,
			"error", err)
	}
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", retryAfterSeconds)
	}
	c.AbortWithStatusJSON(status, armError{Error: body})
}

// jobAnswer is the status and body of a business error: its code's status
// (400 for a code statusOf does not list), code, message and target.
func jobAnswer(e *jobs.Error) (int, armErrorBody) {
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusBadRequest
	}
	return status, armErrorBody{Code: e.Code, Message: e.Message, Target: e.Target}
}

// unmappedSearchAttribute reports whether err is the frontend refusing a
// search attribute its namespace cache has no mapping for. The server
// says so in an InvalidArgument's message only
// (namespace.CustomSearchAttributesMapper), so the message is what there
// is to match.
func unmappedSearchAttribute(err error) bool {
	var invalid *serviceerror.InvalidArgument
	return errors.As(err, &invalid) && strings.Contains(invalid.Error(), "has no mapping defined for")
}

// maxEchoed is how much of a value from the request an error message
// quotes: enough to recognise it, never a whole 5,000-character header
// sent back, nor the log lines it would fill.
const maxEchoed = 64

// clipValue is v to quote in an error message (jobs.Clip).
func clipValue(v string) string { return jobs.Clip(v, maxEchoed) }
