package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/recurhq/recur/jobs"
)

// Members and elements that encoding/json decodes without a word but that
// make a body mean two things: a member given twice (the last one wins),
// and null in an array (read as the element type's zero: "minutes":[null]
// is minute 0).
//
// Member names match in any letter case, as encoding/json matches them to
// a definition's fields (with Unicode's simple folding: "ſtartTime" is
// startTime); "uri" and "URI" are one member, given twice. A workflow
// action's input is the user's own JSON, passed on as written: there only
// exact duplicates are ambiguous, and null is a value like any other.

// pathSegment is a member name or, for an array element, its index.
type pathSegment struct {
	name  string
	index int // -1 for a member
}

// jsonPath is where a value sits in a body.
type jsonPath []pathSegment

func (p jsonPath) member(name string) jsonPath {
	return append(p[:len(p):len(p)], pathSegment{name: name, index: -1})
}

func (p jsonPath) element(i int) jsonPath {
	return append(p[:len(p):len(p)], pathSegment{index: i})
}

// String writes p as the API's targets do: properties.recurrence.schedule.minutes[0].
func (p jsonPath) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString(s.name)
		}
	}
	return b.String()
}

// isWorkflowInput says whether p is the path of a workflow action's input.
func isWorkflowInput(p jsonPath) bool {
	names := make([]string, len(p))
	for i, s := range p {
		if s.index >= 0 {
			return false
		}
		names[i] = s.name
	}
	return jobs.IsWorkflowInput(names)
}

// foldName returns a key equal for two names exactly when strings.EqualFold
// says they are: each rune replaced by the smallest of its case-folding
// orbit.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}

// errMalformed stops the walk at malformed JSON, which json.Unmarshal
// reports in its own words.
var errMalformed = errors.New("malformed JSON")

// checkMembers refuses a member given twice (in any letter case outside
// workflow inputs) and null in an array outside workflow inputs, naming
// the path of the second member or of the null. Call it on text no deeper
// than maxDepth: it recurses.
func checkMembers(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, nil, false); err != nil && !errors.Is(err, errMalformed) {
		return err
	}
	return nil
}

// walkValue checks the value that comes next in dec, at path; exact is
// whether it is (in) a workflow input.
func walkValue(dec *json.Decoder, path jsonPath, exact bool) error {
	tok, err := dec.Token()
	if err != nil {
		return errMalformed
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, path, exact)
	case json.Delim('['):
		return walkArray(dec, path, exact)
	case nil:
		if !exact && len(path) > 0 && path[len(path)-1].index >= 0 {
			return invalidContentAt(path.String(), path.String()+": null is not allowed in an array; leave the element out")
		}
	}
	return nil
}

func walkObject(dec *json.Decoder, path jsonPath, exact bool) error {
	seen := map[string]string{} // the key of each name given: the name as given
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return errMalformed
		}
		key := name
		if !exact {
			key = foldName(name)
		}
		at := path.member(name)
		if first, dup := seen[key]; dup {
			return duplicateMember(at, first, name)
		}
		seen[key] = name
		if err := walkValue(dec, at, exact || isWorkflowInput(at)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

func walkArray(dec *json.Decoder, path jsonPath, exact bool) error {
	for i := 0; dec.More(); i++ {
		if err := walkValue(dec, path.element(i), exact); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

func duplicateMember(at jsonPath, first, name string) error {
	msg := fmt.Sprintf("%s: member %q is given twice; give it once", at, name)
	if first != name {
		msg = fmt.Sprintf("%s: %q and %q are the same member (names match in any letter case); give it once", at, first, name)
	}
	return invalidContentAt(at.String(), msg)
}
