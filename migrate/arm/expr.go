package arm

import (
	"fmt"
	"strconv"
	"strings"
)

// The syntax of ARM template expressions, the text between a string's
// outer brackets:
//
//	expression = primary { "." identifier | "[" expression "]" }
//	primary    = string | integer | call
//	call       = identifier { "." identifier } "(" [ expression { "," expression } ] ")"
//	string     = "'" { character | "''" } "'"
//	integer    = [ "-" ] digit { digit }
//
// A dotted name before "(" is a user-defined function (namespace.name):
// a bare identifier is never a value, so the dot cannot be a member
// access there.

// expr is a parsed expression: strLit, intLit, *call, *access.
type expr any

type (
	strLit string
	intLit int64
	call   struct {
		name string
		args []expr
	}
	// access is x.name (key a strLit) or x[key].
	access struct {
		x, key expr
	}
)

type tokenKind int

const (
	tEOF tokenKind = iota
	tIdent
	tString
	tInt
	tPunct // one of ( ) [ ] , .
)

type token struct {
	kind tokenKind
	text string // the identifier, the string's value, the integer, the punctuation
	pos  int
}

// lex splits src into tokens.
func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("()[],.", c) >= 0:
			toks = append(toks, token{tPunct, src[i : i+1], i})
			i++
		case c == '\'':
			s, n, err := lexString(src[i:])
			if err != nil {
				return nil, fmt.Errorf("at %d: %w", i, err)
			}
			toks = append(toks, token{tString, s, i})
			i += n
		case c == '-' || isDigit(c):
			j := i + 1
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			if j == i+1 && c == '-' {
				return nil, fmt.Errorf("at %d: - is not followed by a digit", i)
			}
			toks = append(toks, token{tInt, src[i:j], i})
			i = j
		case isLetter(c):
			j := i + 1
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tIdent, src[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("at %d: unexpected character %q", i, rune(c))
		}
	}
	return append(toks, token{tEOF, "", len(src)}), nil
}

// lexString reads the single-quoted string at the start of s, where two
// quotes in a row stand for one, and returns its value and its length
// in s.
func lexString(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), i + 1, nil
	}
	return "", 0, fmt.Errorf("a string is not closed")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetter(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// maxNesting bounds how deeply calls and indexes nest, so that a
// hostile template cannot exhaust the stack.
const maxNesting = 100

type parser struct {
	toks  []token
	i     int
	depth int
}

// parseExpr parses src, an expression without its outer brackets.
func parseExpr(src string) (expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	x, err := p.expression()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("at %d: unexpected %q after the expression", t.pos, t.text)
	}
	return x, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) punct(s string) bool {
	if t := p.peek(); t.kind == tPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(s string) error {
	if !p.punct(s) {
		return p.unexpected("expected " + s)
	}
	return nil
}

func (p *parser) unexpected(want string) error {
	t := p.peek()
	if t.kind == tEOF {
		return fmt.Errorf("at %d: %s, found the end", t.pos, want)
	}
	return fmt.Errorf("at %d: %s, found %q", t.pos, want, t.text)
}

func (p *parser) expression() (expr, error) {
	if p.depth++; p.depth > maxNesting {
		return nil, fmt.Errorf("the expression nests deeper than %d", maxNesting)
	}
	defer func() { p.depth-- }()
	x, err := p.primary()
	for err == nil {
		switch {
		case p.punct("."):
			if p.peek().kind != tIdent {
				return nil, p.unexpected("expected a member name after .")
			}
			x = &access{x, strLit(p.next().text)}
		case p.punct("["):
			var key expr
			if key, err = p.expression(); err == nil {
				err = p.expect("]")
			}
			x = &access{x, key}
		default:
			return x, nil
		}
	}
	return nil, err
}

func (p *parser) primary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return strLit(t.text), nil
	case tInt:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("at %d: integer %s is out of range", t.pos, t.text)
		}
		return intLit(n), nil
	case tIdent:
		return p.call(t.text)
	case tPunct:
		p.i--
	}
	return nil, p.unexpected("expected a string, an integer or a function call")
}

func (p *parser) call(name string) (expr, error) {
	for p.peek().kind == tPunct && p.peek().text == "." && p.toks[p.i+1].kind == tIdent {
		name += "." + p.toks[p.i+1].text
		p.i += 2
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	c := &call{name: name}
	if p.punct(")") {
		return c, nil
	}
	for {
		arg, err := p.expression()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, arg)
		if p.punct(")") {
			return c, nil
		}
		if err := p.expect(","); err != nil {
			return nil, p.unexpected("expected , or )")
		}
	}
}
