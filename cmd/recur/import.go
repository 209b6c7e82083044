package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/migrate"
	"github.com/recurhq/recur/migrate/arm"
	"github.com/recurhq/recur/migrate/terraform"
)

// recur import reads Azure Scheduler's definitions from ARM templates and
// Terraform files (package migrate) and PUTs each collection, then each
// job, into a running recur. Every PUT carries Recur-Apply: if-changed, so
// that importing the same files again writes nothing; --dry-run sends
// what-if PUTs, which write nothing at all.

const importSynopsis = "usage: recur import [flags] FILE...   (ARM templates: .json; Bicep: .bicep; Terraform: .tf, or a directory of them)"

// importOptions are the flags and files of recur import.
type importOptions struct {
	connection
	addr           address // subscription, and the resource group that overrides the files'
	location       string
	parameterFiles listFlag
	varFiles       listFlag
	vars, sets     assignFlag
	dryRun         bool
	partial        bool // write what passes its check, whatever fails
	disabled       bool // write every job disabled, for a cutover
	runPast        bool // write a one-time job whose time has passed as it is: it runs at once
	concurrency    int
	bicep          bicepMode
	strict         bool
	files          []string
}

// listFlag is a flag that may be given many times.
type listFlag []string

func (f *listFlag) String() string     { return strings.Join(*f, ", ") }
func (f *listFlag) Set(s string) error { *f = append(*f, s); return nil }

// assignFlag is a NAME=VALUE flag that may be given many times.
type assignFlag map[string]string

func (f assignFlag) String() string { return "" }

func (f assignFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want NAME=VALUE", s)
	}
	f[name] = value
	return nil
}

func importFlags(o *importOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	o.vars, o.sets = assignFlag{}, assignFlag{}
	o.connection.register(fs)
	fs.StringVar(&o.addr.subscription, "subscription", env(partSubscription.env, ""), "the `subscription` to import into ("+partSubscription.env+")")
	fs.StringVar(&o.addr.resourceGroup, "resource-group", env(partResourceGroup.env, ""),
		"the resource `group` of every resource imported ("+partResourceGroup.env+"); without it, the one a Terraform resource names; an ARM template's resources need it")
	fs.StringVar(&o.location, "location", "", "the `location` a template's resourceGroup().location means")
	fs.Var(&o.parameterFiles, "parameters", "an ARM parameters `FILE` (parameters.json); may be given many times, the last wins")
	fs.Var(o.vars, "var", "a Terraform variable, `NAME=VALUE`; may be given many times")
	fs.Var(&o.varFiles, "var-file", "a Terraform variables `FILE` (.tfvars); may be given many times, the last wins")
	fs.Var(o.sets, "set", "a value the files leave to you, `NAME=VALUE` with NAME as the report gives it; may be given many times")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what an import would do; write nothing")
	fs.BoolVar(&o.partial, "partial", false, "write every resource that passes its check, though others fail (by default an import writes all or nothing)")
	fs.BoolVar(&o.disabled, "disabled", false, "write every job disabled, so that nothing runs until the cutover (the same import without --disabled enables them)")
	fs.BoolVar(&o.runPast, "run-past", false, "write a one-time job whose time has passed as the files define it, to run at once (by default it is written completed: it ran where it came from)")
	fs.IntVar(&o.concurrency, "concurrency", 8, "how many PUTs to send at once, `N` from 1 to 64")
	o.bicep = bicepAuto
	fs.Var(&o.bicep, "bicep", "`auto`: build .bicep files with the Bicep CLI on PATH (bicep, else az); off: run none, and refuse them")
	fs.BoolVar(&o.strict, "strict", false, "fail a resource whose file holds a member recur does not have (and Azure ignored), rather than import it without")
	return fs
}

