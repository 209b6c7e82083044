package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
	"github.com/recurhq/recur/store"
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
	jobs.CodeNotTaken:           http.StatusServiceUnavailable,
}

// errTemporalUnreachable answers requests while Temporal is known to be
// down: the answer of an error that store.Unreachable reports.
var errTemporalUnreachable = &apiError{status: http.StatusServiceUnavailable, code: "ServiceUnavailable",
	message: "Temporal is unreachable or did not answer in time; try again later"}

// keyTemporalDown marks, in a request's context, that Temporal was
// unreachable while serving it.
const keyTemporalDown = "recur.temporalDown"

// retryAfterSeconds is the Retry-After of 503 answers.
const retryAfterSeconds = "5"

// unnamedResource is what a 404 names when Temporal's NotFound reaches
// writeError without a caller having said which workflow it was about.
const unnamedResource = "the resource"

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
	case errors.Is(err, store.ErrQuotaLeased):
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable", Message: store.ErrQuotaLeased.Error()}
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
	case store.WorkflowMissing(err):
		status, body = jobAnswer(jobs.NotFound(unnamedResource))
	case store.Unreachable(err):
		// Temporal is down or overloaded: the client may retry, and
		// whileTemporalUp answers the next requests at once until it is
		// back.
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: errTemporalUnreachable.code,
			Message: errTemporalUnreachable.message}
		c.Set(keyTemporalDown, true)
		log.WarnContext(c.Request.Context(), "temporal did not answer in time", "method", c.Request.Method,
			"path", c.Request.URL.Path, "error", err)
	case store.Refused(err):
		// Temporal refuses for now (a rate limit, an overloaded host, a
		// busy workflow) but is up: retry later, and do not mark it down
		// for the other requests.
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable",
			Message: "Temporal is refusing requests for now (rate limit or overload); try again later"}
		log.WarnContext(c.Request.Context(), "temporal refused the request for now", "method", c.Request.Method,
			"path", c.Request.URL.Path, "error", err)
	case store.UnmappedSearchAttribute(err):
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

// maxEchoed is how much of a value from the request an error message
// quotes: enough to recognise it, never a whole 5,000-character header
// sent back, nor the log lines it would fill.
const maxEchoed = 64

// clipValue is v to quote in an error message (jobs.Clip).
func clipValue(v string) string { return jobs.Clip(v, maxEchoed) }
