package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// StatusCodes are an HTTP action's successStatusCodes (recur's
// extension): codes ("201", or 201) and classes ("2xx"). JSON may give
// each as a number or a string; they are kept as strings.
type StatusCodes []string

// UnmarshalJSON takes numbers and strings alike.
func (c *StatusCodes) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(StatusCodes, len(raw))
	for i, r := range raw {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			var n json.Number
			if err := json.Unmarshal(r, &n); err != nil {
				return fmt.Errorf("successStatusCodes[%d] must be a status code or a class such as \"2xx\"", i)
			}
			s = n.String()
		}
		out[i] = s
	}
	*c = out
	return nil
}

// DefaultSuccessStatusCodes are the codes of success when a request gives
// none.
var DefaultSuccessStatusCodes = StatusCodes{"2xx"}

// MaxSuccessBodyPattern bounds a successBodyPattern; SuccessBodyLimit is
// how much of an answer's body it is matched against.
const (
	MaxSuccessBodyPattern = 1024
	SuccessBodyLimit      = 64 << 10
)

// validateSuccessRules checks successStatusCodes and successBodyPattern,
// and writes the classes in lower case.
func (r *HTTPRequest) validateSuccessRules(path string) error {
	for i, code := range r.SuccessStatusCodes {
		c := strings.ToLower(strings.TrimSpace(code))
		if !validStatusCode(c) {
			return invalidf(fmt.Sprintf("%s.successStatusCodes[%d]", path, i),
				"%q is neither a status code from 100 to 599 nor a class from 1xx to 5xx", code)
		}
		r.SuccessStatusCodes[i] = c
	}
	if r.SuccessBodyPattern == "" {
		return nil
	}
	if n := len(r.SuccessBodyPattern); n > MaxSuccessBodyPattern {
		return invalidf(path+".successBodyPattern", "successBodyPattern is %d bytes; at most %d", n, MaxSuccessBodyPattern)
	}
	if _, err := regexp.Compile(r.SuccessBodyPattern); err != nil {
		return invalidf(path+".successBodyPattern", "successBodyPattern is not an RE2 expression: %v", err)
	}
	return nil
}

func validStatusCode(c string) bool {
	if len(c) == 3 && c[0] >= '1' && c[0] <= '5' && c[1:] == "xx" {
		return true
	}
	n, err := strconv.Atoi(c)
	return err == nil && len(c) == 3 && n >= 100 && n <= 599
}

// Succeeded reports whether status is one of codes (DefaultSuccessStatusCodes
// when codes is empty).
func (codes StatusCodes) Succeeded(status int) bool {
	if len(codes) == 0 {
		codes = DefaultSuccessStatusCodes
	}
	text := strconv.Itoa(status)
	for _, c := range codes {
		if c == text || (strings.HasSuffix(c, "xx") && len(text) == 3 && text[0] == c[0]) {
			return true
		}
	}
	return false
}
