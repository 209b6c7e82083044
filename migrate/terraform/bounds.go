package terraform

import (
	"fmt"
	"math"
	"math/big"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/recurhq/recur/migrate"
)

// HCL evaluates an expression whole, out of the reader's reach: a
// template that repeats a large local a million times, or a for
// expression over a list within itself, builds its value before the
// reader sees it. So an expression is bounded before it is evaluated,
// from the sizes of the values it refers to: the bytes its value and
// every value within it may take, and the steps its evaluation may
// take. Functions check their own results as they run (limited).

// sat is a saturating count: bounds multiply, and a hostile file makes
// them overflow.
type sat int64

const satMax = sat(math.MaxInt64 / 4)

func (a sat) plus(b sat) sat {
	if a >= satMax-b {
		return satMax
	}
	return a + b
}

func (a sat) times(b sat) sat {
	if a == 0 || b == 0 {
		return 0
	}
	if a >= satMax/b {
		return satMax
	}
	return a * b
}

// size returns the bytes v takes, counting one for each element or
// member besides what it holds and a number as its digits; it stops
// counting past limit.
func size(v cty.Value, limit int) int {
	n := 0
	var walk func(v cty.Value)
	walk = func(v cty.Value) {
		v, _ = v.Unmark()
		switch ty := v.Type(); {
		case n > limit:
		case !v.IsKnown() || v.IsNull():
			n++
		case ty == cty.String:
			n += len(v.AsString())
		case ty == cty.Number:
			n += numberSize(v.AsBigFloat())
		case ty == cty.Bool:
			n += 5
		case ty.IsObjectType() || ty.IsMapType():
			for it := v.ElementIterator(); n <= limit && it.Next(); {
				k, e := it.Element()
				n += len(k.AsString()) + 1
				walk(e)
			}
		case v.CanIterateElements():
			for it := v.ElementIterator(); n <= limit && it.Next(); {
				_, e := it.Element()
				n++
				walk(e)
			}
		default:
			n++
		}
	}
	walk(v)
	return n
}

// numberSize bounds the length of n written out as cty writes a number
// as a string: every digit, 1e1000000 as a million zeros. A number is
// held in 512 bits, about 155 significant digits.
func numberSize(n *big.Float) int {
	if n.IsInf() {
		return 4
	}
	if i, acc := n.Int64(); acc == big.Exact {
		return len(big.NewInt(i).String())
	}
	exp := n.MantExp(nil)
	if exp < 0 {
		exp = -exp
	}
	return int(float64(exp)*math.Log10(2)) + 160
}

// bounder bounds the expressions of one evaluation.
type bounder struct {
	ctx   *hcl.EvalContext
	limit sat // the most bytes an expression may build
	// set is the longest value --set gives: what a function recur does
	// not evaluate returns.
	set sat
	// sizes holds the bounds of traversals already met, by their text.
	sizes map[string]sat
	// scope holds the bounds of the symbols a for or splat expression
	// binds, innermost last.
	scope []binding
	// over is the first expression whose bound is past limit.
	over hclsyntax.Expression
	// fileBound bounds what file and filebase64 return.
	fileBound sat
}

type binding struct {
	name  string // "" for a splat's item
	bound sat
}

// bound returns the bytes expr may build and the steps it may take.
func (b *bounder) bound(expr hclsyntax.Expression) (bytes, steps sat) {
	bytes, steps = b.node(expr)
	if bytes > b.limit && b.over == nil {
		b.over = expr
	}
	return bytes, steps.plus(1)
}

