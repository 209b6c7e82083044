package terraform

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/recurhq/recur/migrate"
)

// need is a value an expression needs that the files do not give: name is
// what --set supplies, reason why the reader has no value for it.
type need struct{ name, reason string }

// result is an evaluated reference: its value, unknown when it has needs.
type result struct {
	val   cty.Value
	needs []need
}

// evaluator evaluates the expressions of one configuration. References
// (var.x, local.y, a resource's name) are evaluated once, on first use.
type evaluator struct {
	cfg    *config
	opts   Options
	budget *migrate.Budget
	files  *confined            // what file() reads
	values map[string]cty.Value // from var files
	memo   map[string]result
	busy   map[string]bool
	// depth is how many references are being resolved, each within the
	// one before.
	depth int
	// read holds the files file() read, by path: each is read once.
	read map[string][]byte
	// longestSet is the length of the longest --set value, what a
	// function recur does not evaluate may return.
	longestSet int
	// err is the first refusal (a file outside the configuration, a
	// limit reached): the configuration is not read on.
	err error
}

func newEvaluator(cfg *config, opts Options, values map[string]cty.Value, files *confined) *evaluator {
	e := &evaluator{cfg: cfg, opts: opts, budget: opts.Budget, files: files, values: values,
		memo: map[string]result{}, busy: map[string]bool{}, read: map[string][]byte{}}
	for _, v := range opts.Set {
		e.longestSet = max(e.longestSet, len(v))
	}
	return e
}

// fail records err, unless a refusal came first.
func (e *evaluator) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// step counts n steps of evaluation at rng, and reports whether the
// evaluation may go on.
func (e *evaluator) step(n int64, rng hcl.Range) bool {
	if err := e.budget.Step(n, rng.String()); err != nil {
		e.fail(err)
	}
	return e.err == nil
}

// attributes lists the attributes of other resources the reader takes from
// the files: arguments that Terraform keeps as the configuration writes
// them. Any other attribute may be computed or normalized by Azure.
var attributes = []string{"name", "location", "resource_group_name"}

// eval evaluates expr. When a value it needs is missing, the value is
// unknown and the needs say why; needs of a branch the value does not
// depend on are dropped. After a refusal (e.err), every value is unknown.
func (e *evaluator) eval(expr hcl.Expression) (cty.Value, []need) {
	if !e.step(1, expr.Range()) {
		return e.stopped()
	}
	text := e.cfg.text(expr.Range())
	// The text of an expression recur cannot evaluate is a Missing's name.
	if s, ok := e.opts.Set[text]; ok && text != "" {
		return cty.StringVal(s), nil
	}
	var needs []need
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}}
	seen := map[string]bool{}
	for _, t := range expr.Variables() {
		// A traversal written many times is resolved once.
		key := traversalText(t)
		if seen[key] {
			continue
		}
		seen[key] = true
		root, val, ns := e.reference(t)
		if e.err != nil {
			return e.stopped()
		}
		needs = append(needs, ns...)
		if old, ok := ctx.Variables[root]; ok {
			val = e.merge(old, val, expr.Range())
		}
		ctx.Variables[root] = val
	}
	ctx.Functions = e.functions(expr, ctx, &needs)
	if !e.bounded(expr, ctx) {
		return e.stopped()
	}
	val, diags := expr.Value(ctx)
	switch {
	case e.err != nil || !e.checked(val, expr, text):
		return e.stopped()
	case diags.HasErrors():
		return cty.DynamicVal, append(needs, need{text, "recur cannot evaluate it: " + diagText(diags)})
	case val.ContainsMarked():
		return cty.DynamicVal, append(needs, binaryNeeds(val)...)
	case val.IsWhollyKnown():
		return val, nil
	case len(needs) == 0:
		needs = append(needs, need{text, "recur cannot evaluate it"})
	}
	return cty.DynamicVal, needs
}

// stopped is the value of any expression once the reading is refused:
// unknown, for a reason no --set answers.
func (e *evaluator) stopped() (cty.Value, []need) {
	return cty.DynamicVal, []need{{"", "the reading stopped: " + e.err.Error()}}
}

// bounded bounds expr in ctx before it is evaluated (bounds.go): it may
// build no more than the budget's ExprBytes, and its steps are counted.
func (e *evaluator) bounded(expr hcl.Expression, ctx *hcl.EvalContext) bool {
	x, ok := expr.(hclsyntax.Expression)
	if !ok {
		// A value the reader made itself (a block's object from a
		// list): it holds what was evaluated already.
		return true
	}
	limits := e.budget.Limits()
	b := &bounder{ctx: ctx, limit: sat(limits.ExprBytes), set: sat(e.longestSet), sizes: map[string]sat{},
		fileBound: sat(limits.ValueBytes).times(2).plus(4)}
	_, steps := b.bound(x)
	if b.over != nil {
		e.fail(&migrate.LimitError{What: fmt.Sprintf("%s: %s could build more than %s", b.over.Range(),
			migrate.Shorten(e.cfg.text(b.over.Range())), migrate.Size(limits.ExprBytes)),
			Limit: migrate.Size(limits.ExprBytes) + " for what one expression builds"})
		return false
	}
	return e.step(int64(min(steps, satMax)), expr.Range())
}

