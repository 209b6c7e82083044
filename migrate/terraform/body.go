package terraform

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/recurhq/recur/migrate"
)

// kind is what an attribute of the azurerm schema holds.
type kind int

const (
	text kind = iota
	number
	texts
	numbers
	textMap
	block   // a nested block, at most one
	blocks  // nested blocks, any number
	ignored // computed attributes and Terraform's meta-arguments
	value   // any value: recur_properties
)

type field struct {
	kind   kind
	fields schema // of a block
}

// schema is the attributes and blocks of a resource or block.
type schema map[string]field

// withMeta adds Terraform's meta-arguments to a resource's schema: they
// say how Terraform manages the resource, nothing about the job.
func withMeta(s schema) schema {
	for _, name := range []string{"count", "for_each", "depends_on", "provider", "lifecycle", "provisioner", "connection", "timeouts"} {
		s[name] = field{kind: ignored}
	}
	return s
}

// node is a block, or an object written in a block's place (Terraform
// 0.11's retry = { ... }, monthly_occurrences = [{ ... }]): both read the
// same.
type node struct {
	path   string // of the block in the resource: "action_web", "recurrence.monthly_occurrences[1]"
	attrs  map[string]hcl.Expression
	maps   map[string][]entry // map attributes written as objects or blocks
	blocks map[string][]*node
}

// entry is one key of a map written as an object or a block.
type entry struct {
	key     string
	keyExpr hcl.Expression // when the key is not literal
	value   hcl.Expression
}

func (n *node) join(name string) string {
	if n.path == "" {
		return name
	}
	return n.path + "." + name
}

// reading is the reading of one resource: what it lacks is in missing.
type reading struct {
	ev      *evaluator
	missing []migrate.Missing
	needed  map[migrate.Missing]bool // what need added to missing
}

// need records needs as Missing values of path.
func (r *reading) need(path string, needs []need) {
	if r.needed == nil {
		r.needed = map[migrate.Missing]bool{}
	}
	for _, n := range needs {
		m := migrate.Missing{Name: n.name, Path: path, Reason: n.reason}
		if !r.needed[m] {
			r.needed[m] = true
			r.missing = append(r.missing, m)
		}
	}
}

func (r *reading) bodyNode(path string, body *hclsyntax.Body, s schema) *node {
	n := &node{path: path, attrs: map[string]hcl.Expression{}, maps: map[string][]entry{}, blocks: map[string][]*node{}}
	for _, a := range sortedAttributes(body) {
		r.item(n, s, a.Name, a.Expr)
	}
	for _, b := range body.Blocks {
		switch f, ok := s[b.Type]; {
		case ok && (f.kind == block || f.kind == blocks):
			n.blocks[b.Type] = append(n.blocks[b.Type], r.bodyNode(r.blockPath(n, b.Type, f), b.Body, f.fields))
		case ok && f.kind == textMap:
			// Terraform 0.11 took headers { Content-Type = "text" } too.
			for _, a := range sortedAttributes(b.Body) {
				n.maps[b.Type] = append(n.maps[b.Type], entry{key: a.Name, value: a.Expr})
			}
		case ok && f.kind == value:
			r.missing = append(r.missing, migrate.Missing{Path: n.join(b.Type),
				Reason: b.Type + " is an attribute: write " + b.Type + " = { ... }"})
		case b.Type == "dynamic" && len(b.Labels) == 1:
			path := n.join(b.Labels[0])
			r.missing = append(r.missing, migrate.Missing{Path: path,
				Reason: "recur does not evaluate dynamic blocks, which for_each makes: write the blocks out"})
		case !ok || f.kind != ignored:
			r.unknown(n, b.Type)
		}
	}
	return n
}

func sortedAttributes(body *hclsyntax.Body) []*hclsyntax.Attribute {
	attrs := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		attrs = append(attrs, a)
	}
	slices.SortFunc(attrs, func(a, b *hclsyntax.Attribute) int { return a.SrcRange.Start.Byte - b.SrcRange.Start.Byte })
	return attrs
}

func (r *reading) blockPath(n *node, name string, f field) string {
	if f.kind == blocks {
		return fmt.Sprintf("%s[%d]", n.join(name), len(n.blocks[name]))
	}
	return n.join(name)
}