func (b *bounder) node(expr hclsyntax.Expression) (sat, sat) {
	switch x := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		return sat(size(x.Val, int(b.limit))), 0
	case *hclsyntax.ScopeTraversalExpr:
		return b.traversal(x.Traversal), sat(len(x.Traversal))
	case *hclsyntax.AnonSymbolExpr:
		return max(b.lookup(""), 1), 0
	case *hclsyntax.RelativeTraversalExpr:
		n, s := b.bound(x.Source)
		return n, s.plus(sat(len(x.Traversal)))
	case *hclsyntax.ParenthesesExpr:
		return b.bound(x.Expression)
	case *hclsyntax.TemplateWrapExpr:
		return b.bound(x.Wrapped)
	case *hclsyntax.TemplateJoinExpr:
		return b.bound(x.Tuple)
	case *hclsyntax.TemplateExpr:
		return b.sum(x.Parts, 0)
	case *hclsyntax.TupleConsExpr:
		return b.sum(x.Exprs, 1)
	case *hclsyntax.ObjectConsExpr:
		var n, s sat
		for _, it := range x.Items {
			kn, ks := b.bound(it.KeyExpr)
			vn, vs := b.bound(it.ValueExpr)
			n, s = n.plus(kn).plus(vn).plus(1), s.plus(ks).plus(vs)
		}
		return n, s
	case *hclsyntax.ObjectConsKeyExpr:
		if name := hcl.ExprAsKeyword(x.Wrapped); name != "" && !x.ForceNonLiteral {
			return sat(len(name)), 0
		}
		return b.bound(x.Wrapped)
	case *hclsyntax.IndexExpr:
		cn, cs := b.bound(x.Collection)
		_, ks := b.bound(x.Key)
		return cn, cs.plus(ks)
	case *hclsyntax.SplatExpr:
		sn, ss := b.bound(x.Source)
		b.scope = append(b.scope, binding{"", sn})
		_, es := b.bound(x.Each)
		b.scope = b.scope[:len(b.scope)-1]
		return sn, ss.plus(sn.times(es))
	case *hclsyntax.ForExpr:
		return b.forExpr(x)
	case *hclsyntax.ConditionalExpr:
		_, cs := b.bound(x.Condition)
		tn, ts := b.bound(x.TrueResult)
		fn, fs := b.bound(x.FalseResult)
		return max(tn, fn), cs.plus(ts).plus(fs)
	case *hclsyntax.BinaryOpExpr:
		ln, ls := b.bound(x.LHS)
		rn, rs := b.bound(x.RHS)
		if x.Op.Type == cty.Number {
			// A product or a quotient has about as many digits as
			// its operands together.
			return ln.plus(rn).plus(2), ls.plus(rs)
		}
		return 5, ls.plus(rs)
	case *hclsyntax.UnaryOpExpr:
		n, s := b.bound(x.Val)
		return n.plus(1), s
	case *hclsyntax.FunctionCallExpr:
		return b.call(x)
	}
	// ExprSyntaxError, and any kind HCL adds: as large as a value may be.
	return b.limit, 1
}

// sum bounds expressions whose values are put together, each taking
// extra bytes besides its own.
func (b *bounder) sum(exprs []hclsyntax.Expression, extra sat) (sat, sat) {
	var n, s sat
	for _, e := range exprs {
		en, es := b.bound(e)
		n, s = n.plus(en).plus(extra), s.plus(es)
	}
	return n, s
}

// forExpr bounds a for expression: an element of its collection is no
// larger than the collection, and it has no more elements than bytes.
func (b *bounder) forExpr(x *hclsyntax.ForExpr) (sat, sat) {
	cn, cs := b.bound(x.CollExpr)
	if x.KeyVar != "" {
		b.scope = append(b.scope, binding{x.KeyVar, cn})
	}
	b.scope = append(b.scope, binding{x.ValVar, cn})
	var each, eachSteps sat
	for _, e := range []hclsyntax.Expression{x.KeyExpr, x.ValExpr, x.CondExpr} {
		if e != nil {
			n, s := b.bound(e)
			each, eachSteps = each.plus(n), eachSteps.plus(s)
		}
	}
	b.scope = b.scope[:len(b.scope)-1]
	if x.KeyVar != "" {
		b.scope = b.scope[:len(b.scope)-1]
	}
	return cn.times(each.plus(1)), cs.plus(cn.times(eachSteps.plus(1)))
}

// lookup returns the bound of a symbol a for or splat expression binds,
// -1 when none does.
func (b *bounder) lookup(name string) sat {
	for i := len(b.scope) - 1; i >= 0; i-- {
		if b.scope[i].name == name {
			return b.scope[i].bound
		}
	}
	return -1
}

// traversal bounds the value t refers to: the value itself when the
// evaluation context holds it, else its root, which holds it.
func (b *bounder) traversal(t hcl.Traversal) sat {
	if n := b.lookup(t.RootName()); n >= 0 {
		return n
	}
	text := traversalText(t)
	if n, ok := b.sizes[text]; ok {
		return n
	}
	v, diags := t.TraverseAbs(b.ctx)
	if diags.HasErrors() {
		v = b.ctx.Variables[t.RootName()]
	}
	n := sat(1)
	if v != cty.NilVal {
		n = sat(size(v, int(b.limit)))
	}
	b.sizes[text] = n
	return n
}