func parseImportFlags(args []string) (*flag.FlagSet, importOptions, error) {
	var o importOptions
	fs := importFlags(&o)
	for {
		if err := fs.Parse(args); err != nil {
			return fs, o, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.files, args = append(o.files, fs.Arg(0)), fs.Args()[1:]
	}
	o.connection.resolve()
	switch {
	case len(o.files) == 0:
		return fs, o, errors.New("name at least one FILE")
	case o.concurrency < 1 || o.concurrency > 64:
		return fs, o, fmt.Errorf("--concurrency %d: want 1 to 64", o.concurrency)
	}
	return fs, o, o.addr.require([]part{partSubscription}, false)
}

// runImport runs recur import: 0 when every resource was created, updated
// or unchanged (or, with --dry-run, would be), 1 otherwise, 2 for a usage
// error or files that cannot be read.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, o, err := parseImportFlags(args)
	server, code, ok := clientStart("import", importSynopsis, fs, err, o.server, stdout, stderr)
	if !ok {
		return code
	}
	resources, files, err := readFiles(ctx, o)
	switch {
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, "recur import: interrupted while reading the files; nothing was written")
		return 1
	case err != nil:
		// A refusal (a file outside a configuration, a limit) fails
		// the import here, before its first write.
		fmt.Fprintf(stderr, "recur import: %v\n", err)
		return 2
	}
	im := importer{client: newClient(server, o.token, stderr), subscription: o.addr.subscription, dryRun: o.dryRun, partial: o.partial,
		disabled: o.disabled, runPast: o.runPast, strict: o.strict, concurrency: o.concurrency}
	// A server that cannot be reached, or refuses the token, fails the
	// import once, before its first write, rather than in every row.
	if _, err := im.client.do(ctx, http.MethodGet, o.addr.collections(), nil, nil); err != nil {
		fmt.Fprintf(stderr, "recur import: %v\n", err)
		return 1
	}
	if im.client.progress != nil {
		// A step for each resource's check, and one for its write.
		steps := 2 * len(resources)
		if o.dryRun {
			steps = len(resources)
		}
		im.bar = &progressBar{w: im.client.progress, total: steps}
	}
	items := im.run(ctx, placed(resources, o.addr.resourceGroup))
	var read []string
	if o.dryRun {
		read = files
	}
	if err := printImport(stdout, items, o.dryRun, read); err != nil {
		fmt.Fprintf(stderr, "recur import: %v\n", err)
		return 1
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "recur import: interrupted: the table says what was written before the stop (created, updated) and what was not (stopped)")
		return 1
	}
	for _, it := range items {
		if !it.done() {
			return 1
		}
	}
	return 0
}

// clientStart does what recur import and export do first with their parsed
// flags (fs, err): print the help when asked, refuse a usage error, read
// the --server URL. ok is false when the command is to exit with code.
func clientStart(name, synopsis string, fs *flag.FlagSet, err error, server string, stdout, stderr io.Writer) (u *url.URL, code int, ok bool) {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "%s\n\nFlags:\n", synopsis)
		printDefaults(stdout, fs)
		return nil, 0, false
	}
	if err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n%s\n", name, err, synopsis)
		return nil, 2, false
	}
	if u, err = parseServer(server); err != nil {
		fmt.Fprintf(stderr, "recur %s: %v\n", name, err)
		return nil, 2, false
	}
	return u, 0, true
}

// placed puts every resource in resourceGroup when it is given, and sorts
// them as they are to be written.
func placed(rs []migrate.Resource, resourceGroup string) []migrate.Resource {
	if resourceGroup != "" {
		for i := range rs {
			rs[i].ResourceGroup = resourceGroup
		}
	}
	migrate.Sort(rs)
	return rs
}

// Outcomes of an import's items beyond the API's (jobs.Outcome...).
const (
	outcomeSkipped = "skipped"
	outcomeFailed  = "failed"
	// outcomeStopped is an item the import was interrupted before it
	// wrote, or while its PUT was in flight.
	outcomeStopped = "stopped"
)

// importItem is a resource and what the import did with it.
type importItem struct {
	migrate.Resource
	outcome string
	detail  string
	plan    plan
	// cutover says how the import changed the job's state for a cutover;
	// "" when it did not.
	cutover string
}

// cutoverNote is what the import says of the state it wrote for a
// cutover, for a resource whose PUT had outcome.
func (it importItem) cutoverNote(outcome string) string {
	if outcome == jobs.OutcomeUnchanged {
		return ""
	}
	return it.cutover
}

// done reports whether the item is where the files say it should be (or,
// in a dry run, would be).
func (it importItem) done() bool {
	switch it.outcome {
	case jobs.OutcomeCreated, jobs.OutcomeUpdated, jobs.OutcomeUnchanged:
		return true
	}
	return false
}

// importer PUTs resources into one subscription of a recur API.
type importer struct {
	client            *apiClient
	subscription      string
	dryRun, partial   bool
	disabled, runPast bool
	strict            bool // fail what the readers left members out of
	concurrency       int
	bar               *progressBar // nil without a terminal
}

