package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// group is a client command, recur jobs or recur collections: its verbs
// and the address flags they share.
type group struct {
	name, synopsis string
	parts          []part
	verbs          []verb
}

// verb is one request (or list of requests) of a group.
type verb struct {
	name, summary string
	// needs are the address parts the verb requires; with named, the last
	// of them may also come as the one argument.
	needs []part
	named bool
	// arg names an argument the verb requires after the named part
	// ("FAILURE"), which the path reads from the address (address.arg).
	arg    string
	method string
	path   func(address) string
	// list follows nextLink through every page.
	list bool
	// body reads the request's JSON from -f.
	body bool
	// filter is the field of the --<filter> flag, sent as $filter.
	filter, filterHelp string
	// health adds the flags of the filters on a job's health to $filter
	// (healthFlags).
	health bool
	// check, if set, checks the address beyond needs.
	check func(address) error
	// show prints the answer; nil for answers without a body, which print
	// done with the name the verb acted on. pick, if set, chooses it by
	// the options.
	show *kind
	pick func(clientOptions) *kind
	done string
}

var (
	collectionParts = []part{partSubscription, partResourceGroup, partCollection}
	jobParts        = []part{partSubscription, partResourceGroup, partCollection, partJob}
)

var jobsCommand = &group{
	name:     "jobs",
	synopsis: "recur jobs VERB [JOB] [flags]",
	parts:    jobParts,
	verbs: []verb{
		{name: "put", summary: "create or replace a job with the JSON of -f FILE (- for stdin)",
			needs: jobParts, named: true, method: http.MethodPut, path: address.jobPath, body: true, show: &jobKind},
		{name: "get", summary: "show a job",
			needs: jobParts, named: true, method: http.MethodGet, path: address.jobPath, show: &jobKind},
		{name: "list", summary: "list the jobs of a collection, or without --collection those of the resource group or the subscription",
			needs: []part{partSubscription}, check: checkJobsListAddress, method: http.MethodGet, path: jobsListPath, list: true,
			pick: jobsListKind, filter: "state", filterHelp: "list only jobs in `STATE`: Enabled, Disabled, Completed or Faulted", health: true},
		{name: "delete", summary: "delete a job",
			needs: jobParts, named: true, method: http.MethodDelete, path: address.jobPath, done: "job %s deleted"},
		{name: "run", summary: "run a job now",
			needs: jobParts, named: true, method: http.MethodPost, path: suffix(address.jobPath, "/run"), done: "job %s started"},
		{name: "history", summary: "list the runs of a job, newest first",
			needs: jobParts, named: true, method: http.MethodGet, path: suffix(address.jobPath, "/history"), list: true, show: &historyKind,
			filter: "status", filterHelp: "list only runs of `STATUS`: Completed, Failed or Postponed"},
		{name: "failures", summary: "list the runs of a job that failed for good, newest first",
			needs: jobParts, named: true, method: http.MethodGet, path: suffix(address.jobPath, "/failures"), list: true, show: &failureKind},
		{name: "rerun", summary: "run a job's failed run again, as it ran (its ID is the FAILURE column of recur jobs failures)",
			needs: jobParts, named: true, arg: "FAILURE", method: http.MethodPost, path: address.rerunPath, done: "job %s: failure queued to run again"},
	},
}

var collectionsCommand = &group{
	name:     "collections",
	synopsis: "recur collections VERB [COLLECTION] [flags]",
	parts:    collectionParts,
	verbs: []verb{
		{name: "put", summary: "create or replace a job collection with the JSON of -f FILE (- for stdin)",
			needs: collectionParts, named: true, method: http.MethodPut, path: address.collectionPath, body: true, show: &collectionKind},
		{name: "get", summary: "show a job collection",
			needs: collectionParts, named: true, method: http.MethodGet, path: address.collectionPath, show: &collectionKind},
		{name: "list", summary: "list the job collections of a resource group, or of the subscription without --resource-group",
			needs: []part{partSubscription}, method: http.MethodGet, path: address.collections, list: true, show: &collectionKind},
		{name: "enable", summary: "enable a job collection and its jobs",
			needs: collectionParts, named: true, method: http.MethodPost, path: suffix(address.collectionPath, "/enable"), done: "job collection %s enabled"},
		{name: "disable", summary: "disable a job collection and its jobs",
			needs: collectionParts, named: true, method: http.MethodPost, path: suffix(address.collectionPath, "/disable"), done: "job collection %s disabled"},
		{name: "delete", summary: "delete a job collection and its jobs",
			needs: collectionParts, named: true, method: http.MethodDelete, path: address.collectionPath, done: "job collection %s deleted"},
	},
}

func suffix(path func(address) string, s string) func(address) string {
	return func(a address) string { return path(a) + s }
}

// clientOptions are the parsed flags of one verb.
type clientOptions struct {
	connection
	addr         address
	output, file string
	filter       string
	health       healthFlags
}

// runClient runs recur jobs or recur collections.
func runClient(ctx context.Context, g *group, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		w, code := stderr, 2
		if len(args) > 0 {
			w, code = stdout, 0
		}
		g.usage(w)
		return code
	}
	v := g.verb(args[0])
	if v == nil {
		fmt.Fprintf(stderr, "recur %s: unknown verb %q\n", g.name, args[0])
		g.usage(stderr)
		return 2
	}
	fs, o, err := g.parse(v, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		g.verbUsage(stdout, v, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "recur %s %s: %v\n", g.name, v.name, err)
		g.verbUsage(stderr, v, fs)
		return 2
	}
	server, err := parseServer(o.server)
	if err != nil {
		fmt.Fprintf(stderr, "recur %s %s: %v\n", g.name, v.name, err)
		return 2
	}
	if err := v.run(ctx, newClient(server, o.token, stderr), o, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "recur: %v\n", err)
		return 1
	}
	return 0
}