// call bounds a function call by what the function makes of its
// arguments, as estimate does with their values.
func (b *bounder) call(x *hclsyntax.FunctionCallExpr) (sat, sat) {
	args := make([]sat, len(x.Args))
	var s sat
	for i, a := range x.Args {
		var as sat
		args[i], as = b.bound(a)
		s = s.plus(as)
	}
	s = s.plus(1)
	switch x.Name {
	case "file", "filebase64":
		return b.fileBound, s
	case "format":
		if len(x.Args) > 0 {
			if lit, ok := x.Args[0].(*hclsyntax.TemplateExpr); ok && lit.IsStringLiteral() {
				v, _ := lit.Value(nil)
				return formatBound(v.AsString(), args[1:]), s
			}
		}
		return b.limit, s
	}
	if _, ok := stdFunctions[x.Name]; ok || x.Name == "base64encode" || x.Name == "base64decode" {
		return linearBound(x.Name, args), s
	}
	return b.set.plus(1), s
}

// linearBound bounds what a function recur evaluates, other than file,
// filebase64 and format, makes of arguments of the given bounds. Case
// mapping and Unicode normalization may make a string up to three times
// longer.
func linearBound(name string, args []sat) sat {
	var all sat
	for _, a := range args {
		all = all.plus(a)
	}
	switch name {
	case "join":
		if len(args) == 0 {
			return 0
		}
		// The separator goes between elements, no more of them than
		// bytes in the lists.
		return args[0].times(all - args[0]).plus(all)
	case "jsonencode":
		return all.times(6).plus(2)
	case "base64encode":
		return all.times(2).plus(4)
	}
	return all.times(3).plus(16)
}

// formatBound bounds what format makes of the format f and arguments of
// the given bounds: each verb may take any argument, padded to its width
// and precision.
func formatBound(f string, args []sat) sat {
	var most sat
	for _, a := range args {
		most = max(most, a)
	}
	n := sat(len(f))
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			continue
		}
		var width sat
		for ; i < len(f) && !isLetter(f[i]); i++ {
			if c := f[i]; '0' <= c && c <= '9' {
				width = width.times(10).plus(sat(c - '0'))
			} else {
				n = n.plus(width)
				width = 0
			}
		}
		n = n.plus(width).plus(most.times(6)).plus(16)
	}
	return n
}

// isLetter reports whether c is an ASCII letter: what ends a verb of
// cty's format, and what a heredoc's marker is made of.
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// estimate bounds the size of what the function name returns for args,
// before it runs, as the bounder does for its call; -1 when the
// function's result is only checked once it has one.
func estimate(name string, args []cty.Value, limit int) int {
	sizes := make([]sat, len(args))
	for i, a := range args {
		sizes[i] = sat(size(a, limit))
	}
	switch name {
	case "format":
		if len(args) == 0 || !args[0].IsKnown() || args[0].IsNull() || args[0].Type() != cty.String {
			return -1
		}
		f, _ := args[0].Unmark()
		return int(min(formatBound(f.AsString(), sizes[1:]), satMax))
	case "join":
		// join's bound counts the bytes of its lists for their
		// elements: their number is known here.
		var elems sat
		for _, a := range args[1:] {
			if a.IsKnown() && !a.IsNull() && a.CanIterateElements() {
				elems = elems.plus(sat(a.LengthInt()))
			}
		}
		var all sat
		for _, s := range sizes {
			all = all.plus(s)
		}
		if len(sizes) == 0 {
			return 0
		}
		return int(sizes[0].times(elems).plus(all))
	case "file", "filebase64":
		return -1
	}
	return int(linearBound(name, sizes))
}

// constant bounds expr, which refers to nothing and is evaluated without
// a context (a variable's default, a var file's value, a literal key), to
// limit bytes.
func constant(expr hcl.Expression, limit int) error {
	x, ok := expr.(hclsyntax.Expression)
	if !ok {
		return nil
	}
	b := &bounder{ctx: &hcl.EvalContext{}, limit: sat(limit), sizes: map[string]sat{}, fileBound: sat(limit)}
	b.bound(x)
	if b.over != nil {
		return &migrate.LimitError{What: fmt.Sprintf("%s could build more than %s", b.over.Range(), migrate.Size(int64(limit))),
			Limit: migrate.Size(int64(limit)) + " for a value"}
	}
	return nil
}
