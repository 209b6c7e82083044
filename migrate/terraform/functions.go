package terraform

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/recurhq/recur/migrate"
)

// stdFunctions are the functions of Terraform's that cty's stdlib
// implements with Terraform's own meaning, among those that scheduler
// configurations use. replace (Terraform's takes /regex/), coalesce
// (Terraform's skips empty strings) and element are not among them.
var stdFunctions = map[string]function.Function{
	"lower":      stdlib.LowerFunc,
	"upper":      stdlib.UpperFunc,
	"trimspace":  stdlib.TrimSpaceFunc,
	"format":     stdlib.FormatFunc,
	"join":       stdlib.JoinFunc,
	"concat":     stdlib.ConcatFunc,
	"lookup":     stdlib.LookupFunc,
	"merge":      stdlib.MergeFunc,
	"jsonencode": stdlib.JSONEncodeFunc,
}

// functions returns the functions expr may call: stdFunctions, file,
// filebase64, base64encode and base64decode, each limited, and for any
// other function expr calls a stand-in whose value is unknown unless
// --set gives the call's text. file and filebase64 add to needs the
// files that are not there.
func (e *evaluator) functions(expr hcl.Expression, ctx *hcl.EvalContext, needs *[]need) map[string]function.Function {
	rng := expr.Range()
	fns := map[string]function.Function{
		"file":         e.limited("file", e.fileFunc("file", rng, needs), rng),
		"filebase64":   e.limited("filebase64", e.fileFunc("filebase64", rng, needs), rng),
		"base64encode": e.limited("base64encode", base64Encode, rng),
		"base64decode": e.limited("base64decode", base64Decode, rng),
	}
	for name, f := range stdFunctions {
		fns[name] = e.limited(name, f, rng)
	}
	node, ok := expr.(hclsyntax.Node)
	if !ok {
		return fns
	}
	var names []string
	calls := map[string][]*hclsyntax.FunctionCallExpr{}
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		c, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok {
			return nil
		}
		if _, known := fns[c.Name]; !known {
			if calls[c.Name] == nil {
				names = append(names, c.Name)
			}
			calls[c.Name] = append(calls[c.Name], c)
		}
		return nil
	})
	for _, name := range names {
		for _, c := range calls[name] {
			text := e.cfg.text(c.Range())
			if _, ok := e.opts.Set[text]; !ok {
				*needs = append(*needs, need{text, "recur does not evaluate the function " + name})
			}
		}
		fns[name] = e.standIn(calls[name], ctx)
	}
	return fns
}

// limited is f, the function name, called in the expression at rng,
// counting each call as a step and refusing to make a value larger than
// the budget's ValueBytes: before the call when its arguments say it
// would (format's widths, join's separator), after it otherwise.
func (e *evaluator) limited(name string, f function.Function, rng hcl.Range) function.Function {
	return function.New(&function.Spec{
		Params:   f.Params(),
		VarParam: f.VarParam(),
		Type:     f.ReturnTypeForValues,
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			if !e.step(1, rng) {
				return cty.UnknownVal(retType), e.err
			}
			limit := e.budget.Limits().ValueBytes
			what := fmt.Sprintf("%s: what %s returns", rng, name)
			if n := estimate(name, args, limit); n > limit {
				e.fail(&migrate.LimitError{What: fmt.Sprintf("%s would be larger than %s", what, migrate.Size(int64(limit))),
					Limit: migrate.Size(int64(limit)) + " for a value"})
				return cty.UnknownVal(retType), e.err
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			if err := e.budget.Value(what, size(v, limit)); err != nil {
				e.fail(err)
				return cty.UnknownVal(retType), err
			}
			return v, nil
		},
	})
}

// binaryFile marks what file returns for a file that is not UTF-8 text:
// the file's base64, which only base64encode may take (Terraform 0.11's
// base64encode(file("cert.pfx"))) and which is then its result.
type binaryFile struct{ name string }

