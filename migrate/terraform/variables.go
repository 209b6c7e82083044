package terraform

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/recurhq/recur/migrate"
)

// variable is a variable block.
type variable struct {
	name string
	// typ is the declared type, cty.DynamicPseudoType when there is none.
	typ cty.Type
	// hclInput says a -var or --set value is read as an HCL expression,
	// as Terraform reads one for a list, map or object variable.
	hclInput bool
	def      *cty.Value
	rng      hcl.Range
}

// declareVariable reads a variable block, whose default and type may
// build values of at most limit bytes.
func declareVariable(b *hclsyntax.Block, limit int) (*variable, error) {
	v := &variable{name: b.Labels[0], typ: cty.DynamicPseudoType, rng: b.DefRange()}
	for _, a := range b.Body.Attributes {
		if err := constant(a.Expr, limit); err != nil {
			return nil, fmt.Errorf("variable %q: %w", v.name, err)
		}
	}
	if a := b.Body.Attributes["type"]; a != nil {
		typ, err := variableType(a.Expr)
		if err != nil {
			return nil, fmt.Errorf("%s: variable %q: %w", a.SrcRange, v.name, err)
		}
		v.typ = typ
		v.hclInput = !typ.IsPrimitiveType() && typ != cty.DynamicPseudoType
	}
	if a := b.Body.Attributes["default"]; a != nil {
		def, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("variable %q: default: %w", v.name, diags)
		}
		if !def.IsNull() {
			// Terraform 0.11 took an untyped variable's kind from its
			// default: a list or map default makes -var values HCL.
			if b.Body.Attributes["type"] == nil {
				v.hclInput = !def.Type().IsPrimitiveType()
			}
			v.def = &def
		}
	}
	return v, nil
}

// variableType reads a type in either syntax: Terraform 0.11's "string",
// "list" and "map", or a 0.12 type expression.
func variableType(expr hcl.Expression) (cty.Type, error) {
	if _, ok := expr.(*hclsyntax.TemplateExpr); ok {
		s, diags := expr.Value(nil)
		if diags.HasErrors() || s.Type() != cty.String {
			return cty.NilType, fmt.Errorf("type is not a type")
		}
		switch s.AsString() {
		case "string":
			return cty.String, nil
		case "list":
			return cty.List(cty.DynamicPseudoType), nil
		case "map":
			return cty.Map(cty.DynamicPseudoType), nil
		}
		return cty.NilType, fmt.Errorf("type %q is not string, list or map", s.AsString())
	}
	typ, diags := typeexpr.TypeConstraint(expr)
	if diags.HasErrors() {
		return cty.NilType, diags
	}
	return typ, nil
}

// fromString reads a -var or --set value for v.
func (v *variable) fromString(origin, s string) (cty.Value, error) {
	if v == nil || !v.hclInput {
		return cty.StringVal(s), nil
	}
	expr, diags := hclsyntax.ParseExpression([]byte(s), origin, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	return val, nil
}

// conform converts val to v's type.
func (v *variable) conform(val cty.Value) (cty.Value, error) {
	if v == nil || v.typ == cty.DynamicPseudoType {
		return val, nil
	}
	out, err := convert.Convert(val, v.typ)
	if err != nil {
		return cty.NilVal, fmt.Errorf("not a %s: %w", v.typ.FriendlyName(), err)
	}
	return out, nil
}

// readVarFile adds the values of the var file named file, src, to values:
// a later file's value wins.
func readVarFile(file string, src []byte, limits migrate.Limits, values map[string]cty.Value) error {
	f, err := parse(file, src, limits.Depth)
	if err != nil {
		return fmt.Errorf("var file: %w", err)
	}
	body := f.Body.(*hclsyntax.Body)
	if len(body.Blocks) > 0 {
		return fmt.Errorf("%s: a var file holds only NAME = VALUE lines, not blocks", body.Blocks[0].DefRange())
	}
	for name, a := range body.Attributes {
		// A var file holds values, never references: Terraform
		// evaluates it without variables or functions too.
		if err := constant(a.Expr, limits.ValueBytes); err != nil {
			return fmt.Errorf("var file %s: %w", file, err)
		}
		val, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return fmt.Errorf("var file %s: %w", file, diags)
		}
		values[name] = val
	}
	return nil
}

// variable returns the value of var.name, or why there is none.
func (e *evaluator) variable(name string) (cty.Value, *need) {
	ref := "var." + name
	decl := e.cfg.variables[name]
	s, given := e.opts.Vars[name]
	fromFile, inFile := e.values[name]
	var val cty.Value
	var origin string
	switch {
	case given:
		var err error
		if val, err = decl.fromString("-var "+name, s); err != nil {
			return cty.DynamicVal, &need{ref, fmt.Sprintf("the -var value of %s does not parse: %v", name, err)}
		}
		origin = "-var"
	case inFile:
		val, origin = fromFile, "var file"
	case decl == nil:
		return cty.DynamicVal, &need{ref, "no variable " + name + " is declared in the files, and no -var or var file gives it"}
	case decl.def != nil:
		val, origin = *decl.def, "default"
	default:
		return cty.DynamicVal, &need{ref, "variable " + name + " has no default, and no -var or var file gives it"}
	}
	out, err := decl.conform(val)
	if err != nil {
		return cty.DynamicVal, &need{ref, fmt.Sprintf("the %s value of %s is %v", origin, name, err)}
	}
	return out, nil
}
