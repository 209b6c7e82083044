// Package terraform reads the job collections and jobs of Terraform files
// written for the azurerm provider's azurerm_scheduler_job_collection and
// azurerm_scheduler_job resources (azurerm 1.x: 2.0 removed them), in
// Terraform 0.11 or 0.12+ syntax, as migrate.Resources.
//
// The reader evaluates what a configuration holds by itself and nothing
// more:
//
//   - var.NAME: --set var.NAME, else -var, else the var files (later
//     files win; a directory's terraform.tfvars and *.auto.tfvars come
//     first, as Terraform loads them), else the variable's default.
//   - local.NAME: the local's expression.
//   - TYPE.NAME.ATTR for a resource in the files without count or
//     for_each, when ATTR is name, location or resource_group_name and
//     the resource gives it: the expression it gives. These are the
//     arguments Terraform keeps as written; any other attribute (an
//     access key, an id) is known only once Azure has made the resource.
//   - path.module, path.root and path.cwd: ".", so that a file() path is
//     relative to the directory of the file that names it.
//   - the functions file, filebase64, base64encode, base64decode, lower,
//     upper, trimspace, format, join, concat, lookup, merge and
//     jsonencode (functions.go): the ones scheduler configurations use
//     whose Terraform meaning recur has exactly. file and filebase64 read
//     paths relative to the directory of the file that calls them, and
//     only regular files under the configuration's directory
//     (confine.go): a path that leads out of it, as written, through ..
//     or through a link, fails the reading, as does a directory, a
//     device or a pipe. A function not among them is not guessed at.
//
// Everything else a resource needs is a migrate.Missing named as --set
// takes it: var.NAME, local.NAME, the reference's text
// (azurerm_storage_account.main.primary_access_key,
// data.azurerm_key_vault_secret.pfx.value, module.m.out, count.index),
// file("PATH") and filebase64("PATH") for a file that is not there, or
// the text of a call to a function recur does not evaluate or of an
// expression it cannot (var.list[5] past the list's end). A --set value
// is a string, read as an HCL expression for a variable whose type is a
// list, map or object, as Terraform reads -var.
//
// Two rules keep the reader from guessing. A scheduler resource with
// count or for_each is reported, not evaluated: it gets a Missing named
// after the resource and no body; so is a dynamic block. Data sources
// and modules are not read. An attribute the provider did not have, or
// two blocks of which it took one, is a Missing too, rather than dropped
// unsaid: Terraform refused such a file. These Missing values name what
// the user must change in the file; --set cannot give them.
//
// The reading is bounded by the budget of migrate.Limits: the files'
// sizes, how deeply a file nests, each expression before it is evaluated
// (bounds.go), each value, function result and body after, and the
// steps of the whole. A file() refused or a limit reached fails the
// reading, naming where and which limit.
//
// Options.ResourceGroup, recur import's --resource-group, puts every
// resource in that group, resource_group_name unread. Without it, what
// resource_group_name needs is a Missing like any other
// (azurerm_resource_group.main.name, for a resource group the files do
// not declare); a resource without one has the ResourceGroup "".
//
// Both resources may have recur_properties, an attribute the provider
// never had, for what its schema cannot say: recur's extensions
// (overlapPolicy, a recurrence's timeZone, an action's timeout, ...), a
// Service Bus or Workflow action, a retry policy that is not Fixed. It is
// an object in the shape of Azure's properties, which the reader
// deep-merges into the properties the azurerm attributes make: where both
// hold an object, member by member; null removes a member (the retry
// policy of None an action without a retry block gets); any other value,
// a list too, replaces what is there. Terraform refuses the attribute: a
// file that has it is for recur import alone. A member in it that recur's
// API does not have is left out of the body with a warning
// (migrate.Prune), as the ARM reader leaves out what Azure ignored.
//
//	recur_properties = {
//	  overlapPolicy = "BufferOne"
//	  recurrence    = { timeZone = "Europe/Berlin" }
//	  action        = { retryPolicy = null }
//	}
//
// Write is the reader's inverse: recur export --format terraform.
package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/recurhq/recur/migrate"
)

// Options are what the configuration takes from outside it.
type Options struct {
	Vars     map[string]string // -var NAME=VALUE (wins over var files)
	VarFiles []string          // --var-file FILE (.tfvars, HCL; later files win)
	Set      map[string]string // --set NAME=VALUE: the value of a Missing.Name (var.x, a reference such as azurerm_storage_account.main.primary_access_key, file("cert.pfx"))
	// ResourceGroup, when not "", is the group of every resource:
	// resource_group_name is not read.
	ResourceGroup string
	// Budget is what reading may spend, shared by the readers of one
	// import, and records the files read; nil for one of
	// migrate.DefaultLimits.
	Budget *migrate.Budget
}

