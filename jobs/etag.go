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

// maxETagHeader is the longest If-Match or If-None-Match taken: recur's
// ETags are under 50 characters; a longer header is refused without
// being quoted back.
const maxETagHeader = 128

// ParsePreconditions reads a write's If-Match and If-None-Match into the
// one form Check compares: "*", or a single ETag. If-None-Match compares
// weakly (RFC 9110), so W/"x" there is "x": a PATCH naming the current
// ETag weakly fails as the strong one does. If-Match compares strongly: a
// weak ETag stays as sent and never matches. A header Check cannot
// compare (not an ETag in double quotes, a list of them, or longer than
// any ETag) is refused rather than left unchecked, which would let the
// write through.
// A refusal is a *Error.
func ParsePreconditions(ifMatch, ifNoneMatch string) (Preconditions, error) {
	var p Preconditions
	var err *Error
	if p.IfMatch, err = parseETagHeader("If-Match", ifMatch, false); err != nil {
		return Preconditions{}, err
	}
	if p.IfNoneMatch, err = parseETagHeader("If-None-Match", ifNoneMatch, true); err != nil {
		return Preconditions{}, err
	}
	return p, nil
}

// parseETagHeader reads the header named name: "" when absent, "*", or
// one entity-tag, W/ dropped when weak says so.
func parseETagHeader(name, v string, weak bool) (string, *Error) {
	v = strings.TrimSpace(v)
	if len(v) > maxETagHeader {
		return "", &Error{Code: CodeInvalidRequest, Target: name, Message: fmt.Sprintf(
			"%s is %d characters long, longer than any ETag (at most %d): send the ETag of the resource's last answer, or *",
			name, len(v), maxETagHeader)}
	}
	if v == "" || v == "*" {
		return v, nil
	}
	tag := v
	if weak {
		tag = strings.TrimPrefix(tag, "W/")
	}
	if !entityTag(strings.TrimPrefix(tag, "W/")) {
		return "", &Error{Code: CodeInvalidRequest, Target: name, Message: fmt.Sprintf(
			"%s %s is not one ETag in double quotes, as the ETag header gives it (\"0123abcd-3\"), nor *", name, v)}
	}
	return tag, nil
}

// entityTag reports whether s is a strong entity-tag of RFC 9110: any
// visible characters but the double quote, in double quotes.
func entityTag(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for _, b := range []byte(s[1 : len(s)-1]) {
		if b <= 0x20 || b == '"' || b == 0x7f {
			return false
		}
	}
	return true
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