// run checks rs, then imports them, collections first: a job is written
// only once its collection is, when the files define that too. Nothing is
// written when any fails its check, unless partial.
func (im *importer) run(ctx context.Context, rs []migrate.Resource) []importItem {
	items := make([]importItem, len(rs))
	for i, r := range rs {
		items[i] = importItem{Resource: r}
	}
	failDuplicates(items)
	if im.strict {
		failIgnored(items)
	}
	byName := map[string]*importItem{}
	var collections, jobItems []*importItem
	for i := range items {
		it := &items[i]
		if it.Kind == migrate.Collection {
			byName[it.ResourceGroup+"/"+it.Collection] = it
			collections = append(collections, it)
		} else {
			jobItems = append(jobItems, it)
		}
	}
	collectionOf := func(it *importItem) *importItem { return byName[it.ResourceGroup+"/"+it.Collection] }
	im.checkAll(ctx, collections, jobItems, collectionOf)
	failing := 0
	for i := range items {
		if items[i].plan.outcome == "" {
			failing++
		}
	}
	switch {
	case im.dryRun:
		for i := range items {
			if it := &items[i]; it.plan.outcome != "" {
				it.outcome, it.detail = it.plan.outcome, it.cutoverNote(it.plan.outcome)
			}
		}
	case failing > 0 && !im.partial:
		for i := range items {
			if it := &items[i]; it.plan.outcome != "" {
				it.outcome, it.detail = outcomeHeld, "not written: the import writes all or nothing (--partial writes what passes)"
			}
		}
	default:
		im.each(ctx, collections, nil, im.write)
		im.each(ctx, jobItems, collectionOf, im.write)
	}
	if im.bar != nil {
		im.bar.clear()
	}
	return items
}

// failDuplicates fails every resource the files define more than once:
// which of the definitions is meant is the user's to say.
func failDuplicates(items []importItem) {
	groups := map[string][]int{}
	for i, it := range items {
		if it.Collection != "" && (it.Kind == migrate.Collection || it.Job != "") {
			key := it.Kind.String() + " " + it.ResourceGroup + "/" + it.Name()
			groups[key] = append(groups[key], i)
		}
	}
	for _, group := range groups {
		if len(group) < 2 {
			continue
		}
		for _, i := range group {
			var others []string
			for _, j := range group {
				if j != i {
					others = append(others, items[j].Source.String())
				}
			}
			items[i].outcome, items[i].detail = outcomeFailed, "defined more than once: also at "+strings.Join(others, ", ")
		}
	}
}

// failIgnored fails every resource the readers left members out of
// (migrate.Resource.Warnings), naming them: recur import --strict.
func failIgnored(items []importItem) {
	for i := range items {
		it := &items[i]
		if it.outcome != "" || len(it.Warnings) == 0 {
			continue
		}
		var paths []string
		for _, w := range it.Warnings {
			paths = append(paths, migrate.Shorten(w.Path))
		}
		it.outcome, it.detail = outcomeFailed, "--strict: holds what recur does not have: "+strings.Join(paths, ", ")
	}
}

// each does step to items, at most im.concurrency at once. collectionOf,
// when not nil, returns a job's collection item, nil when the files do not
// define it.
func (im *importer) each(ctx context.Context, items []*importItem, collectionOf func(*importItem) *importItem, step func(ctx context.Context, it, coll *importItem)) {
	slots := make(chan struct{}, im.concurrency)
	var wg sync.WaitGroup
	for _, it := range items {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			// Interrupted: nothing more is sent.
			if it.outcome == "" {
				it.outcome, it.detail = outcomeStopped, "not sent: the import was interrupted"
			}
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			var coll *importItem
			if collectionOf != nil {
				coll = collectionOf(it)
			}
			step(ctx, it, coll)
			if im.bar != nil {
				im.bar.step()
			}
		})
	}
	wg.Wait()
}

// write writes an item that passed its check, whose collection's item is
// coll (nil for a collection, or a job whose collection the files do not
// define).
func (im *importer) write(ctx context.Context, it, coll *importItem) {
	switch {
	case it.plan.outcome == "":
		return // it failed its check, which says why
	case coll != nil && !coll.done():
		it.outcome, it.detail = outcomeSkipped, "its collection "+coll.Collection+" was not imported"
		return
	}
	answer, err := im.client.putApplying(ctx, im.path(it.Resource), it.Body, jobs.ApplyIfChanged)
	switch {
	case err != nil && ctx.Err() != nil:
		it.outcome, it.detail = outcomeStopped, "interrupted while its PUT was in flight: recur may have written it"
	case err != nil:
		it.outcome, it.detail = outcomeFailed, err.Error()
	default:
		it.outcome, it.detail = answer.outcome, it.cutoverNote(answer.outcome)
	}
}

