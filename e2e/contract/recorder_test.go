package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// armError is the Azure Resource Manager error envelope every 4xx and 5xx
// answer must have. The contract declares no error responses (each
// operation lists only its 2xx ones), so this schema is ARM's common
// shape, written here: {"error": {"code", "message", "target"?}}.
var armError = &schema{
	Type:     "object",
	Required: []string{"error"},
	Properties: map[string]*schema{
		"error": {
			Type:     "object",
			Required: []string{"code", "message"},
			Properties: map[string]*schema{
				"code":    {Type: "string"},
				"message": {Type: "string"},
				"target":  {Type: "string"},
			},
		},
	},
}

// exchange is one API response as the recorder saw it.
type exchange struct {
	Method, Path string
	Status       int
	Location     string     // the Location header, where a 202 names one
	Op           *operation // nil when no operation of the contract matches
	Body         []byte
	Violations   []violation
}

func (e *exchange) String() string {
	op := "no operation"
	if e.Op != nil {
		op = e.Op.ID
	}
	return fmt.Sprintf("%s %s -> %d (%s)", e.Method, e.Path, e.Status, op)
}

// conforms reports whether e is a 2xx answer of an operation that
// validated.
func (e *exchange) conforms() bool {
	return e.Op != nil && e.Status >= 200 && e.Status < 300 && len(e.Violations) == 0
}

// checkResponse validates one answer: a 2xx against the schema of its
// operation's response for that status, a 4xx or 5xx against armError.
func (sp *spec) checkResponse(method, path string, status int, header http.Header, body []byte) *exchange {
	e := &exchange{Method: method, Path: path, Status: status, Op: sp.operation(method, path), Body: body,
		Location: header.Get("Location")}
	var want *schema
	switch {
	case status >= 400:
		want = armError
	case status < 200 || status >= 300:
		return e
	case e.Op == nil:
		e.Violations = append(e.Violations, violation{"$", "operation", "no operation of the contract is " + method + " " + path})
		return e
	default:
		res, ok := e.Op.Responses[strconv.Itoa(status)]
		if !ok {
			e.Violations = append(e.Violations, violation{"$", "responses", fmt.Sprintf("%s documents status %v, not %d",
				e.Op.ID, slices.Sorted(maps.Keys(e.Op.Responses)), status)})
			return e
		}
		if res.Schema == nil {
			return e // no body is specified
		}
		want = res.Schema
	}
	if mt, _, err := mime.ParseMediaType(header.Get("Content-Type")); err != nil || !slices.Contains(sp.Produces, mt) {
		e.Violations = append(e.Violations, violation{"$", "produces",
			fmt.Sprintf("Content-Type %q is not one of %v", header.Get("Content-Type"), sp.Produces)})
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		e.Violations = append(e.Violations, violation{"$", "json", fmt.Sprintf("body is not JSON: %v: %q", err, body)})
		return e
	}
	e.Violations = append(e.Violations, sp.validate(want, doc, "$")...)
	return e
}

// recorder is an http.RoundTripper that checks and keeps every response
// it carries.
type recorder struct {
	next http.RoundTripper
	spec *spec

	mu        sync.Mutex
	exchanges []*exchange
}

type exchangeKey struct{}

// withExchange returns a context whose requests report their exchange
// into *slot.
func withExchange(ctx context.Context, slot **exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, slot)
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e := r.spec.checkResponse(req.Method, req.URL.Path, resp.StatusCode, resp.Header, body)
	r.mu.Lock()
	r.exchanges = append(r.exchanges, e)
	r.mu.Unlock()
	if slot, ok := req.Context().Value(exchangeKey{}).(**exchange); ok {
		*slot = e
	}
	return resp, nil
}

// covered returns the IDs of the operations that gave at least one
// conforming answer.
func (r *recorder) covered() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, e := range r.exchanges {
		if e.conforms() {
			out[e.Op.ID] = true
		}
	}
	return out
}