func (r *reading) unknown(n *node, name string) {
	path := n.join(name)
	r.missing = append(r.missing, migrate.Missing{Path: path,
		Reason: "the azurerm provider has no " + name + " here, so Terraform would refuse the file: correct or remove it"})
}

// conflict records that n has both a and b, which the provider refused.
func (r *reading) conflict(n *node, a, b string) {
	path := n.join(b)
	r.missing = append(r.missing, migrate.Missing{Path: path,
		Reason: "the azurerm provider takes " + a + " or " + b + ", not both, so Terraform would refuse the file: remove one"})
}

// item adds the attribute name = expr to n.
func (r *reading) item(n *node, s schema, name string, expr hcl.Expression) {
	f, ok := s[name]
	switch {
	case !ok:
		r.unknown(n, name)
	case f.kind == ignored:
	case f.kind == block || f.kind == blocks:
		for _, items := range r.objects(n.join(name), expr) {
			child := &node{path: r.blockPath(n, name, f), attrs: map[string]hcl.Expression{}, maps: map[string][]entry{}, blocks: map[string][]*node{}}
			for _, it := range items {
				r.item(child, f.fields, it.key, it.value)
			}
			n.blocks[name] = append(n.blocks[name], child)
		}
	case f.kind == textMap:
		if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
			n.maps[name] = r.entries(obj)
			return
		}
		n.attrs[name] = expr
	default:
		n.attrs[name] = expr
	}
}

// objects reads an attribute written in a block's place: an object, a
// list of objects, or an expression whose value is one of those.
func (r *reading) objects(path string, expr hcl.Expression) [][]entry {
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		return [][]entry{r.entries(e)}
	case *hclsyntax.TupleConsExpr:
		var out [][]entry
		for _, elem := range e.Exprs {
			out = append(out, r.objects(path, elem)...)
		}
		return out
	}
	val, needs := r.ev.eval(expr)
	if len(needs) > 0 {
		r.need(path, needs)
		return nil
	}
	out, ok := objectsOf(val, expr.Range())
	if !ok {
		r.need(path, []need{{r.ev.cfg.text(expr.Range()), "it is not a block's object, nor a list of them"}})
	}
	return out
}

// objectsOf is objects for a value; ok is false when it is neither an
// object nor a list of objects.
func objectsOf(val cty.Value, rng hcl.Range) ([][]entry, bool) {
	switch ty := val.Type(); {
	case val.IsNull():
		return nil, true
	case ty.IsObjectType() || ty.IsMapType():
		var items []entry
		for k, v := range val.AsValueMap() {
			items = append(items, entry{key: k, value: hcl.StaticExpr(v, rng)})
		}
		slices.SortFunc(items, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
		return [][]entry{items}, true
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		var out [][]entry
		for _, v := range val.AsValueSlice() {
			objs, ok := objectsOf(v, rng)
			if !ok {
				return nil, false
			}
			out = append(out, objs...)
		}
		return out, true
	}
	return nil, false
}

// entries reads the items of an object. A key is literal when it is a
// name or a string without references; any other key is evaluated later,
// within the evaluation's limits.
// Terraform 0.11's unquoted Content-Type is a name: HCL 2's names may
// hold dashes, so it reads as the one key 0.11 meant, not as a
// subtraction.
func (r *reading) entries(obj *hclsyntax.ObjectConsExpr) []entry {
	var out []entry
	for _, it := range obj.Items {
		e := entry{value: it.ValueExpr}
		switch key := hcl.ExprAsKeyword(it.KeyExpr); {
		case key != "":
			e.key = key
		case len(it.KeyExpr.Variables()) == 0 && constant(it.KeyExpr, r.ev.budget.Limits().ValueBytes) == nil:
			if v, diags := it.KeyExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
				e.key = v.AsString()
				break
			}
			e.keyExpr = it.KeyExpr
		default:
			e.keyExpr = it.KeyExpr
		}
		out = append(out, e)
	}
	return out
}