func (g *group) verb(name string) *verb {
	for i := range g.verbs {
		if g.verbs[i].name == name {
			return &g.verbs[i]
		}
	}
	return nil
}

// flags returns the flag set of v, or of the group's common flags when v
// is nil.
func (g *group) flags(v *verb, o *clientOptions) *flag.FlagSet {
	name := g.name
	if v != nil {
		name += " " + v.name
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // runClient prints errors and usage itself
	fs.Usage = func() {}
	o.connection.register(fs)
	for _, p := range g.parts {
		fs.StringVar(o.addr.field(p), p.flag, env(p.env, ""), p.noun+" `name` ("+p.env+")")
	}
	fs.StringVar(&o.output, "o", "table", "output `format`: table, or json for the API's JSON")
	fs.StringVar(&o.output, "output", "table", "output `format`, same as -o")
	if v != nil && v.body {
		fs.StringVar(&o.file, "f", "", "`FILE` with the resource's JSON, as the REST API takes it; - for stdin")
	}
	if v != nil && v.filter != "" {
		fs.StringVar(&o.filter, v.filter, "", v.filterHelp)
	}
	if v != nil && v.health {
		o.health.register(fs)
	}
	return fs
}

// parse parses v's flags and its argument, which may come before, among
// or after the flags.
func (g *group) parse(v *verb, args []string) (*flag.FlagSet, clientOptions, error) {
	var o clientOptions
	fs := g.flags(v, &o)
	var named []string
	for {
		if err := fs.Parse(args); err != nil {
			return fs, o, err
		}
		if fs.NArg() == 0 {
			break
		}
		named, args = append(named, fs.Arg(0)), fs.Args()[1:]
	}
	o.connection.resolve()
	if v.arg != "" {
		if len(named) == 0 {
			return fs, o, fmt.Errorf("no %s given: name it as the last argument", v.arg)
		}
		o.addr.arg, named = named[len(named)-1], named[:len(named)-1]
	}
	switch {
	case len(named) > 1 || len(named) == 1 && !v.named:
		return fs, o, fmt.Errorf("unexpected argument %q", named[len(named)-1])
	case len(named) == 1:
		*o.addr.field(v.needs[len(v.needs)-1]) = named[0]
	}
	if o.output != "table" && o.output != "json" {
		return fs, o, fmt.Errorf("-o %q: want table or json", o.output)
	}
	if v.body && o.file == "" {
		return fs, o, errors.New("-f FILE is required (- for stdin)")
	}
	if err := o.addr.require(v.needs, v.named); err != nil {
		return fs, o, err
	}
	if v.check != nil {
		if err := v.check(o.addr); err != nil {
			return fs, o, err
		}
	}
	_, err := o.health.conditions(time.Now())
	return fs, o, err
}

func (g *group) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\nVerbs:\n", g.synopsis)
	for _, v := range g.verbs {
		fmt.Fprintf(w, "  %-8s %s\n", v.name, v.summary)
	}
	fmt.Fprintf(w, "\nFlags of every verb (\"recur %s VERB -h\" for a verb's own):\n", g.name)
	var o clientOptions
	printDefaults(w, g.flags(nil, &o))
}

func (g *group) verbUsage(w io.Writer, v *verb, fs *flag.FlagSet) {
	arg := ""
	if v.named {
		arg = " [" + strings.ToUpper(v.needs[len(v.needs)-1].flag) + "]"
	}
	if v.arg != "" {
		arg += " " + v.arg
	}
	fmt.Fprintf(w, "Usage: recur %s %s%s [flags]\n\n%s.\n\nFlags:\n", g.name, v.name, arg, capitalize(v.summary))
	printDefaults(w, fs)
}

func printDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// run sends v's request, or requests for every page, and prints the
// answer.
func (v *verb) run(ctx context.Context, c *apiClient, o clientOptions, stdin io.Reader, stdout io.Writer) error {
	path := v.path(o.addr)
	query := url.Values{}
	var conds []string
	if o.filter != "" {
		conds = append(conds, v.filter+" eq '"+o.filter+"'")
	}
	health, err := o.health.conditions(time.Now())
	if err != nil {
		return err
	}
	if conds = append(conds, health...); len(conds) > 0 {
		query.Set("$filter", strings.Join(conds, " and "))
	}
	show := v.show
	if v.pick != nil {
		show = v.pick(o)
	}
	if v.list {
		values, err := c.list(ctx, path, query, show.plural)
		if err != nil {
			return err
		}
		return show.printList(stdout, o.output, values)
	}
	var body []byte
	if v.body {
		if body, err = readBody(o.file, stdin); err != nil {
			return err
		}
	}
	answer, err := c.do(ctx, v.method, path, query, body)
	switch {
	case err != nil:
		return err
	case show != nil:
		return show.printOne(stdout, o.output, answer)
	case o.output == "json":
		return printJSON(stdout, answer)
	}
	_, err = fmt.Fprintf(stdout, v.done+"\n", *o.addr.field(v.needs[len(v.needs)-1]))
	return err
}