// needsSummary names what a resource lacks, each once, for its row of
// the table.
func needsSummary(missing []migrate.Missing) string {
	var names []string
	seen := map[string]bool{}
	for _, m := range missing {
		if name := migrate.Shorten(cmp.Or(m.Name, m.Flag, m.Path)); !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return "needs " + strings.Join(names, ", ")
}

// putAnswer is the answer to a PUT with Recur-Apply.
type putAnswer struct {
	outcome string // its Recur-Outcome
	header  http.Header
	body    []byte
}

// putApplying PUTs body with Recur-Apply: apply and returns the answer.
func (c *apiClient) putApplying(ctx context.Context, path string, body []byte, apply jobs.Apply) (putAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.server.String()+path+"?"+withVersion(url.Values{}).Encode(), strings.NewReader(string(body)))
	if err != nil {
		return putAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Recur-Apply", string(apply))
	resp, data, err := c.exchange(req)
	if err != nil {
		return putAnswer{}, err
	}
	if resp.StatusCode/100 != 2 {
		return putAnswer{}, answerError(resp.Status, data)
	}
	outcome := resp.Header.Get("Recur-Outcome")
	if outcome == "" {
		return putAnswer{}, errors.New("the server's answer has no Recur-Outcome: is it a recur older than this command?")
	}
	return putAnswer{outcome: outcome, header: resp.Header, body: data}, nil
}

// dryRunWords are the outcomes as a dry run says them: what an import
// would do.
var dryRunWords = map[string]string{
	jobs.OutcomeCreated: "create", jobs.OutcomeUpdated: "update", jobs.OutcomeUnchanged: "unchanged",
	outcomeSkipped: "skip", outcomeFailed: "fail", outcomeStopped: "stopped",
}

// maxNeeds is how many lines of what the files leave to the user a report
// holds: a hostile file can leave millions.
const maxNeeds = 100

// printImport writes the summary table of an import, the values its
// skipped resources need, the files it read (read, for a dry run) and the
// count of each outcome. Texts from the files are shortened: an
// expression or a name can be megabytes long.
func printImport(w io.Writer, items []importItem, dryRun bool, read []string) error {
	word := func(outcome string) string {
		if dryRun {
			return dryRunWords[outcome]
		}
		return outcome
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tKIND\tNAME\tRESOURCE GROUP\tSOURCE\tDETAIL")
	counts := map[string]int{}
	for _, it := range items {
		counts[it.outcome]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", word(it.outcome), it.Kind, cell(migrate.Shorten(it.Name())), cell(migrate.Shorten(it.ResourceGroup)),
			cell(migrate.Shorten(it.Source.String())), cell(migrate.Shorten(it.detail)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printList(w, "What the files leave to you:", "  and %d more: the DETAIL column names them", items, func(it importItem) []string {
		return each(it.Missing, func(m migrate.Missing) string { return m.String() })
	})
	printWarnings(w, items)
	printAtOnce(w, items, dryRun)
	if len(read) > 0 {
		fmt.Fprintf(w, "\nFiles read:\n  %s\n", strings.Join(read, "\n  "))
	}
	var parts []string
	for _, outcome := range []string{jobs.OutcomeCreated, jobs.OutcomeUpdated, jobs.OutcomeUnchanged, outcomeSkipped, outcomeFailed} {
		parts = append(parts, fmt.Sprintf("%d %s", counts[outcome], word(outcome)))
	}
	summary := strings.Join(parts, ", ")
	switch {
	case counts[outcomeStopped] > 0:
		summary = fmt.Sprintf("interrupted: %s, %d stopped", summary, counts[outcomeStopped])
	case dryRun:
		summary = "dry run, nothing written: " + summary
	case counts[outcomeHeld] > 0:
		summary = fmt.Sprintf("nothing written, all or nothing: %s, %d held (--partial writes what passes)", summary, counts[outcomeHeld])
	}
	_, err := fmt.Fprintf(w, "\n%s\n", summary)
	return err
}

// printWarnings writes what the readers left out of the resources'
// bodies (migrate.Resource.Warnings).
func printWarnings(w io.Writer, items []importItem) {
	printList(w, "Members recur does not have, left out (--strict fails their resources):", "  and %d more", items, func(it importItem) []string {
		return each(it.Warnings, func(warning migrate.Warning) string { return warning.String() })
	})
}

// printAtOnce lists the jobs whose first run comes as soon as they are
// written (for a dry run, would be): a cutover must not call a target by
// surprise.
func printAtOnce(w io.Writer, items []importItem, dryRun bool) {
	verb := "run"
	if dryRun || slices.ContainsFunc(items, func(it importItem) bool { return it.outcome == outcomeHeld }) {
		verb = "would run"
	}
	printList(w, "Jobs that "+verb+" as soon as they are written:", "  and %d more: --disabled writes every job disabled", items, func(it importItem) []string {
		if it.plan.atOnce == "" || !(it.done() || it.outcome == outcomeHeld) {
			return nil
		}
		return []string{it.plan.atOnce}
	})
}

// printList writes heading and the lines of each item (lines), each
// after the item's kind and name, at most maxNeeds of them, then how many
// more (more, a format of their count): a hostile file can hold millions.
// It writes nothing when no item has a line.
func printList(w io.Writer, heading, more string, items []importItem, lines func(importItem) []string) {
	var out []string
	left := 0
	for _, it := range items {
		for _, line := range lines(it) {
			if len(out) == maxNeeds {
				left++
				continue
			}
			out = append(out, fmt.Sprintf("  %s %s: %s", it.Kind, migrate.Shorten(it.Name()), line))
		}
	}
	if left > 0 {
		out = append(out, fmt.Sprintf(more, left))
	}
	if len(out) > 0 {
		fmt.Fprintf(w, "\n%s\n%s\n", heading, strings.Join(out, "\n"))
	}
}

// each is f of every element of xs.
func each[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// progressBar draws how far an import is on one line of a terminal.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done  int
}

const barWidth = 30

func (b *progressBar) step() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done++
	filled := barWidth * b.done / max(b.total, 1)
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), b.done, b.total)
}

func (b *progressBar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done > 0 {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", barWidth+2+2*len(fmt.Sprint(b.total))+2))
	}
}

// errInterrupted is the reading of an import's files interrupted.
var errInterrupted = errors.New("interrupted")

// readFiles reads the files of an import, unless ctx ends first (Ctrl-C,
// SIGTERM): then the import stops at once, having written nothing, and
// leaves the reading to end with the process.
func readFiles(ctx context.Context, o importOptions) ([]migrate.Resource, []string, error) {
	type read struct {
		rs    []migrate.Resource
		files []string
		err   error
	}
	done := make(chan read, 1)
	go func() {
		rs, files, err := readImportFiles(ctx, o)
		done <- read{rs, files, err}
	}()
	select {
	case r := <-done:
		return r.rs, r.files, r.err
	case <-ctx.Done():
		return nil, nil, errInterrupted
	}
}

// readImportFiles reads the files of an import, each with its reader: a
// .json file is an ARM template; a .bicep file is one once the Bicep CLI
// has built it; a .tf file, or a directory of them, is Terraform. It
// returns the resources and every file it read; files that define none
// are an error. The readers share one budget of migrate.DefaultLimits. A
// variable, so that tests of the writing can give resources of their
// own.
var readImportFiles = func(ctx context.Context, o importOptions) ([]migrate.Resource, []string, error) {
	files, err := sortImportFiles(o.files)
	if err != nil {
		return nil, nil, err
	}
	budget := migrate.NewBudget(migrate.DefaultLimits)
	built, err := buildBicep(ctx, files.bicep, o.bicep, budget)
	if err != nil {
		return nil, nil, err
	}
	var rs []migrate.Resource
	if templates := append(files.templates, files.bicep...); len(templates) > 0 {
		read, err := arm.Read(templates, arm.Options{ParameterFiles: o.parameterFiles, Set: o.sets, Built: built,
			Subscription: o.addr.subscription, ResourceGroup: o.addr.resourceGroup, Location: o.location, Budget: budget})
		if err != nil {
			return nil, nil, err
		}
		rs = append(rs, read...)
	}
	if len(files.configs) > 0 {
		read, err := terraform.Read(files.configs, terraform.Options{Vars: o.vars, VarFiles: o.varFiles, Set: o.sets,
			ResourceGroup: o.addr.resourceGroup, Budget: budget})
		if err != nil {
			return nil, nil, err
		}
		rs = append(rs, read...)
	}
	if len(rs) == 0 {
		return nil, nil, fmt.Errorf("%w: read %s", errNothingToImport, strings.Join(budget.Files(), ", "))
	}
	return rs, budget.Files(), nil
}
