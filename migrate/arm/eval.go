package arm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/recurhq/recur/migrate"
)

// unknown is a value the reader cannot know. It stands where the value
// would be, so that a variable with one unknown member still gives its
// others, and it says what the user supplies instead.
type unknown struct{ problems []problem }

// problem is one thing a value lacks: name is what --set supplies.
type problem struct{ name, reason string }

func unknownf(name, format string, args ...any) *unknown {
	return &unknown{[]problem{{name, fmt.Sprintf(format, args...)}}}
}

// unknownIn merges the problems of the unknowns among vals, nil when
// there are none: a function of an unknown is unknown for the same
// reasons, and the user learns all of them at once. Each problem is
// kept once, or variables that double each other would double them.
func unknownIn(vals ...any) *unknown {
	var u *unknown
	var seen map[problem]bool
	for _, v := range vals {
		if w, ok := v.(*unknown); ok {
			if u == nil {
				u, seen = &unknown{}, map[problem]bool{}
			}
			for _, p := range w.problems {
				if !seen[p] {
					seen[p] = true
					u.problems = append(u.problems, p)
				}
			}
		}
	}
	return u
}

// scope is the object of resourceGroup() or subscription(): what recur
// import is told of the deployment's scope, by lower-case member name
// ("" when not told).
type scope struct {
	fn      string
	members map[string]string
}

func (s *scope) member(name, text string) any {
	v, ok := s.members[strings.ToLower(name)]
	switch {
	case !ok:
		return unknownf(text, "%s.%s is not known to recur import", s.fn, name)
	case v == "":
		return unknownf(text, "%s.%s is not given to recur import: give %s", s.fn, name, scopeFlags[s.fn+"."+strings.ToLower(name)])
	}
	return v
}

// scopeFlags are recur import's flags that give the deployment's scope.
var scopeFlags = map[string]string{
	"resourceGroup().name": "--resource-group", "resourceGroup().location": "--location",
	"resourceGroup().id": "--subscription and --resource-group", "subscription().subscriptionid": "--subscription",
	"subscription().id": "--subscription",
}

// evaluator evaluates the expression of one template string.
type evaluator struct {
	t *template
	// text is the template string, brackets included: what the user
	// supplies with --set when the reader cannot evaluate it.
	text string
}

func (e *evaluator) eval(x expr) any {
	if !e.t.step(e.text) {
		return e.t.stopped()
	}
	switch x := x.(type) {
	case strLit:
		return string(x)
	case intLit:
		return int64(x)
	case *access:
		return e.access(x)
	case *call:
		return e.call(x)
	}
	panic(fmt.Sprintf("arm: unexpected expression %T", x))
}

// errorf is an expression the template gets wrong (a type, an index),
// which ARM would refuse to deploy: the user supplies its value.
func (e *evaluator) errorf(format string, args ...any) *unknown {
	return unknownf(e.text, "the expression cannot be evaluated: "+format, args...)
}

func (e *evaluator) access(a *access) any {
	x, key := e.eval(a.x), e.eval(a.key)
	if u := unknownIn(x, key); u != nil {
		return u
	}
	switch x := x.(type) {
	case map[string]any:
		k, ok := key.(string)
		if !ok {
			return e.errorf("an object's member is named by a string, not %s", typeName(key))
		}
		if v, ok := lookup(x, k); ok {
			return v
		}
		return e.errorf("the object has no member %q", k)
	case []any:
		i, ok := key.(int64)
		if !ok {
			return e.errorf("an array's element is chosen by an int, not %s", typeName(key))
		}
		if i < 0 || i >= int64(len(x)) {
			return e.errorf("index %d is out of the array's %d elements", i, len(x))
		}
		return x[i]
	case *scope:
		if k, ok := key.(string); ok {
			return x.member(k, e.text)
		}
	}
	return e.errorf("%s has no members", typeName(x))
}

// lookup returns m's member named k in any letter case, as ARM reads
// members, preferring the exact spelling and then the first in sorted
// order, so that the answer does not depend on map order.
func lookup(m map[string]any, k string) (any, bool) {
	if v, ok := m[k]; ok {
		return v, true
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if strings.EqualFold(key, k) {
			return m[key], true
		}
	}
	return nil, false
}

// function is a template function the reader evaluates: the least and
// most arguments it takes (max -1 for any number) and what it does with
// evaluated, known arguments.
type function struct {
	min, max int
	do       func(e *evaluator, args []any) (any, error)
}

// functions are the template functions the reader evaluates, by
// lower-case name. The others depend on Azure (reference, listKeys,
// resourceId, uniqueString, utcNow) or are not needed by Scheduler
// templates yet; their values come from the user. It is set by init:
// parameters and variables evaluate expressions, which call functions.
var functions map[string]function