// The resource types the reader turns into resources.
const (
	typeCollection = "azurerm_scheduler_job_collection"
	typeJob        = "azurerm_scheduler_job"
)

// Read reads the Terraform files at paths (a directory means every .tf file in it). Its error is for a file that cannot be read or parsed, a file() the reader refuses to read, or a limit of the budget reached; everything a resource lacks is in its Missing.
//
// Each directory is one configuration, as for Terraform: the files named
// in one directory, or the directory itself, share their variables,
// locals and resources; two directories share only opts. A file() reads
// only under its configuration's directory.
func Read(paths []string, opts Options) ([]migrate.Resource, error) {
	if opts.Budget == nil {
		opts.Budget = migrate.NewBudget(migrate.DefaultLimits)
	}
	modules, err := group(paths)
	if err != nil {
		return nil, err
	}
	var out []migrate.Resource
	for _, m := range modules {
		rs, err := m.read(opts)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	// Only recur_properties can hold a member recur's API has not.
	migrate.Prune(out, "recur import ignores this")
	migrate.Sort(out)
	return out, nil
}

// module is the files of one directory that Read reads.
type module struct {
	dir   string
	files []string
	// varFiles are the var files Terraform loads from the directory by
	// itself: terraform.tfvars, then *.auto.tfvars in lexical order.
	varFiles []string
	// listed holds the files found in the directory rather than named:
	// they are read as file() reads, under the directory alone.
	listed map[string]bool
}

func (m *module) read(opts Options) ([]migrate.Resource, error) {
	files, err := openConfined(m.dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", m.dir, err)
	}
	defer files.close()
	src := &sources{m: m, files: files, budget: opts.Budget}
	cfg := newConfig(opts.Budget.Limits())
	for _, f := range m.files {
		data, err := src.read(f)
		if err != nil {
			return nil, err
		}
		if err := cfg.load(f, data); err != nil {
			return nil, err
		}
	}
	values := map[string]cty.Value{}
	for _, f := range append(slices.Clone(m.varFiles), opts.VarFiles...) {
		data, err := src.read(f)
		if err != nil {
			return nil, err
		}
		if err := readVarFile(f, data, opts.Budget.Limits(), values); err != nil {
			return nil, err
		}
	}
	ev := newEvaluator(cfg, opts, values, files)
	out := make([]migrate.Resource, 0, len(cfg.scheduler))
	for _, res := range cfg.scheduler {
		r := ev.resource(res)
		if ev.err != nil {
			return nil, ev.err
		}
		out = append(out, r)
	}
	return out, nil
}

// sources reads the files of one configuration, counting them against
// the configuration's limit.
type sources struct {
	m      *module
	files  *confined
	budget *migrate.Budget
	bytes  int64
}

func (s *sources) read(path string) ([]byte, error) {
	limits := s.budget.Limits()
	const limit = "for the files of one Terraform configuration together"
	var data []byte
	var err error
	if s.m.listed[path] {
		var f *os.File
		if f, _, err = s.files.open(filepath.Base(path)); err == nil {
			data, err = s.budget.Read(path, f, limits.ConfigBytes, migrate.Size(limits.ConfigBytes)+" "+limit)
			f.Close()
		}
	} else {
		data, err = s.budget.ReadFile(path, limits.ConfigBytes, migrate.Size(limits.ConfigBytes)+" "+limit)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if s.bytes += int64(len(data)); s.bytes > limits.ConfigBytes {
		return nil, &migrate.LimitError{What: fmt.Sprintf("the configuration %s is larger than %s with %s", s.m.dir, migrate.Size(limits.ConfigBytes), path),
			Limit: migrate.Size(limits.ConfigBytes) + " " + limit}
	}
	return data, nil
}

// group sorts paths into modules by directory, in the order they come.
func group(paths []string) ([]*module, error) {
	var out []*module
	byDir := map[string]*module{}
	get := func(dir string) *module {
		dir = filepath.Clean(dir)
		if byDir[dir] == nil {
			byDir[dir] = &module{dir: dir, listed: map[string]bool{}}
			out = append(out, byDir[dir])
		}
		return byDir[dir]
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if !info.IsDir() {
			m := get(filepath.Dir(p))
			if !slices.Contains(m.files, p) {
				m.files = append(m.files, p)
			}
			continue
		}
		m := get(p)
		files, varFiles, err := expand(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !slices.Contains(m.files, f) {
				m.files = append(m.files, f)
				m.listed[f] = true
			}
		}
		m.varFiles = varFiles
		for _, f := range varFiles {
			m.listed[f] = true
		}
	}
	return out, nil
}

// expand returns the configuration files of the directory dir and the
// var files Terraform would load from it by itself.
func expand(dir string) (files, varFiles []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var auto []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, ".tf"):
			files = append(files, filepath.Join(dir, name))
		case name == "terraform.tfvars":
			varFiles = append(varFiles, filepath.Join(dir, name))
		case strings.HasSuffix(name, ".auto.tfvars"):
			auto = append(auto, filepath.Join(dir, name))
		}
	}
	// ReadDir sorts by name: the auto files load in lexical order, after
	// terraform.tfvars, as in Terraform.
	return files, append(varFiles, auto...), nil
}

