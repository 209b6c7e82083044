package arm

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/recurhq/recur/migrate"
)

// template is what a template's expressions are evaluated in: its
// parameters and variables, each evaluated once, when first used.
type template struct {
	opts   *Options
	files  map[string]fileValue // the parameters files' values, by lower-case name
	params map[string]*param    // by lower-case name, as ARM names are
	vars   map[string]*variable // likewise
	// varCopy is whether variables has a copy member, whose loops define
	// variables recur import does not evaluate.
	varCopy bool
	// depth is how many parameters and variables are being evaluated,
	// each within the one before.
	depth int
	// file names the template in refusals.
	file string
	// keyPrefix is what the --set key of a place in the template starts
	// with: "FILE:" when the import reads several templates, whose paths
	// are alike, else "".
	keyPrefix string
	budget    *migrate.Budget
	// err is the first refusal, a limit reached: the template is not
	// read on.
	err error
}

type evalState int

const (
	pending evalState = iota
	evaluating
	done
)

type param struct {
	name  string
	typ   string // lower-case; "" when not declared
	decl  *object
	state evalState
	val   any
}

type variable struct {
	name  string
	n     *node
	state evalState
	val   any
}

// maxRefDepth bounds how deeply parameters and variables may refer to
// each other: far more than templates do, far less than the stack holds.
const maxRefDepth = 1000

func newTemplate(root *object, opts *Options, files map[string]fileValue) *template {
	t := &template{opts: opts, files: files, params: map[string]*param{}, vars: map[string]*variable{}, budget: opts.Budget}
	if t.budget == nil {
		t.budget = migrate.NewBudget(migrate.DefaultLimits)
	}
	if n, ok := root.get("parameters"); ok {
		if o, ok := n.val.(*object); ok {
			for _, k := range o.keys {
				p := &param{name: k}
				if d, ok := o.vals[k].val.(*object); ok {
					p.decl = d
					if ty, ok := d.get("type"); ok {
						p.typ, _ = ty.val.(string)
						p.typ = strings.ToLower(p.typ)
					}
				}
				t.params[strings.ToLower(k)] = p
			}
		}
	}
	if n, ok := root.get("variables"); ok {
		if o, ok := n.val.(*object); ok {
			for _, k := range o.keys {
				if strings.EqualFold(k, "copy") {
					t.varCopy = true
					continue
				}
				t.vars[strings.ToLower(k)] = &variable{name: k, n: o.vals[k]}
			}
		}
	}
	return t
}

// fail records err, unless a refusal came first.
func (t *template) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// where names the template string text in a refusal.
func (t *template) where(text string) string {
	return t.file + ": " + migrate.Shorten(text)
}

// step counts a step of evaluating the template string text, and reports
// whether the evaluation may go on.
func (t *template) step(text string) bool {
	if err := t.budget.Step(1, t.where(text)); err != nil {
		t.fail(err)
	}
	return t.err == nil
}

// checked checks v, what evaluating text made, against the budget.
func (t *template) checked(text, what string, v any) bool {
	limit := t.budget.Limits().ValueBytes
	if err := t.budget.Value(t.where(text)+": "+what, migrate.ValueSize(v, limit)); err != nil {
		t.fail(err)
	}
	return t.err == nil
}

// tooLarge refuses what evaluating text was about to make.
func (t *template) tooLarge(text, what string) {
	limit := int64(t.budget.Limits().ValueBytes)
	t.fail(&migrate.LimitError{What: fmt.Sprintf("%s: %s would be larger than %s", t.where(text), what, migrate.Size(limit)),
		Limit: migrate.Size(limit) + " for a value"})
}

// stopped is the value of any expression once the reading is refused:
// unknown, for a reason no --set answers.
func (t *template) stopped() *unknown {
	return &unknown{[]problem{{"", "the reading stopped: " + t.err.Error()}}}
}

// key returns the --set key of the template string at path (Missing.Key).
func (t *template) key(path string) string { return t.keyPrefix + path }

// expression returns the expression of a template string, without its
// brackets, and whether s is one: "[[" starts a literal.
func expression(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' && s[1] != '[' {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// literal returns the value of a template string that is not an
// expression: "[[x]" is "[x]".
func literal(s string) string {
	if strings.HasPrefix(s, "[[") && strings.HasSuffix(s, "]") {
		return s[1:]
	}
	return s
}

// evalString returns the value of a template string: the literal, the
// value --set gives for its exact text, or the value of its expression.
func (t *template) evalString(s string) any {
	src, ok := expression(s)
	if !ok {
		return literal(s)
	}
	if v, ok := t.opts.Set[s]; ok {
		return v
	}
	x, err := parseExpr(src)
	if err != nil {
		return unknownf(s, "the expression does not parse: %v", err)
	}
	return (&evaluator{t: t, text: s}).eval(x)
}

// evalNode returns the value of n with every template string in it
// evaluated; unknowns stay where they are. A null member is dropped, as
// ARM treats it as absent.
func (t *template) evalNode(n *node) any {
	switch v := n.val.(type) {
	case string:
		return t.evalString(v)
	case *object:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			if x := t.evalNode(v.vals[k]); x != nil {
				m[k] = x
			}
		}
		return m
	case []*node:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = t.evalNode(e)
		}
		return a
	case json.Number:
		return number(v)
	}
	return n.val
}

// set returns the --set value for the parameter named name, in any
// letter case, preferring the exact spelling.
func (t *template) set(name string) (string, bool) {
	if v, ok := t.opts.Set[name]; ok {
		return v, true
	}
	for _, k := range slices.Sorted(maps.Keys(t.opts.Set)) {
		if strings.EqualFold(k, name) {
			return t.opts.Set[k], true
		}
	}
	return "", false
}