// checked checks the size of val, the value of expr, whose text is text,
// against the budget.
func (e *evaluator) checked(val cty.Value, expr hcl.Expression, text string) bool {
	limit := e.budget.Limits().ValueBytes
	if err := e.budget.Value(fmt.Sprintf("%s: the value of %s", expr.Range(), migrate.Shorten(text)), size(val, limit)); err != nil {
		e.fail(err)
	}
	return e.err == nil
}

// diagText is the errors of diags in one line, without file positions:
// the Missing's Path and Source say where.
func diagText(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags.Errs() {
		if hd, ok := d.(*hcl.Diagnostic); ok {
			parts = append(parts, strings.TrimSuffix(hd.Summary+": "+hd.Detail, ": "))
			continue
		}
		parts = append(parts, d.Error())
	}
	return strings.Join(parts, "; ")
}

// reference resolves the value traversal t starts with (var.x, local.y,
// TYPE.NAME.ATTR, ...) and returns it in the shape t's root variable needs
// in an EvalContext; HCL applies the rest of t (an index into a list
// variable) itself.
func (e *evaluator) reference(t hcl.Traversal) (string, cty.Value, []need) {
	ref := t[:refLen(t)]
	name := traversalText(ref)
	r, ok := e.memo[name]
	if !ok {
		if e.busy[name] {
			return t.RootName(), cty.DynamicVal, []need{{name, "its value refers to itself"}}
		}
		if depth := e.budget.Limits().Depth; e.depth >= depth {
			e.fail(&migrate.LimitError{What: fmt.Sprintf("%s: references chain more than %d deep, at %s", t.SourceRange(), depth, name),
				Limit: fmt.Sprintf("%d for a chain of references", depth)})
			_, needs := e.stopped()
			return t.RootName(), cty.DynamicVal, needs
		}
		e.busy[name], e.depth = true, e.depth+1
		r = e.lookup(ref, name)
		delete(e.busy, name)
		e.depth--
		e.memo[name] = r
	}
	return t.RootName(), wrap(ref[1:], r.val), r.needs
}

// refLen is how many steps of t name one value: var.x, data.TYPE.NAME.ATTR,
// TYPE.NAME.ATTR (or TYPE.NAME[0].ATTR, in a resource with count).
func refLen(t hcl.Traversal) int {
	n := 2
	switch t.RootName() {
	case "var", "local", "path", "count", "each", "self", "terraform":
	case "module":
		n = 3
	case "data":
		n = 4
	default:
		n = 3
		for i := 2; i < len(t) && i < n; i++ {
			if _, ok := t[i].(hcl.TraverseIndex); ok {
				n++
			}
		}
	}
	return min(n, len(t))
}

