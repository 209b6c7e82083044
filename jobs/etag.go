package jobs

import (
	"fmt"
	"strings"
)

// An ETag names a revision of a job's or a collection's definition (its
// state included, its status not): the first run ID of the resource's
// workflow, so that a resource deleted and created again never repeats
// one, and a counter the workflow bumps at each change. It tells nothing
// of the definition's content, whose secrets included. Every answer
// carries it (the ETag header and the etag field); writes with If-Match
// refuse a stale one, a PUT with If-None-Match: * creates only (recur's
// extension, ARM's convention).
func NewETag(firstRunID string, revision int) string {
	return fmt.Sprintf(`"%s-%d"`, strings.ReplaceAll(firstRunID, "-", ""), revision)
}

// Preconditions are a write's If-Match and If-None-Match headers.
type Preconditions struct {
	// IfMatch is the ETag the resource must have; "*" any, as long as it
	// exists.
	IfMatch string `json:",omitempty"`
	// IfNoneMatch is an ETag the resource must not have; "*" refuses any
	// existing resource.
	IfNoneMatch string `json:",omitempty"`
}

// Check returns a PreconditionFailed error when a resource whose ETag is
// etag (empty when it does not exist) fails p; what names the resource.
func (p Preconditions) Check(etag, what string) *Error {
	exists := etag != ""
	switch {
	case p.IfMatch == "*" && !exists,
		p.IfMatch != "" && p.IfMatch != "*" && p.IfMatch != etag:
		return &Error{Code: CodePreconditionFailed, Message: fmt.Sprintf("%s has ETag %s, not %s: read it again", what, orNone(etag), p.IfMatch)}
	case p.IfNoneMatch == "*" && exists,
		p.IfNoneMatch != "" && p.IfNoneMatch != "*" && p.IfNoneMatch == etag:
		return &Error{Code: CodePreconditionFailed, Message: fmt.Sprintf("%s exists (ETag %s) and If-None-Match refuses it", what, etag)}
	}
	return nil
}

func orNone(etag string) string {
	if etag == "" {
		return "none (it does not exist)"
	}
	return etag
}