// value evaluates the attribute name of n as a typ. ok is false when n
// does not set it, sets it to null, or needs what the files do not give
// (then it is Missing).
func (r *reading) value(n *node, name string, typ cty.Type) (cty.Value, bool) {
	expr := n.attrs[name]
	if expr == nil {
		return cty.NilVal, false
	}
	return r.typed(n.join(name), expr, typ)
}

func (r *reading) typed(path string, expr hcl.Expression, typ cty.Type) (cty.Value, bool) {
	val, needs := r.ev.eval(expr)
	if len(needs) > 0 {
		r.need(path, needs)
		return cty.NilVal, false
	}
	if val.IsNull() {
		return val, false
	}
	out, err := convert.Convert(val, typ)
	if err != nil && typ.IsListType() {
		out, err = convert.Convert(flatten(val), typ)
	}
	if err != nil {
		r.need(path, []need{{r.ev.cfg.text(expr.Range()), fmt.Sprintf("it is not a %s: %v", typ.FriendlyName(), err)}})
		return cty.NilVal, false
	}
	return out, !out.IsNull()
}

// flatten applies Terraform 0.11's rule that a list written in a list,
// ["${var.hours}"], is that list's elements.
func flatten(val cty.Value) cty.Value {
	ty := val.Type()
	if !(ty.IsListType() || ty.IsTupleType()) || val.LengthInt() == 0 {
		return val
	}
	var out []cty.Value
	for _, v := range val.AsValueSlice() {
		if t := v.Type(); t.IsListType() || t.IsTupleType() {
			out = append(out, v.AsValueSlice()...)
			continue
		}
		out = append(out, v)
	}
	return cty.TupleVal(out)
}

func (r *reading) str(n *node, name string) (string, bool) {
	v, ok := r.value(n, name, cty.String)
	if !ok {
		return "", false
	}
	return v.AsString(), true
}

func (r *reading) num(n *node, name string) (int64, bool) {
	v, ok := r.value(n, name, cty.Number)
	if !ok {
		return 0, false
	}
	return r.whole(n.join(name), n.attrs[name], v)
}

func (r *reading) whole(path string, expr hcl.Expression, v cty.Value) (int64, bool) {
	i, acc := v.AsBigFloat().Int64()
	if acc != big.Exact {
		r.need(path, []need{{r.ev.cfg.text(expr.Range()), "it is not a whole number"}})
		return 0, false
	}
	return i, true
}

func (r *reading) strs(n *node, name string) []string {
	v, ok := r.value(n, name, cty.List(cty.String))
	if !ok {
		return nil
	}
	var out []string
	for _, e := range v.AsValueSlice() {
		out = append(out, e.AsString())
	}
	return out
}

func (r *reading) nums(n *node, name string) []int64 {
	v, ok := r.value(n, name, cty.List(cty.Number))
	if !ok {
		return nil
	}
	var out []int64
	for _, e := range v.AsValueSlice() {
		i, ok := r.whole(n.join(name), n.attrs[name], e)
		if !ok {
			return nil
		}
		out = append(out, i)
	}
	return out
}

// strMap reads a map of strings, written as an object, a block or an
// expression.
func (r *reading) strMap(n *node, name string) map[string]string {
	path := n.join(name)
	out := map[string]string{}
	if entries, ok := n.maps[name]; ok {
		for _, e := range entries {
			key := e.key
			if e.keyExpr != nil {
				k, ok := r.typed(path, e.keyExpr, cty.String)
				if !ok {
					continue
				}
				key = k.AsString()
			}
			if v, ok := r.typed(path+"."+key, e.value, cty.String); ok {
				out[key] = v.AsString()
			}
		}
		return out
	}
	if v, ok := r.value(n, name, cty.Map(cty.String)); ok {
		for k, e := range v.AsValueMap() {
			out[k] = e.AsString()
		}
	}
	return out
}

// one returns the block name of n, nil when there is none. The provider
// allows one: a second is a Missing, not dropped unsaid.
func (r *reading) one(n *node, name string) *node {
	bs := n.blocks[name]
	if len(bs) == 0 {
		return nil
	}
	if len(bs) > 1 {
		path := n.join(name)
		r.missing = append(r.missing, migrate.Missing{Path: path,
			Reason: fmt.Sprintf("the azurerm provider takes one %s, and the file gives %d", name, len(bs))})
	}
	return bs[0]
}
