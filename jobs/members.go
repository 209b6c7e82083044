package jobs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/recurhq/recur/recurrence"
)

// The member names a body may use, and what encoding/json would decode
// without a word though it makes a body mean something else or nothing:
//
//   - a name the body's Go type does not know: a typo such as
//     "maxConcurentRuns" would be dropped and the default taken;
//   - a member given twice: the last one wins;
//   - null in an array: read as the element type's zero ("minutes":[null]
//     is minute 0).
//
// Every body recur reads goes through CheckMembers before it is decoded
// (the API's PUT, PATCH, backfill and preview, and recur preview), so
// that the answer names the member as the client wrote it rather than
// a consequence of its loss.
//
// The names a body may use are the JSON names of its Go type's fields,
// found by reflection as encoding/json finds them, so they follow the
// types. Azure's contract has no member those types lack: the read-only
// members a GET answers (id, type, name, properties.status, the
// certificate fields) and those recur keeps without acting on them
// (tags, transportType, maxJobOccurrence) are fields too, so that a body
// read with GET can be written back with PUT. docs/api.md lists them.
//
// Names match in any letter case, as encoding/json matches them to fields
// (with Unicode's simple folding: "ſtartTime" is startTime); "uri" and
// "URI" are one member, given twice. Maps (headers, tags, Service Bus
// properties) take any name, still one member per name in any letter
// case. A json.RawMessage (a Workflow action's input) is the user's own
// JSON, passed on as written: any name, only exact duplicates are
// ambiguous, and null is a value like any other.

// CodeUnknownProperty is a member name its object does not have.
const CodeUnknownProperty = recurrence.CodeUnknownProperty

// CheckMembers checks the JSON text data, which is to be decoded into a
// value of type t (a JSON merge patch: into the definition it patches),
// and returns an *Error at the JSON path of the first member whose name t
// does not know, of the second of two members of one name, or of a null
// in an array. Malformed JSON passes, for decoding to report.
func CheckMembers(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := walker{dec: dec}
	if err := w.value(nil, t, false); err != nil && !errors.Is(err, errMalformed) {
		return err
	}
	return nil
}

// CheckPreviewMembers is CheckMembers for the body of a preview: a whole
// job definition when it has a properties member (in any letter case),
// else a job's properties, as recurrence.PreviewJob reads it.
func CheckPreviewMembers(data []byte) error {
	t := reflect.TypeFor[Properties]()
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		for name := range top {
			if strings.EqualFold(name, "properties") {
				t = reflect.TypeFor[Job]()
			}
		}
	}
	return CheckMembers(data, t)
}

// errMalformed stops the walk at malformed JSON, which decoding reports
// in its own words.
var errMalformed = errors.New("malformed JSON")

// maxWalkDepth is encoding/json's own limit of nesting: decoding refuses
// deeper text, so the walk need not go there (nor recurse without end).
const maxWalkDepth = 10000

// walker checks the values that come from dec.
type walker struct {
	dec   *json.Decoder
	depth int
	// prune, when not nil, makes the walk gather the members of unknown
	// names instead of refusing the first, and pass over what else
	// CheckMembers refuses (PruneUnknown).
	prune *pruning
}

// value checks the value that comes next, at path, read into a t (nil:
// anything); exact is whether it is (in) the user's own JSON.
func (w *walker) value(path jsonPath, t reflect.Type, exact bool) error {
	tok, err := w.dec.Token()
	if err != nil {
		return errMalformed
	}
	t, exact = shapeOf(t, exact)
	switch tok {
	case json.Delim('{'), json.Delim('['):
		if w.depth++; w.depth > maxWalkDepth {
			return errMalformed
		}
		defer func() { w.depth-- }()
		if tok == json.Delim('{') {
			return w.object(path, t, exact)
		}
		return w.array(path, t, exact)
	case nil:
		if !exact && w.prune == nil && len(path) > 0 && path[len(path)-1].index >= 0 {
			return invalidContent(path.String(), path.String()+": null is not allowed in an array; leave the element out")
		}
	}
	return nil
}

