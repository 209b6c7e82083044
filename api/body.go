package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/recurhq/recur/codec"
	"github.com/recurhq/recur/jobs"
)

// Reading request bodies: size, encoding and nesting limits, the read-only
// status, and JSON merge patches.

// MaxJobSize is the largest job definition accepted (Azure's limit).
const MaxJobSize = 16 * 1024

// maxDepth is how deeply a body's objects and arrays may nest. A job
// definition nests 6 levels at most, a workflow input what is left; 64 is
// also the default limit of .NET's JSON serializers.
const maxDepth = 64

// decode reads a JSON object of at most MaxJobSize bytes from the body into
// v, after passing it through the filters. Its member names are checked
// against v's type (jobs.CheckMembers). A merge patch is read with
// decodePatch: a json.RawMessage takes any name.
func decode(c *gin.Context, v any, filters ...func([]byte) []byte) error {
	return decodeAs(c, reflect.TypeOf(v), v, filters...)
}

// decodePatch reads a JSON merge patch of a T: the body as it is, whose
// member names are checked against T's, as PUT checks the whole T's.
func decodePatch[T any](c *gin.Context) (json.RawMessage, error) {
	var patch json.RawMessage
	return patch, decodeAs(c, reflect.TypeFor[T](), &patch)
}

// decodeAs is decode with the member names of shape.
func decodeAs(c *gin.Context, shape reflect.Type, v any, filters ...func([]byte) []byte) error {
	data, err := readBody(c, func(data []byte) error { return jobs.CheckMembers(data, shape) })
	if err != nil {
		return err
	}
	for _, f := range filters {
		data = f(data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return jobs.ContentError(err, reflect.TypeOf(v))
	}
	return nil
}

// readBody reads at most MaxJobSize bytes of body and checks what
// encoding/json lets through (see checkJSONText), the member names with
// members (jobs.CheckMembers or jobs.CheckPreviewMembers).
func readBody(c *gin.Context, members func([]byte) error) ([]byte, error) {
	data, err := readLimited(c, MaxJobSize)
	if err != nil {
		return nil, err
	}
	return data, checkJSONText(data, members)
}

// readLimited reads the body, of at most limit bytes. A body that says or
// turns out to be larger is refused without reading the rest of it.
func readLimited(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, tooLarge(c, limit)
	}
	data, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil {
		return nil, unreadable(err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(c, limit)
	}
	return data, nil
}

// unreadable is the answer to a body whose reading failed. It never
// quotes err, whose text names the connection's addresses ("read tcp
// 127.0.0.1:8080->127.0.0.1:51234: i/o timeout"). A body that meets the
// server's read timeout is a 400, as every route answers it and as
// docs/security.md says: net/http has cancelled the request's context by
// then, so the answer must come from here, ahead of writeError's 499 for
// a client that went away.
func unreadable(err error) *apiError {
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return invalidContent("the body did not arrive in time: send the whole request at once")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidContent("the body ended before the length its Content-Length gives")
	}
	return invalidContent("the body could not be read")
}

// tooLarge is the answer to a body over limit. The rest of the body is
// never read, so the connection cannot carry another request: the answer
// closes it.
func tooLarge(c *gin.Context, limit int64) error {
	c.Header("Connection", "close")
	return &apiError{status: http.StatusRequestEntityTooLarge, code: "RequestTooLarge",
		message: fmt.Sprintf("the body is larger than the limit of %d bytes", limit)}
}

// codecBody reads a /codec/ request's body as every other route reads
// its own, bounded (codec.MaxRequestBody) and answered in the same words (413, or 400 for a
// body that stops arriving, never the connection's addresses), before
// the codec decodes it.
func (s *Server) codecBody(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	data, err := readLimited(c, codec.MaxRequestBody)
	if err != nil {
		writeError(c, s.log, err)
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(data))
	c.Next()
}

// checkJSONText refuses what encoding/json would take but a definition
// must not hold: invalid UTF-8 (json replaces it with U+FFFD without a
// word), nesting deeper than maxDepth (json allows 10000 levels, which
// merge patches and workflow inputs would carry on), anything but an
// object at the top (a null merge patch would empty the resource), and,
// as members finds them, member names the body's type does not know,
// members given twice and null in arrays.
func checkJSONText(data []byte, members func([]byte) error) error {
	if !utf8.Valid(data) {
		return invalidContent("the body is not valid UTF-8")
	}
	if nesting(data) > maxDepth {
		return invalidContent(fmt.Sprintf("the body nests objects and arrays deeper than %d levels", maxDepth))
	}
	if top := bytes.TrimLeft(data, " \t\r\n"); len(top) > 0 && top[0] != '{' {
		return invalidContent("the body must be a JSON object")
	}
	return members(data)
}

// nesting returns how deeply the objects and arrays of a JSON text nest,
// not counting brackets inside strings. It reads malformed text too; json
// reports that.
func nesting(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		switch {
		case escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

func invalidContent(message string) *apiError {
	return invalidContentAt("", message)
}

// invalidContentAt is invalidContent at the JSON path target.
func invalidContentAt(target, message string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: jobs.CodeInvalidContent, target: target, message: message}
}

// withoutStatus drops properties.status from a job body: it is read-only,
// and clients PUT back what they GET.
func withoutStatus(data []byte) []byte {
	out, _ := dropStatus(data)
	return out
}

// dropStatus returns data without properties.status (in any letter case)
// and whether it had one. Bodies that are not JSON objects pass unchanged,
// for decode to report.
func dropStatus(data []byte) ([]byte, bool) {
	var job map[string]json.RawMessage
	if json.Unmarshal(data, &job) != nil {
		return data, false
	}
	given := false
	for name, raw := range job {
		var props map[string]json.RawMessage
		if !strings.EqualFold(name, "properties") || json.Unmarshal(raw, &props) != nil {
			continue
		}
		for p := range props {
			if strings.EqualFold(p, "status") {
				delete(props, p)
				given = true
			}
		}
		job[name], _ = json.Marshal(props)
	}
	if !given {
		return data, false
	}
	out, err := json.Marshal(job)
	if err != nil {
		return data, true
	}
	return out, true
}
