package terraform

import (
	"bytes"
	"strings"
)

// nested reports whether src, HCL's native syntax, nests deeper than
// limit anywhere, and the first line where it does, counting as the
// parser and the evaluator recurse: brackets, strings and
// interpolations, and operators, each of which HCL's tree nests one
// deeper until the next = or , of its level. It over-counts rather than
// under: the dash of an identifier (Content-Type) counts.
func nested(src []byte, limit int) (bool, int) {
	type level struct {
		kind byte // '(', '[', '{' in code; '"' a string; '$' an interpolation; 'h' a heredoc
		ops  int  // operators since the level's last = or ,
		// marker ends a heredoc.
		marker string
	}
	stack := []level{{kind: '{'}}
	depth, line := 1, 1
	push := func(l level) { stack = append(stack, l); depth++ }
	pop := func() {
		depth -= 1 + stack[len(stack)-1].ops
		stack = stack[:len(stack)-1]
	}
	for i := 0; i < len(src) && depth <= limit; i++ {
		c := src[i]
		if c == '\n' {
			line++
		}
		top := &stack[len(stack)-1]
		if top.kind == '"' || top.kind == 'h' {
			switch {
			case c == '\\' && top.kind == '"':
				i++
			case c == '"' && top.kind == '"':
				pop()
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == c:
				i++ // $${ and %%{ are literal
			case (c == '$' || c == '%') && i+1 < len(src) && src[i+1] == '{':
				i++
				push(level{kind: '$'})
			case c == '\n' && top.kind == 'h':
				end := i + 1
				for end < len(src) && src[end] != '\n' {
					end++
				}
				if strings.TrimSpace(string(src[i+1:end])) == top.marker {
					pop()
					i = end - 1
				}
			}
			continue
		}
		switch {
		case c == '#' || c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				end = len(src) - i - 2
			}
			line += bytes.Count(src[i:i+2+end], []byte("\n"))
			i += end + 3
		case c == '"':
			push(level{kind: '"'})
		case c == '<' && i+1 < len(src) && src[i+1] == '<':
			j := i + 2
			if j < len(src) && src[j] == '-' {
				j++
			}
			k := j
			for k < len(src) && (isLetter(src[k]) || src[k] == '_' || '0' <= src[k] && src[k] <= '9') {
				k++
			}
			if k == j {
				top.ops++
				depth++
				continue
			}
			push(level{kind: 'h', marker: string(src[j:k])})
			i = k - 1
		case c == '(' || c == '[' || c == '{':
			push(level{kind: c})
		case c == ')' || c == ']' || c == '}':
			if len(stack) > 1 {
				pop()
			}
		case c == ',' || c == '\n' && len(stack) == 1 ||
			c == '=' && !(i+1 < len(src) && (src[i+1] == '=' || src[i+1] == '>')) && !(i > 0 && strings.IndexByte("=!<>", src[i-1]) >= 0):
			depth -= top.ops
			top.ops = 0
		case strings.IndexByte("+-*/%!<>=&|?:", c) >= 0:
			top.ops++
			depth++
		}
	}
	return depth > limit, line
}