// config is what the files declare.
type config struct {
	limits    migrate.Limits
	src       map[string][]byte // by file name, for the text of expressions
	variables map[string]*variable
	locals    map[string]hcl.Expression
	resources map[string]*resource // every resource, by address
	scheduler []*resource          // the scheduler resources, in reading order
}

// resource is one resource block.
type resource struct {
	typ, name string
	body      *hclsyntax.Body
	file      string
	line      int
	// repeated is "count" or "for_each" when the block has one.
	repeated string
}

func (r *resource) address() string { return r.typ + "." + r.name }

func newConfig(limits migrate.Limits) *config {
	return &config{limits: limits, src: map[string][]byte{}, variables: map[string]*variable{},
		locals: map[string]hcl.Expression{}, resources: map[string]*resource{}}
}

// load parses one file, src, and adds what it declares.
func (c *config) load(file string, src []byte) error {
	if strings.HasSuffix(file, ".tf.json") {
		return fmt.Errorf("read %s: Terraform's JSON syntax is not supported; convert the file to HCL", file)
	}
	f, err := parse(file, src, c.limits.Depth)
	if err != nil {
		return err
	}
	c.src[file] = src
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if err := c.declare(file, b); err != nil {
			return err
		}
	}
	return nil
}

func (c *config) declare(file string, b *hclsyntax.Block) error {
	switch {
	case b.Type == "variable" && len(b.Labels) == 1:
		v, err := declareVariable(b, c.limits.ValueBytes)
		if err != nil {
			return err
		}
		if old := c.variables[v.name]; old != nil {
			return fmt.Errorf("%s: variable %q is declared again (first at %s)", b.DefRange(), v.name, old.rng)
		}
		c.variables[v.name] = v
	case b.Type == "locals":
		for name, a := range b.Body.Attributes {
			if old := c.locals[name]; old != nil {
				return fmt.Errorf("%s: local %q is defined again (first at %s)", a.SrcRange, name, old.Range())
			}
			c.locals[name] = a.Expr
		}
	case b.Type == "resource" && len(b.Labels) == 2:
		r := &resource{typ: b.Labels[0], name: b.Labels[1], body: b.Body, file: file, line: b.DefRange().Start.Line}
		for _, meta := range []string{"count", "for_each"} {
			if b.Body.Attributes[meta] != nil {
				r.repeated = meta
			}
		}
		if old := c.resources[r.address()]; old != nil {
			return fmt.Errorf("%s: resource %s is defined again (first in %s:%d)", b.DefRange(), r.address(), old.file, old.line)
		}
		c.resources[r.address()] = r
		if slices.Contains([]string{typeCollection, typeJob}, r.typ) {
			c.scheduler = append(c.scheduler, r)
		}
	}
	// Data sources, modules, providers, outputs and terraform blocks
	// define nothing recur takes; references to data sources and modules
	// are Missing where they are used.
	return nil
}

// parse parses src, the file named file, unless it nests deeper than
// depth: HCL's parser and evaluator recurse as deep as a file nests, and
// a few megabytes of parentheses exhaust the stack.
func parse(file string, src []byte, depth int) (*hcl.File, error) {
	if deep, line := nested(src, depth); deep {
		return nil, &migrate.LimitError{What: fmt.Sprintf("%s:%d nests deeper than %d", file, line, depth),
			Limit: fmt.Sprintf("%d levels of brackets, strings and operators", depth)}
	}
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse %s: %w", file, diags)
	}
	return f, nil
}

// text returns the source text of rng, for the names of Missing values.
func (c *config) text(rng hcl.Range) string {
	src, ok := c.src[rng.Filename]
	if !ok || rng.End.Byte > len(src) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	return string(rng.SliceBytes(src))
}
