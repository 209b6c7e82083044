package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/recurhq/recur/migrate"
)

// header opens every file Write writes: Terraform itself cannot apply it.
const header = `# Written by recur export for recur import: the azurerm provider's
# scheduler resources (azurerm 1.x; 2.0 removed them), with recur_properties
# for what their schema cannot say, which Terraform refuses. Each secret is a
# variable without a value: give it with recur import -var NAME=VALUE.

`

// Write writes the resources as one Terraform file (0.12+ syntax) of
// azurerm_scheduler_job_collection and azurerm_scheduler_job resources,
// which Read reads back as the same resources: the azurerm attributes for
// what the provider's schema says, recur_properties for the rest. A job
// refers to its collection's resource when that is among es, else names
// its collection and resource group as literals. Each secret is a
// sensitive string variable without a value, named after its collection,
// job and place; the file holds none. Strings are escaped where HCL would
// read a template ("${" is written "$${").
//
// Write reads each resource back before it writes it and fails when the
// reading would differ from the definition, but in what HCL and the
// provider change for every file: strings come back in Unicode normal
// form C, as HCL reads every string, and a location as Azure spells it
// ("West Europe" is westeurope).
func Write(w io.Writer, es []migrate.Exported) error {
	wr := &writer{names: resourceNames(es), secrets: map[string]string{}, taken: map[string]bool{}}
	for i, e := range es {
		if e.Kind == migrate.Collection {
			wr.collections = append(wr.collections, collectionRef{e.ResourceGroup, e.Collection, wr.names[i]})
		}
	}
	var resources [][]byte
	for i, e := range es {
		src, err := wr.resource(e, wr.names[i])
		if err != nil {
			return fmt.Errorf("%s %s: %w", e.Kind, e.Name(), err)
		}
		resources = append(resources, src)
	}
	out := bytes.NewBufferString(header)
	vars := hclwrite.NewEmptyFile()
	for _, v := range wr.vars {
		b := vars.Body().AppendNewBlock("variable", []string{v.name}).Body()
		b.SetAttributeRaw("type", hclwrite.TokensForIdentifier("string"))
		b.SetAttributeValue("sensitive", cty.True)
		b.SetAttributeValue("description", cty.StringVal(v.description))
		vars.Body().AppendNewline()
	}
	out.Write(hclwrite.Format(vars.Bytes()))
	out.Write(bytes.Join(resources, []byte("\n")))
	_, err := w.Write(out.Bytes())
	return err
}

// writer writes the resources of one file.
type writer struct {
	names       []string // each resource's name in the file
	collections []collectionRef
	// secrets are the variables' names, by their placeholders: what a
	// definition holds at a secret's place while Write works.
	secrets map[string]string
	vars    []secretVar
	taken   map[string]bool // the variables' names
}

// collectionRef is an exported collection and its resource's name.
type collectionRef struct{ resourceGroup, collection, name string }

// secretVar is the variable of a secret.
type secretVar struct{ name, description string }

func (wr *writer) collectionOf(e migrate.Exported) (collectionRef, bool) {
	for _, c := range wr.collections {
		if c.resourceGroup == e.ResourceGroup && c.collection == e.Collection {
			return c, true
		}
	}
	return collectionRef{}, false
}

// resource writes the resource block of e, read back and checked.
func (wr *writer) resource(e migrate.Exported, name string) ([]byte, error) {
	want, err := wr.definition(e)
	if err != nil {
		return nil, err
	}
	props := want["properties"].(map[string]any)
	typ := typeJob
	if e.Kind == migrate.Collection {
		typ = typeCollection
	}
	f := hclwrite.NewEmptyFile()
	body := f.Body().AppendNewBlock("resource", []string{typ, name}).Body()
	wr.identity(body, e)
	fs := hclBlock{w: wr, body: body}
	if e.Kind == migrate.Collection {
		fs.collection(want, props)
	} else {
		fs.job(props)
	}
	have, err := wr.readBack(f, e.Kind)
	if err != nil {
		return nil, err
	}
	if patch := diffPatch(have["properties"].(map[string]any), props); len(patch) > 0 {
		body.AppendNewline()
		fs.set(recurProperties, patch)
		if have, err = wr.readBack(f, e.Kind); err != nil {
			return nil, err
		}
	}
	if err := same(have, want); err != nil {
		return nil, err
	}
	return hclwrite.Format(f.Bytes()), nil
}

// identity writes the attributes that name the resource and place it.
func (wr *writer) identity(body *hclwrite.Body, e migrate.Exported) {
	if e.Kind == migrate.Collection {
		body.SetAttributeValue("name", cty.StringVal(e.Collection))
		if e.ResourceGroup != "" {
			body.SetAttributeValue("resource_group_name", cty.StringVal(e.ResourceGroup))
		}
		return
	}
	body.SetAttributeValue("name", cty.StringVal(e.Job))
	c, ok := wr.collectionOf(e)
	ref := func(attr string) hcl.Traversal {
		return hcl.Traversal{hcl.TraverseRoot{Name: typeCollection}, hcl.TraverseAttr{Name: c.name}, hcl.TraverseAttr{Name: attr}}
	}
	switch {
	case ok && e.ResourceGroup != "":
		body.SetAttributeTraversal("resource_group_name", ref("resource_group_name"))
	case e.ResourceGroup != "":
		body.SetAttributeValue("resource_group_name", cty.StringVal(e.ResourceGroup))
	}
	if ok {
		body.SetAttributeTraversal("job_collection_name", ref("name"))
	} else {
		body.SetAttributeValue("job_collection_name", cty.StringVal(e.Collection))
	}
}

