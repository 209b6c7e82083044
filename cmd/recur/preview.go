package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/recurrence"
)

const previewSynopsis = "usage: recur preview [--count N] [--now TIME] [--tz-output ZONE] [--file PATH | --rrule TEXT] < job.json"

// previewOptions are the flags of recur preview, parsed and checked.
type previewOptions struct {
	count int
	now   time.Time
	out   *time.Location
	file  string
	rrule string // RFC 5545 text, previewed as a job's recurrence.rrule
}

// runPreview prints the next occurrences of the job or job properties read
// from stdin (or --file), one RFC 3339 time a line. Invalid input exits 2
// with the JSON path of the bad field on stderr and nothing on stdout.
func runPreview(args []string, stdin io.Reader, stdout, stderr io.Writer, now func() time.Time) int {
	fs, opts, err := parsePreviewFlags(args, now)
	if errors.Is(err, flag.ErrHelp) {
		printPreviewUsage(stdout, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "recur preview: %v\n%s\n", err, previewSynopsis)
		return 2
	}
	times, shifts, err := preview(opts, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "recur preview: %v\n", err)
		return 2
	}
	var b strings.Builder
	for _, t := range times {
		b.WriteString(t.In(opts.out).Format(time.RFC3339Nano))
		// A run a DST transition moved or repeated says so after the
		// time, as a comment that line-by-line readers can cut off.
		if len(shifts) > 0 && shifts[0].Time.Equal(t) {
			b.WriteString("  # " + shifts[0].String())
			shifts = shifts[1:]
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		fmt.Fprintf(stderr, "recur preview: write output: %v\n", err)
		return 1
	}
	return 0
}

// parsePreviewFlags returns the flag set (for its usage) and the checked
// options; the error is flag.ErrHelp when help was asked for.
func parsePreviewFlags(args []string, now func() time.Time) (*flag.FlagSet, previewOptions, error) {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	// runPreview prints errors and usage itself, in its own format.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	opts := previewOptions{out: time.UTC}
	var nowFlag, tzOutput string
	fs.IntVar(&opts.count, "count", 10, "print the next `N` occurrences (at least 1)")
	fs.StringVar(&nowFlag, "now", "", "the current and creation `TIME` of the job, RFC 3339 (default the clock)")
	fs.StringVar(&tzOutput, "tz-output", "", "print times in `ZONE` (IANA or Windows name) instead of UTC")
	fs.StringVar(&opts.file, "file", "", "read the JSON from `PATH` instead of stdin")
	fs.StringVar(&opts.rrule, "rrule", "", "preview the RFC 5545 `TEXT` (an RRULE value, or DTSTART, RRULE, RDATE and EXDATE lines) as a job's recurrence.rrule, instead of JSON")
	if err := fs.Parse(args); err != nil {
		return fs, opts, err
	}
	if fs.NArg() > 0 {
		return fs, opts, fmt.Errorf("unexpected argument %q: the JSON comes on stdin or with --file", fs.Arg(0))
	}
	if opts.rrule != "" && opts.file != "" {
		return fs, opts, errors.New("--rrule and --file: give one")
	}
	if opts.count < 1 {
		return fs, opts, fmt.Errorf("--count: must be at least 1, not %d", opts.count)
	}
	opts.now = now()
	if nowFlag != "" {
		t, err := time.Parse(time.RFC3339, nowFlag)
		if err != nil {
			return fs, opts, fmt.Errorf("--now: want an RFC 3339 time such as 2015-04-08T13:00:00Z: %w", err)
		}
		opts.now = t
	}
	if tzOutput != "" {
		loc, err := recurrence.LoadLocation(tzOutput)
		if err != nil {
			return fs, opts, fmt.Errorf("--tz-output: %w", err)
		}
		opts.out = loc
	}
	return fs, opts, nil
}

func printPreviewUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `%s

Prints the next occurrences of a job's schedule, one RFC 3339 time a line.
The JSON is a job's properties ({"startTime": ..., "recurrence": {...}}) or
a whole job definition ({"properties": {...}}); its recurrence may hold an
rrule or a list of rules. --rrule previews RFC 5545 text alone, read in UTC
unless its DTSTART names a TZID:

  recur preview --rrule 'FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3'
  recur preview --rrule $'DTSTART;TZID=Europe/Berlin:20270101T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO'


Flags:
`, previewSynopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// preview reads the input and computes its occurrences. The job is taken
// as created at opts.now, so past start times follow rule 3 of
// docs/recurrence.md and a job without startTime runs at once. The input
// meets the API's rule for member names first, as POST /recur/v1/preview
// does: a name no job has, a member given twice or null in an array is
// refused, never dropped or read as a zero.
func preview(opts previewOptions, stdin io.Reader) ([]time.Time, []recurrence.Shifted, error) {
	var data []byte
	var err error
	if opts.rrule != "" {
		data, err = json.Marshal(map[string]any{"recurrence": map[string]string{"rrule": opts.rrule}})
	} else {
		data, err = readInput(opts.file, stdin)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := jobs.CheckPreviewMembers(data); err != nil {
		return nil, nil, err
	}
	return recurrence.PreviewJob(data, opts.now, opts.now, opts.count)
}

func readInput(file string, stdin io.Reader) ([]byte, error) {
	source := "stdin"
	var data []byte
	var err error
	if file != "" {
		source = "--file"
		data, err = os.ReadFile(file)
	} else {
		data, err = io.ReadAll(stdin)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return data, nil
}