// fileFunc returns Terraform's file or filebase64 (fn), called in the
// expression at rng, reading paths relative to the configuration's
// directory and only under it (confine.go). A file that is not there
// makes the call's value unknown and a need named as the call:
// file("cert.pfx"). A path the reader refuses fails the reading.
func (e *evaluator) fileFunc(fn string, rng hcl.Range, needs *[]need) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path := args[0].AsString()
			name := fmt.Sprintf("%s(%q)", fn, path)
			if s, ok := e.opts.Set[name]; ok {
				return cty.StringVal(s), nil
			}
			b, full, err := e.readFile(path)
			var r *refusal
			switch {
			case errors.Is(err, fs.ErrNotExist):
				*needs = append(*needs, need{name, "the file " + full + " is not there"})
				return cty.UnknownVal(cty.String), nil
			case errors.As(err, &r) || migrate.IsLimit(err):
				e.fail(fmt.Errorf("%s: %s: %w", rng, migrate.Shorten(name), err))
				return cty.UnknownVal(cty.String), err
			case err != nil:
				*needs = append(*needs, need{name, "the file cannot be read: " + err.Error()})
				return cty.UnknownVal(cty.String), nil
			case fn == "filebase64":
				return cty.StringVal(base64.StdEncoding.EncodeToString(b)), nil
			}
			// cty holds strings as normalized UTF-8: anything else would
			// change on the way.
			if s := string(b); utf8.ValidString(s) && cty.StringVal(s).AsString() == s {
				return cty.StringVal(s), nil
			}
			return cty.StringVal(base64.StdEncoding.EncodeToString(b)).Mark(binaryFile{name}), nil
		},
	})
}

// readFile reads the file at path, written relative to the configuration's
// directory, and returns it with the path it has from there. A file is
// read once, however many jobs name it; it is opened each time, so that
// each path that names it is checked.
func (e *evaluator) readFile(path string) ([]byte, string, error) {
	if e.files == nil {
		// What recur export writes reads back without files.
		return nil, path, &refusal{path, "with no configuration's directory to read it in"}
	}
	f, full, err := e.files.open(path)
	if err != nil {
		return nil, full, err
	}
	defer f.Close()
	if b, ok := e.read[full]; ok {
		return b, full, nil
	}
	limit := int64(e.budget.Limits().ValueBytes)
	b, err := e.budget.Read(full, f, limit, migrate.Size(limit)+" for a value")
	if err == nil {
		e.read[full] = b
	}
	return b, full, err
}

// binaryNeeds are the needs of a value that holds a binary file other
// than through base64encode.
func binaryNeeds(val cty.Value) []need {
	_, marks := val.UnmarkDeep()
	var out []need
	for m := range marks {
		if b, ok := m.(binaryFile); ok {
			out = append(out, need{b.name, "the file is not UTF-8 text: only base64encode(file(...)) or filebase64(...) can use it"})
		}
	}
	slices.SortFunc(out, func(a, b need) int { return cmp.Compare(a.name, b.name) })
	return out
}

var base64Encode = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String, AllowMarked: true}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		s, marks := args[0].Unmark()
		for m := range marks {
			if _, ok := m.(binaryFile); ok {
				return s, nil
			}
		}
		return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(s.AsString()))).WithMarks(marks), nil
	},
})

var base64Decode = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		b, err := base64.StdEncoding.DecodeString(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.String), fmt.Errorf("not base64: %w", err)
		}
		if !utf8.Valid(b) {
			return cty.UnknownVal(cty.String), errors.New("the decoded bytes are not UTF-8 text")
		}
		return cty.StringVal(string(b)), nil
	},
})

// standIn is a function recur does not evaluate, called at calls: its
// value is what --set gives for the text of the call, unknown otherwise.
func (e *evaluator) standIn(calls []*hclsyntax.FunctionCallExpr, ctx *hcl.EvalContext) function.Function {
	return function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowDynamicType: true, AllowMarked: true},
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !e.step(int64(len(calls)), calls[0].Range()) {
				return cty.DynamicVal, e.err
			}
			if c := callOf(calls, args, ctx); c != nil {
				if s, ok := e.opts.Set[e.cfg.text(c.Range())]; ok {
					return cty.StringVal(s), nil
				}
			}
			return cty.DynamicVal, nil
		},
	})
}

// callOf finds which of calls was made with args: the function only sees
// values, and two calls of one function may differ in their text.
func callOf(calls []*hclsyntax.FunctionCallExpr, args []cty.Value, ctx *hcl.EvalContext) *hclsyntax.FunctionCallExpr {
	if len(calls) == 1 {
		return calls[0]
	}
	for _, c := range calls {
		if c.ExpandFinal || len(c.Args) != len(args) {
			continue
		}
		same := true
		for i, a := range c.Args {
			v, diags := a.Value(ctx)
			same = same && !diags.HasErrors() && v.RawEquals(args[i])
		}
		if same {
			return c
		}
	}
	return nil
}