func (t *template) enter(what string) (*unknown, func()) {
	if t.depth >= maxRefDepth {
		return unknownf(what, "parameters and variables refer to each other more than %d deep", maxRefDepth), func() {}
	}
	t.depth++
	return nil, func() { t.depth-- }
}

// parameter returns the value of the parameter named name.
func (t *template) parameter(name string) any {
	p, ok := t.params[strings.ToLower(name)]
	if !ok {
		if v, ok := t.set(name); ok {
			return v
		}
		return unknownf(name, "the template declares no parameter %s", name)
	}
	switch p.state {
	case done:
		return p.val
	case evaluating:
		return unknownf(p.name, "the defaultValue of parameter %s refers to itself", p.name)
	}
	u, leave := t.enter(p.name)
	defer leave()
	if u != nil {
		return u
	}
	p.state = evaluating
	p.val, p.state = t.resolve(p), done
	return p.val
}

// resolve finds p's value: --set, else the last parameters file that
// gives it, else its defaultValue.
func (t *template) resolve(p *param) any {
	if s, ok := t.set(p.name); ok {
		v, err := convert(s, p.typ)
		if err != nil {
			return unknownf(p.name, "--set %s: %v", p.name, err)
		}
		return t.check(p, v, "its --set value")
	}
	if f, ok := t.files[strings.ToLower(p.name)]; ok {
		if f.reference != "" {
			return unknownf(p.name, "%s takes it from %s, which recur import does not read", f.file, f.reference)
		}
		return t.check(p, f.value, "its value in "+f.file)
	}
	if d, ok := p.decl.get("defaultValue"); ok {
		v := t.evalNode(d)
		if !t.checked(p.name, "the defaultValue of parameter "+p.name, v) {
			return t.stopped()
		}
		return t.check(p, v, "its defaultValue")
	}
	return unknownf(p.name, "the parameter has no value: no --set, parameters file or defaultValue gives one")
}

// check returns v, the value of p from what, if it has p's type and is
// among p's allowedValues. Messages never quote the value of a secure
// parameter.
func (t *template) check(p *param, v any, what string) any {
	if _, ok := v.(*unknown); ok {
		return v
	}
	if !hasType(v, p.typ) {
		return unknownf(p.name, "parameter %s is declared %s, but %s is %s", p.name, p.typ, what, typeName(v))
	}
	allowed, ok := p.decl.get("allowedValues")
	if !ok {
		return v
	}
	list, _ := plain(allowed).([]any)
	for _, a := range list {
		if equal(a, v) {
			return v
		}
	}
	if s, ok := v.(string); ok && p.typ == "string" {
		return unknownf(p.name, "%s %q is not one of the parameter's allowedValues", what, s)
	}
	return unknownf(p.name, "%s is not one of the parameter's allowedValues", what)
}

// equal compares values as ARM compares allowed values: strings in any
// letter case, the rest exactly.
func equal(a, b any) bool {
	if s, ok := a.(string); ok {
		t, ok := b.(string)
		return ok && strings.EqualFold(s, t)
	}
	return reflect.DeepEqual(a, b)
}

func hasType(v any, typ string) bool {
	switch typ {
	case "string", "securestring":
		_, ok := v.(string)
		return ok
	case "int":
		_, ok := v.(int64)
		return ok
	case "bool":
		_, ok := v.(bool)
		return ok
	case "object", "secureobject":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true // an undeclared or unknown type: ARM's validation is not recur import's
}

// convert converts a --set value to the declared type typ. The message
// never quotes s: it may be a secret.
func convert(s, typ string) (any, error) {
	switch typ {
	case "int":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the value is not an int, the parameter's type")
		}
		return n, nil
	case "bool":
		switch {
		case strings.EqualFold(s, "true"):
			return true, nil
		case strings.EqualFold(s, "false"):
			return false, nil
		}
		return nil, fmt.Errorf("the value is not true or false, the parameter's type being bool")
	case "object", "secureobject", "array":
		root, err := parseJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("the value is not JSON (%s the parameter's type): %v", typ, err)
		}
		v := plain(root)
		if !hasType(v, typ) {
			return nil, fmt.Errorf("the value is %s, not %s, the parameter's type", typeName(v), typ)
		}
		return v, nil
	}
	return s, nil
}

// variable returns the value of the variable named name.
func (e *evaluator) variable(name string) any {
	t := e.t
	v, ok := t.vars[strings.ToLower(name)]
	switch {
	case !ok && t.varCopy:
		return unknownf(e.text, "variable %s is not defined, unless a copy loop of variables defines it, which recur import does not evaluate", name)
	case !ok:
		return unknownf(e.text, "the template defines no variable %s", name)
	case v.state == done:
		return v.val
	case v.state == evaluating:
		return unknownf(e.text, "variable %s refers to itself", v.name)
	}
	u, leave := t.enter(e.text)
	defer leave()
	if u != nil {
		return u
	}
	v.state = evaluating
	v.val, v.state = t.evalNode(v.n), done
	if !t.checked(e.text, "the value of variable "+v.name, v.val) {
		v.val = t.stopped()
	}
	return v.val
}

func (t *template) resourceGroup() *scope {
	id := ""
	if t.opts.Subscription != "" && t.opts.ResourceGroup != "" {
		id = "/subscriptions/" + t.opts.Subscription + "/resourceGroups/" + t.opts.ResourceGroup
	}
	return &scope{"resourceGroup()", map[string]string{"name": t.opts.ResourceGroup, "location": t.opts.Location, "id": id}}
}

func (t *template) subscription() *scope {
	id := ""
	if t.opts.Subscription != "" {
		id = "/subscriptions/" + t.opts.Subscription
	}
	return &scope{"subscription()", map[string]string{"subscriptionid": t.opts.Subscription, "id": id}}
}