// definition returns e's definition as Read would read it back: in JSON's
// types, strings in normal form C, and a placeholder at each secret's
// place that stands for its variable, which it declares.
func (wr *writer) definition(e migrate.Exported) (map[string]any, error) {
	src, err := json.Marshal(e.Definition)
	if err != nil {
		return nil, err
	}
	var def map[string]any
	if err := json.Unmarshal(src, &def); err != nil {
		return nil, err
	}
	def = normalForm(def).(map[string]any)
	if _, ok := def["properties"].(map[string]any); !ok {
		return nil, fmt.Errorf("the definition has no properties object")
	}
	for name := range def {
		if name != "properties" && (e.Kind == migrate.Job || name != "location" && name != "tags") {
			return nil, fmt.Errorf("the definition's member %s has no place in Terraform", name)
		}
	}
	for _, s := range e.Secrets {
		if len(s) == 0 {
			continue
		}
		name := wr.variableName(e.Resource, s)
		placeholder := "\x00secret\x00" + name
		wr.secrets[placeholder] = name
		wr.vars = append(wr.vars, secretVar{name, fmt.Sprintf("%s of job %s", s, e.Name())})
		s.Set(def, placeholder)
	}
	return def, nil
}

// normalForm returns v, a JSON value, with its strings and keys in
// Unicode normal form C, as cty holds every string.
func normalForm(v any) any {
	switch v := v.(type) {
	case string:
		return cty.StringVal(v).AsString()
	case []any:
		for i := range v {
			v[i] = normalForm(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[cty.StringVal(k).AsString()] = normalForm(x)
		}
		return out
	}
	return v
}

// readBack reads the resource f holds as Read would, the secrets'
// variables giving their placeholders, and returns its body in JSON's
// types.
func (wr *writer) readBack(f *hclwrite.File, kind migrate.Kind) (map[string]any, error) {
	const file = "export.tf"
	src := hclwrite.Format(f.Bytes())
	parsed, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("the HCL written does not parse: %w", diags)
	}
	cfg := newConfig(migrate.DefaultLimits)
	cfg.src[file] = src
	vars := map[string]string{}
	for placeholder, name := range wr.secrets {
		vars[name] = placeholder
	}
	r := &reading{ev: newEvaluator(cfg, Options{Vars: vars, Budget: migrate.NewBudget(migrate.DefaultLimits)}, nil, nil)}
	s, read := jobSchema, r.job
	if kind == migrate.Collection {
		s, read = collectionSchema, r.collection
	}
	body := read(r.bodyNode("", parsed.Body.(*hclsyntax.Body).Blocks[0].Body, s))
	if r.ev.err != nil {
		return nil, r.ev.err
	}
	if len(r.missing) > 0 {
		return nil, fmt.Errorf("the HCL written reads back with %s missing", r.missing[0])
	}
	var out map[string]any
	if err := json.Unmarshal(marshal(body), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// same checks that the body read back is want but in what the provider
// changes of every file: a collection's location, and tags without a tag.
func same(got, want map[string]any) error {
	want = maps.Clone(want)
	if loc, ok := want["location"].(string); ok {
		want["location"] = strings.ToLower(strings.ReplaceAll(loc, " ", ""))
	}
	if tags, ok := want["tags"].(map[string]any); ok && len(tags) == 0 {
		delete(want, "tags")
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(redactedPlaceholders(got))
		w, _ := json.Marshal(redactedPlaceholders(want))
		return fmt.Errorf("Terraform cannot hold the definition exactly: it would read back as %s, not %s", g, w)
	}
	return nil
}

// redactedPlaceholders returns v with the placeholders' NUL bytes shown,
// for an error message.
func redactedPlaceholders(v any) any {
	return migrate.MapStrings(v, func(s string) string { return strings.ReplaceAll(s, "\x00", "?") })
}

// tokens writes v, a JSON value, as an HCL expression: an object or list
// as a constructor, a secret's placeholder as var.NAME.
func (wr *writer) tokens(v any) hclwrite.Tokens {
	switch v := v.(type) {
	case string:
		if name, ok := wr.secrets[v]; ok {
			return hclwrite.TokensForTraversal(hcl.Traversal{hcl.TraverseRoot{Name: "var"}, hcl.TraverseAttr{Name: name}})
		}
		return hclwrite.TokensForValue(cty.StringVal(v))
	case float64:
		return hclwrite.TokensForValue(cty.NumberFloatVal(v))
	case bool:
		return hclwrite.TokensForValue(cty.BoolVal(v))
	case nil:
		return hclwrite.TokensForValue(cty.NullVal(cty.DynamicPseudoType))
	case []any:
		elems := make([]hclwrite.Tokens, len(v))
		for i, x := range v {
			elems[i] = wr.tokens(x)
		}
		return hclwrite.TokensForTuple(elems)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		attrs := make([]hclwrite.ObjectAttrTokens, len(keys))
		for i, k := range keys {
			attrs[i] = hclwrite.ObjectAttrTokens{Name: keyTokens(k), Value: wr.tokens(v[k])}
		}
		return hclwrite.TokensForObject(attrs)
	}
	// A definition decodes from JSON to the types above alone.
	panic(fmt.Sprintf("terraform: no HCL for a %T", v))
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keyTokens writes an object's key: bare when it is a plain name, quoted
// otherwise. HCL reads true, false and null as values, and "{ for" as the
// start of a for expression.
func keyTokens(k string) hclwrite.Tokens {
	if plainKey.MatchString(k) && !slices.Contains([]string{"true", "false", "null", "for", "in", "if"}, k) {
		return hclwrite.TokensForIdentifier(k)
	}
	return hclwrite.TokensForValue(cty.StringVal(k))
}
