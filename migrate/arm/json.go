package arm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// node is a JSON value of a file, with the byte offset of its first
// byte for objects and arrays, so that a resource can be reported by its
// line; objects keep their members in the file's order, so that what a
// resource lacks is reported in the order the user reads it.
type node struct {
	off int // -1 for a scalar
	val any // string, json.Number, bool, nil, []*node or *object
}

type object struct {
	keys []string
	vals map[string]*node
}

// get returns the member named key in any letter case, as ARM reads a
// template's members, preferring the exact spelling; a nil object has
// none.
func (o *object) get(key string) (*node, bool) {
	n, _, ok := o.at(key, "")
	return n, ok
}

// at returns the member named key in any letter case and its JSON path
// within path, spelled as the file spells it.
func (o *object) at(key, path string) (*node, string, bool) {
	if o == nil {
		return nil, "", false
	}
	if n, ok := o.vals[key]; ok {
		return n, member(path, key), true
	}
	for _, k := range o.keys {
		if strings.EqualFold(k, key) {
			return o.vals[k], member(path, k), true
		}
	}
	return nil, "", false
}

// maxDepth bounds the nesting of a file's JSON: the decoder's token API
// does not, and a template nests a few levels deep.
const maxDepth = 1000

// parseJSON reads data, a template or a parameters file, with the
// comments Azure accepts in both.
func parseJSON(data []byte) (*node, error) {
	clean, err := stripComments(data)
	if err != nil {
		return nil, err
	}
	// The whole file is checked first: the token decoder below places
	// a syntax error at the token before it, or worse.
	var raw json.RawMessage
	if err := json.Unmarshal(clean, &raw); err != nil {
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, fmt.Errorf("line %d: %w", line(data, int(se.Offset)-1), err)
		}
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.UseNumber()
	return readNode(dec, 0)
}

func readNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("values nest deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return &node{off: -1, val: tok}, nil
	}
	n := &node{off: int(dec.InputOffset()) - 1}
	if d == '[' {
		var elems []*node
		for dec.More() {
			e, err := readNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			elems = append(elems, e)
		}
		n.val = elems
	} else {
		o := &object{vals: map[string]*node{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := k.(string) // the decoder allows nothing else as a key
			v, err := readNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := o.vals[key]; !dup {
				o.keys = append(o.keys, key)
			}
			o.vals[key] = v
		}
		n.val = o
	}
	_, err = dec.Token() // the closing delimiter
	return n, err
}

// stripComments blanks out // and /* */ comments outside strings,
// keeping every byte's offset so that lines are counted in the file as
// written.
func stripComments(data []byte) ([]byte, error) {
	out := slices.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return nil, fmt.Errorf("line %d: a /* comment is not closed", line(data, i))
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	return out, nil
}

// line returns the 1-based line of the byte at off.
func line(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// plain returns n as encoding/json would decode it, with integers as
// int64: the values of parameters files and of allowedValues, which ARM
// takes as they are, never as expressions.
func plain(n *node) any {
	switch v := n.val.(type) {
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = plain(v.vals[k])
		}
		return m
	case []*node:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = plain(e)
		}
		return a
	case json.Number:
		return number(v)
	}
	return n.val
}

// number returns an integer as int64, the type ARM's int parameters and
// integer literals have; any other number stays as written.
func number(n json.Number) any {
	if i, err := n.Int64(); err == nil {
		return i
	}
	return n
}

// member returns the JSON path of key within path: "a.b", or "a['b-c']"
// for a key that is not an identifier.
func member(path, key string) string {
	ident := key != ""
	for i, r := range key {
		if !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			ident = false
		}
	}
	switch {
	case ident && path == "":
		return key
	case ident:
		return path + "." + key
	}
	return path + "['" + strings.ReplaceAll(key, "'", `\'`) + "']"
}

// element returns the JSON path of element i of the array at path.
func element(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