// lookup finds the value of the reference ref, whose text is name.
func (e *evaluator) lookup(ref hcl.Traversal, name string) result {
	if s, ok := e.opts.Set[name]; ok {
		return e.supplied(ref, name, s)
	}
	missing := func(reason string) result { return result{cty.DynamicVal, []need{{name, reason}}} }
	attr := func(i int) string {
		if i < len(ref) {
			if a, ok := ref[i].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
		return ""
	}
	switch root := ref.RootName(); {
	case root == "path" && len(ref) == 2:
		return result{val: cty.StringVal(".")}
	case root == "var" && attr(1) != "":
		val, n := e.variable(attr(1))
		if n != nil {
			return result{val, []need{*n}}
		}
		return result{val: val}
	case root == "local" && attr(1) != "":
		expr := e.cfg.locals[attr(1)]
		if expr == nil {
			return missing("no local " + attr(1) + " is defined in the files")
		}
		val, needs := e.eval(expr)
		return result{val, needs}
	case root == "data":
		return missing("it is a data source, read from Azure when Terraform runs; recur does not read data sources")
	case root == "module":
		return missing("it is an output of a module; recur does not evaluate modules")
	case root == "count" || root == "each" || root == "self":
		return missing("it has a value only in a resource with count or for_each, which recur does not evaluate")
	case root == "var" || root == "local" || root == "path" || root == "terraform":
		return missing("recur does not evaluate it")
	}
	return e.resourceAttribute(ref, name)
}

// resourceAttribute finds the value of TYPE.NAME.ATTR in the files.
func (e *evaluator) resourceAttribute(ref hcl.Traversal, name string) result {
	missing := func(reason string) result { return result{cty.DynamicVal, []need{{name, reason}}} }
	if len(ref) < 3 {
		return missing("recur evaluates references to one attribute of a resource, not to the whole resource")
	}
	nameStep, ok := ref[1].(hcl.TraverseAttr)
	if !ok {
		return missing("recur does not evaluate it")
	}
	address := ref.RootName() + "." + nameStep.Name
	res := e.cfg.resources[address]
	if res == nil {
		return missing(address + " is not in the files read")
	}
	attrStep, ok := ref[2].(hcl.TraverseAttr)
	switch {
	case res.repeated != "":
		return missing(address + " has " + res.repeated + ", which recur does not evaluate")
	case !ok:
		return missing(address + " has no count or for_each to index")
	}
	a := res.body.Attributes[attrStep.Name]
	switch {
	case a == nil:
		return missing(fmt.Sprintf("%s does not set %s: Azure gives it when Terraform creates the resource", address, attrStep.Name))
	case !slices.Contains(attributes, attrStep.Name):
		return missing(fmt.Sprintf("recur takes only %s of other resources, as Azure may change the rest", strings.Join(attributes, ", ")))
	}
	val, needs := e.eval(a.Expr)
	return result{val, needs}
}

// supplied is the value --set gives for the reference ref.
func (e *evaluator) supplied(ref hcl.Traversal, name, s string) result {
	if ref.RootName() != "var" || len(ref) != 2 {
		return result{val: cty.StringVal(s)}
	}
	decl := e.cfg.variables[name[len("var."):]]
	val, err := decl.fromString("--set "+name, s)
	if err == nil {
		val, err = decl.conform(val)
	}
	if err != nil {
		return result{cty.DynamicVal, []need{{name, fmt.Sprintf("the --set value does not fit: %v", err)}}}
	}
	return result{val: val}
}

// traversalText writes t as Terraform does: var.x, a.b[0].c, a["k"].
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString("[" + keyText(s.Key) + "]")
		default:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func keyText(k cty.Value) string {
	switch {
	case !k.IsKnown() || k.IsNull():
		return "?"
	case k.Type() == cty.String:
		return fmt.Sprintf("%q", k.AsString())
	case k.Type() == cty.Number:
		return k.AsBigFloat().Text('f', -1)
	}
	return "?"
}

// wrap nests val in the objects and tuples the steps of a reference
// traverse, so that HCL finds val where the reference points.
func wrap(steps hcl.Traversal, val cty.Value) cty.Value {
	for i := len(steps) - 1; i >= 0; i-- {
		switch s := steps[i].(type) {
		case hcl.TraverseAttr:
			val = cty.ObjectVal(map[string]cty.Value{s.Name: val})
		case hcl.TraverseIndex:
			val = indexed(s.Key, val)
		default:
			return cty.DynamicVal
		}
	}
	return val
}

// indexed returns a value that has val at key.
func indexed(key, val cty.Value) cty.Value {
	if !key.IsKnown() || key.IsNull() {
		return cty.DynamicVal
	}
	if key.Type() == cty.String {
		return cty.ObjectVal(map[string]cty.Value{key.AsString(): val})
	}
	n, acc := key.AsBigFloat().Int64()
	if key.Type() != cty.Number || acc != big.Exact || n < 0 || n > 1000 {
		return cty.DynamicVal
	}
	elems := make([]cty.Value, n+1)
	for i := range elems {
		elems[i] = cty.DynamicVal
	}
	elems[n] = val
	return cty.TupleVal(elems)
}

// merge combines two values wrap made for the same root variable,
// counting its steps at rng. An unknown value of no type stands for
// nothing known yet.
func (e *evaluator) merge(a, b cty.Value, rng hcl.Range) cty.Value {
	if !e.step(1, rng) {
		return cty.DynamicVal
	}
	switch {
	case a.RawEquals(cty.DynamicVal):
		return b
	case b.RawEquals(cty.DynamicVal):
		return a
	case a.Type().IsObjectType() && b.Type().IsObjectType():
		attrs := a.AsValueMap()
		for k, v := range b.AsValueMap() {
			if old, ok := attrs[k]; ok {
				v = e.merge(old, v, rng)
			}
			attrs[k] = v
		}
		return cty.ObjectVal(attrs)
	case a.Type().IsTupleType() && b.Type().IsTupleType():
		as, bs := a.AsValueSlice(), b.AsValueSlice()
		if len(as) < len(bs) {
			as, bs = bs, as
		}
		out := make([]cty.Value, len(as))
		for i := range as {
			out[i] = as[i]
			if i < len(bs) {
				out[i] = e.merge(as[i], bs[i], rng)
			}
		}
		return cty.TupleVal(out)
	}
	return a
}