func init() {
	functions = map[string]function{
		"parameters":    {1, 1, func(e *evaluator, a []any) (any, error) { return named(a[0], e.t.parameter) }},
		"variables":     {1, 1, func(e *evaluator, a []any) (any, error) { return named(a[0], e.variable) }},
		"concat":        {1, -1, concat},
		"format":        {1, -1, format},
		"tolower":       {1, 1, func(_ *evaluator, a []any) (any, error) { return mapString(a[0], strings.ToLower) }},
		"toupper":       {1, 1, func(_ *evaluator, a []any) (any, error) { return mapString(a[0], strings.ToUpper) }},
		"true":          {0, 0, func(*evaluator, []any) (any, error) { return true, nil }},
		"false":         {0, 0, func(*evaluator, []any) (any, error) { return false, nil }},
		"resourcegroup": {0, 0, func(e *evaluator, _ []any) (any, error) { return e.t.resourceGroup(), nil }},
		"subscription":  {0, 0, func(e *evaluator, _ []any) (any, error) { return e.t.subscription(), nil }},
	}
}

func (e *evaluator) call(c *call) any {
	fn, ok := functions[strings.ToLower(c.name)]
	if !ok {
		return unknownf(e.text, "%s", notEvaluated(c.name))
	}
	if len(c.args) < fn.min || fn.max >= 0 && len(c.args) > fn.max {
		return e.errorf("%s takes %s, not %d", c.name, arity(fn), len(c.args))
	}
	args := make([]any, len(c.args))
	for i, a := range c.args {
		args[i] = e.eval(a)
	}
	if u := unknownIn(args...); u != nil {
		return u
	}
	v, err := fn.do(e, args)
	switch {
	case e.t.err != nil:
		return e.t.stopped()
	case err != nil:
		return e.errorf("%s: %v", c.name, err)
	case !e.t.checked(e.text, "what "+c.name+" returns", v):
		return e.t.stopped()
	}
	return v
}

func arity(fn function) string {
	switch {
	case fn.max < 0:
		return fmt.Sprintf("at least %d arguments", fn.min)
	case fn.max == 0:
		return "no arguments"
	case fn.max == 1:
		return "1 argument"
	}
	return fmt.Sprintf("%d to %d arguments", fn.min, fn.max)
}

func named(arg any, get func(string) any) (any, error) {
	name, ok := arg.(string)
	if !ok {
		return nil, fmt.Errorf("the name is %s, not a string", typeName(arg))
	}
	return get(name), nil
}

func mapString(arg any, f func(string) string) (any, error) {
	s, ok := arg.(string)
	if !ok {
		return nil, fmt.Errorf("the argument is %s, not a string", typeName(arg))
	}
	return f(s), nil
}

// concat joins strings, or arrays; ARM takes no mix of the two, nor
// numbers. What it would make is measured before it is made.
func concat(e *evaluator, args []any) (any, error) {
	_, arrays := args[0].([]any)
	for i, a := range args {
		_, isArray := a.([]any)
		_, isString := a.(string)
		switch {
		case arrays && !isArray:
			return nil, fmt.Errorf("argument %d is %s; concat joins arrays or strings, not both", i+1, typeName(a))
		case !arrays && !isString:
			return nil, fmt.Errorf("argument %d is %s; concat joins strings or arrays", i+1, typeName(a))
		}
	}
	if limit := e.t.budget.Limits().ValueBytes; migrate.ValueSize(args, limit) > limit {
		e.t.tooLarge(e.text, "what concat returns")
		return nil, nil
	}
	if arrays {
		var out []any
		for _, a := range args {
			out = append(out, a.([]any)...)
		}
		return out, nil
	}
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a.(string))
	}
	return b.String(), nil
}

// format is .NET's composite formatting, which ARM's format is: {0} is
// the first argument after the format, {{ and }} are braces. Alignment
// and format specifiers ({0,8}, {0:D2}) are refused: their .NET meaning
// for ARM's values is not worth guessing.
func format(e *evaluator, args []any) (any, error) {
	f, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("the format is %s, not a string", typeName(args[0]))
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(f) && f[i+1] == c:
			b.WriteByte(c)
			i++
			continue
		case c == '}':
			return nil, fmt.Errorf("the format has a } at %d that closes nothing", i)
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("the format has a { at %d that is not closed", i)
		}
		item := f[i+1 : i+end]
		n, err := strconv.Atoi(strings.TrimRight(item, " "))
		if err != nil || n < 0 || strings.HasPrefix(item, "+") {
			if strings.ContainsAny(item, ",:") {
				return nil, fmt.Errorf("format item {%s} has an alignment or format specifier, which recur import does not evaluate", item)
			}
			return nil, fmt.Errorf("format item {%s} is not {index}", item)
		}
		if n+1 >= len(args) {
			return nil, fmt.Errorf("format item {%d} has no argument", n)
		}
		switch a := args[n+1].(type) {
		case string:
			b.WriteString(a)
		case int64:
			b.WriteString(strconv.FormatInt(a, 10))
		default:
			return nil, fmt.Errorf("format item {%d} is %s; recur import formats strings and ints", n, typeName(a))
		}
		if b.Len() > e.t.budget.Limits().ValueBytes {
			e.t.tooLarge(e.text, "what format returns")
			return nil, nil
		}
		i += end
	}
	return b.String(), nil
}

// typeName names v's type as ARM's parameter types do.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an int"
	case json.Number:
		return "a number that is not an int"
	case bool:
		return "a bool"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	case *scope:
		return "an object of the deployment's scope"
	}
	return fmt.Sprintf("a %T", v)
}
