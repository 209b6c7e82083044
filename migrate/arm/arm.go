// Package arm reads the job collections and jobs of Azure Resource
// Manager templates (Microsoft.Scheduler/jobCollections and
// Microsoft.Scheduler/jobCollections/jobs, apiVersion 2016-03-01) for
// recur import.
//
// A template's expressions are evaluated as ARM evaluates them, for the
// functions that need nothing but the template and the deployment's
// scope: parameters, variables, concat, format, toLower, toUpper, true,
// false, resourceGroup and subscription, with member access and
// indexing. Any other function depends on Azure (reference, listKeys,
// resourceId), on the moment (utcNow) or on what recur import does not
// evaluate (if, copyIndex); a resource that needs one is returned with a
// migrate.Missing, never with a guess. So is one that needs a parameter
// without a value, one in a copy loop, and one in a nested deployment.
//
// What a Missing's Name is, which --set NAME=VALUE supplies:
//   - a parameter's name, for a parameter without a value, a Key Vault
//     reference in a parameters file, or a value that is not of the
//     parameter's type or among its allowedValues;
//   - the template string that cannot be evaluated, brackets included
//     ("[listKeys(variables('account'), '2019-06-01').keys[0].value]"),
//     for an expression with a function recur import does not evaluate,
//     one that does not parse, or one that ARM would refuse (concat of a
//     string and an int). It is the innermost such string: the
//     variable's, when a variable holds it. Its value given with --set is
//     a string;
//   - "", for what no value supplies: a copy loop, a nested deployment,
//     a literal name of the wrong shape; and for the resource group
//     (Missing.Flag --resource-group), which a template never names:
//     every resource lacks it when Options.ResourceGroup is "", beside
//     whatever else it lacks, so that one reading lists every value to
//     give.
//
// A Missing that a template string lacks has a Key too, its JSON path
// (resources[0].resources[1].properties.action.request.uri), prefixed
// with the template's file and a colon when Read reads several: --set
// of the place gives the value of that string, without its text.
//
// A function the reader does not evaluate is told from a name that is
// no ARM template function (templateFunctions), which gets the nearest
// that is. Members of a body that recur's API does not have, which
// Azure ignored, are left out of it with a Warning (migrate.Prune).
//
// The reading keeps to the import's budget (migrate.Limits): the size of
// each template and parameters file, of what each function makes (concat
// and format measure it before they make it), of each variable and body,
// and the steps of the whole. A limit reached fails the reading, naming
// the template string and the limit.
package arm

import (
	"fmt"
	"strings"

	"github.com/recurhq/recur/migrate"
)

// Options are what a template takes from outside it.
type Options struct {
	ParameterFiles []string          // --parameters FILE: Azure's parameters.json shape
	Set            map[string]string // --set NAME=VALUE: a parameter's value, or the value of a Missing.Name
	Subscription   string            // subscription().subscriptionId
	ResourceGroup  string            // resourceGroup().name
	Location       string            // resourceGroup().location
	// Built holds templates already read, by the path Read is given:
	// what a Bicep CLI built of a .bicep file (package migrate/bicep).
	// Their resources' Source names the path without a line: the
	// template's lines are not the file's.
	Built map[string][]byte
	// Budget is what reading may spend, shared by the readers of one
	// import, and records the files read; nil for one of
	// migrate.DefaultLimits.
	Budget *migrate.Budget
}