func (w *walker) object(path jsonPath, t reflect.Type, exact bool) error {
	var known *structMembers
	if t != nil && t.Kind() == reflect.Struct {
		known = membersOf(t)
	}
	seen := map[string]string{} // the key of each name given: the name as given
	// When pruning: whether a member of the object is kept, and whether
	// one before the first kept was cut, leaving that one's comma.
	kept, cut := false, false
	for w.dec.More() {
		before := w.dec.InputOffset()
		tok, err := w.dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return errMalformed
		}
		key := name
		if !exact {
			key = foldName(name)
		}
		at := path.member(name)
		if first, dup := seen[key]; dup && w.prune == nil {
			return duplicateMember(at, first, name)
		}
		seen[key] = name
		var member reflect.Type
		switch {
		case known != nil:
			f, ok := known.byKey[foldName(name)]
			switch {
			case !ok && w.prune == nil:
				return unknownMember(path, name, known.names)
			case !ok:
				if err := w.skip(); err != nil {
					return err
				}
				w.prune.member(before, w.dec.InputOffset(), at, known.names)
				cut = true
				continue
			case cut && !kept:
				w.prune.separator(before)
			}
			kept = true
			member = f
		case t != nil && t.Kind() == reflect.Map:
			member = t.Elem()
		}
		if err := w.value(at, member, exact); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

func (w *walker) array(path jsonPath, t reflect.Type, exact bool) error {
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	for i := 0; w.dec.More(); i++ {
		if err := w.value(path.element(i), elem, exact); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return errMalformed
	}
	return nil
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// shapeOf returns what the walk knows of a value read into a t: t without
// its pointers, or nil where any member names go (an interface, or a type
// that decodes itself), and whether the value is the user's own JSON (a
// json.RawMessage), to be taken as written.
func shapeOf(t reflect.Type, exact bool) (reflect.Type, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil:
	case t == rawMessageType:
		return nil, true
	case t.Kind() == reflect.Interface, reflect.PointerTo(t).Implements(unmarshalerType):
		return nil, exact
	}
	return t, exact
}

// structMembers are the member names of a struct type.
type structMembers struct {
	names []string                // as the type spells them, in field order
	byKey map[string]reflect.Type // by foldName: the field's type
	depth map[string]int          // by foldName: how deeply embedded the field is
}

// members caches membersOf: *structMembers by reflect.Type.
var members sync.Map

// membersOf returns the JSON member names of struct type t as
// encoding/json reads them: each exported field under its json tag's
// name, or its Go name without one, but "-"; the fields of an embedded
// struct without a tag's name as the outer struct's own, the shallower
// field winning a name two share.
func membersOf(t reflect.Type) *structMembers {
	if m, ok := members.Load(t); ok {
		return m.(*structMembers)
	}
	m := &structMembers{byKey: map[string]reflect.Type{}, depth: map[string]int{}}
	m.collect(t, 0)
	members.Store(t, m)
	return m
}

func (m *structMembers) collect(t reflect.Type, depth int) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if inner := f.Type; inner.Kind() == reflect.Struct ||
				inner.Kind() == reflect.Pointer && inner.Elem().Kind() == reflect.Struct {
				if inner.Kind() == reflect.Pointer {
					inner = inner.Elem()
				}
				m.collect(inner, depth+1)
				continue
			}
		}
		if f.IsExported() {
			m.add(cmp.Or(name, f.Name), f.Type, depth)
		}
	}
}

func (m *structMembers) add(name string, t reflect.Type, depth int) {
	key := foldName(name)
	if d, ok := m.depth[key]; ok {
		if d <= depth {
			return
		}
		for i, n := range m.names {
			if foldName(n) == key {
				m.names[i] = name
			}
		}
	} else {
		m.names = append(m.names, name)
	}
	m.byKey[key], m.depth[key] = t, depth
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

func unknownMember(parent jsonPath, name string, known []string) error {
	ve := recurrence.UnknownProperty(parent.String(), name, known)
	return &Error{Code: ve.Code, Target: ve.Path, Message: ve.Error()}
}

func duplicateMember(at jsonPath, first, name string) error {
	msg := fmt.Sprintf("%s: member %q is given twice; give it once", at, name)
	if first != name {
		msg = fmt.Sprintf("%s: %q and %q are the same member (names match in any letter case); give it once", at, first, name)
	}
	return invalidContent(at.String(), msg)
}

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
