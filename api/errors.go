package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.temporal.io/api/serviceerror"

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
	jobs.CodeNotFound:          http.StatusNotFound,
	jobs.CodeCollectionMissing: http.StatusNotFound,
	jobs.CodeQuotaExceeded:     http.StatusConflict,
	jobs.CodeConflict:          http.StatusConflict,
}

// writeError is the one place errors become HTTP answers. Business errors
// keep their code, message and target; anything else is a 500 whose
// details go to the log only.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var (
		apiErr   *apiError
		jobErr   *jobs.Error
		valErr   *recurrence.ValidationError
		notFound *serviceerror.NotFound
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
		status = http.StatusBadRequest
		if s, ok := statusOf[jobErr.Code]; ok {
			status = s
		}
		body = armErrorBody{Code: jobErr.Code, Message: jobErr.Message, Target: jobErr.Target}
	case errors.As(err, &valErr):
		status, body = http.StatusBadRequest, armErrorBody{Code: valErr.Code, Message: valErr.Error(), Target: valErr.Path}
	case errors.As(err, &notFound):
		status, body = http.StatusNotFound, armErrorBody{Code: jobs.CodeNotFound, Message: "the resource was not found"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		status, body = http.StatusServiceUnavailable, armErrorBody{Code: "ServiceUnavailable", Message: "Temporal did not answer in time; try again"}
	default:
		log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path,
			"requestId", c.GetString(headerRequestID), "error", err)
	}
	c.AbortWithStatusJSON(status, armError{Error: body})
}