// Read reads the templates at paths. Its error is for a file that cannot be read or is not an ARM template (not JSON, no resources), or a limit of the budget reached; everything a resource lacks is in its Missing.
//
// The resources are in the order of paths and, within a file, of the
// template; each has the ResourceGroup "", as a template deploys into a
// resource group its user names. A parameters file's value applies to
// the parameter of that name in every template; a later file's wins
// over an earlier one's, and --set over both. Resources of other types
// than Azure Scheduler's are skipped.
func Read(paths []string, opts Options) ([]migrate.Resource, error) {
	if opts.Budget == nil {
		opts.Budget = migrate.NewBudget(migrate.DefaultLimits)
	}
	files := map[string]fileValue{}
	for _, p := range opts.ParameterFiles {
		if err := readParameters(p, opts.Budget, files); err != nil {
			return nil, err
		}
	}
	var out []migrate.Resource
	for _, p := range paths {
		rs, err := readTemplate(p, &opts, files, len(paths) > 1)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	migrate.Prune(out, "Azure ignored this")
	return out, nil
}

// fileLimit names the limit of readFile.
const fileLimit = "for an ARM template or parameters file"

// readFile reads a template or parameters file within the budget.
func readFile(path string, budget *migrate.Budget) ([]byte, error) {
	limit := budget.Limits().TemplateBytes
	return budget.ReadFile(path, limit, migrate.Size(limit)+" "+fileLimit)
}

// readTemplate reads the template at path, one of several that the
// import reads when several is true.
func readTemplate(path string, opts *Options, files map[string]fileValue, several bool) ([]migrate.Resource, error) {
	data, built := opts.Built[path]
	if !built {
		var err error
		if data, err = readFile(path, opts.Budget); err != nil {
			return nil, fmt.Errorf("read template: %w", err)
		}
	}
	root, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", path, err)
	}
	o, ok := root.val.(*object)
	if !ok {
		return nil, fmt.Errorf("read template %s: not an ARM template: the file is not a JSON object", path)
	}
	res, rp, ok := o.at("resources", "")
	if !ok {
		return nil, fmt.Errorf("read template %s: not an ARM template: it has no resources", path)
	}
	es, ok := entries(res, rp)
	if !ok {
		return nil, fmt.Errorf("read template %s: not an ARM template: its resources are not an array or an object", path)
	}
	r := &reader{t: newTemplate(o, opts, files), file: path, data: data}
	r.t.file = path
	if several {
		r.t.keyPrefix = path + ":"
	}
	for _, e := range es {
		if r.resource(e.n, e.path); r.t.err != nil {
			return nil, r.t.err
		}
	}
	if built {
		for i := range r.out {
			r.out[i].Source.Line = 0
		}
	}
	if opts.ResourceGroup == "" {
		// Asked for beside what the resources lack, so that one run
		// lists every value to give.
		for i := range r.out {
			r.out[i].Missing = append(r.out[i].Missing, migrate.Missing{Flag: "--resource-group", Path: r.out[i].Source.Path,
				Reason: "an ARM template deploys into the resource group it is given"})
		}
	}
	return r.out, nil
}

// fileValue is a parameter's value in a parameters file.
type fileValue struct {
	file  string
	value any
	// reference describes the Key Vault secret the file gives instead of
	// a value, "" when it gives a value.
	reference string
}

// readParameters adds the values of the parameters file at path to
// files, replacing those of earlier files.
func readParameters(path string, budget *migrate.Budget, files map[string]fileValue) error {
	data, err := readFile(path, budget)
	if err != nil {
		return fmt.Errorf("read parameters: %w", err)
	}
	root, err := parseJSON(data)
	if err != nil {
		return fmt.Errorf("read parameters %s: %w", path, err)
	}
	o, _ := root.val.(*object)
	if _, isTemplate := o.get("resources"); isTemplate {
		return fmt.Errorf("read parameters %s: it is a template, not a parameters file", path)
	}
	var po *object
	if params, ok := o.get("parameters"); ok {
		po, _ = params.val.(*object)
	}
	if po == nil {
		return fmt.Errorf("read parameters %s: not a parameters file: it has no parameters object", path)
	}
	for _, k := range po.keys {
		e, _ := po.vals[k].val.(*object)
		f := fileValue{file: path}
		if v, ok := e.get("value"); ok {
			f.value = plain(v)
		} else if ref, ok := e.get("reference"); ok {
			f.reference = keyVault(ref)
		} else {
			return fmt.Errorf("read parameters %s: not a parameters file: parameter %s has no value or reference", path, k)
		}
		if f.value == nil && f.reference == "" {
			continue // a null value leaves the parameter to earlier files or its default
		}
		files[strings.ToLower(k)] = f
	}
	return nil
}

// keyVault describes a Key Vault reference of a parameters file: its
// secret and the vault, the last segment of the vault's resource ID.
func keyVault(ref *node) string {
	o, _ := ref.val.(*object)
	secret, _ := literalMember(o, "secretName")
	vault := ""
	if kv, ok := o.get("keyVault"); ok {
		kvo, _ := kv.val.(*object)
		id, _ := literalMember(kvo, "id")
		vault = id[strings.LastIndexByte(id, '/')+1:]
	}
	return fmt.Sprintf("Key Vault (secret %q of vault %q)", secret, vault)
}
