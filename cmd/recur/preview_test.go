package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedJob is rule 3's example in docs/recurrence.md: every 2 days from a past
// startTime, planned at 2015-04-08T13:00Z.
const (
	seedJob = `{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","interval":2}}`
	seedNow = "2015-04-08T13:00:00Z"
	seedOut = "2015-04-09T14:00:00Z\n2015-04-11T14:00:00Z\n2015-04-13T14:00:00Z\n2015-04-15T14:00:00Z\n"
)

// clock is the "now" of tests that give no --now; its half second shows
// that the creation time is truncated to whole seconds.
func clock() time.Time { return time.Date(2015, 4, 8, 13, 0, 7, 5e8, time.UTC) }

func runPreviewTest(t *testing.T, args []string, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runPreview(args, strings.NewReader(stdin), &out, &errOut, clock)
	return out.String(), errOut.String(), code
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestPreview(t *testing.T) {
	seedFile := writeTemp(t, seedJob)
	every15Minutes := ""
	for i := range 10 {
		every15Minutes += clock().Truncate(time.Second).Add(time.Duration(i)*15*time.Minute).Format(time.RFC3339) + "\n"
	}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"seed example", []string{"--now", seedNow, "--count", "4"}, seedJob, seedOut},
		{"flag=value and single dash", []string{"-now=" + seedNow, "-count=4"}, seedJob, seedOut},
		{"whole job definition", []string{"--now", seedNow, "--count", "4"},
			`{"id":"/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler/jobCollections/c/jobs/j","name":"c/j","properties":` + seedJob + `}`, seedOut},
		{"properties in any letter case", []string{"--now", seedNow, "--count", "4"}, `{"PROPERTIES":` + seedJob + `}`, seedOut},
		{"--file instead of stdin", []string{"--file", seedFile, "--now", seedNow, "--count", "4"}, "stdin is not read", seedOut},
		{"--rrule instead of JSON", []string{"--now", "2027-01-01T00:00:00Z", "--count", "3", "--rrule", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=3"},
			"stdin is not read", "2027-01-05T00:00:00Z\n2027-02-03T00:00:00Z\n2027-03-03T00:00:00Z\n"},
		{"--rrule with DTSTART's zone", []string{"--now", "2027-01-01T00:00:00Z", "--count", "2", "--rrule", "DTSTART;TZID=Europe/Berlin:20270101T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO"},
			"", "2027-01-04T08:00:00Z\n2027-01-11T08:00:00Z\n"},
		{"--tz-output Windows name", []string{"--now", seedNow, "--count", "2", "--tz-output", "W. Europe Standard Time"}, seedJob,
			"2015-04-09T16:00:00+02:00\n2015-04-11T16:00:00+02:00\n"},
		{"--tz-output IANA name across a DST change", []string{"--now", "2015-03-08T06:00:00Z", "--count", "3", "--tz-output", "America/New_York"},
			`{"startTime":"2015-03-08T06:00:00Z","recurrence":{"frequency":"Hour"}}`,
			"2015-03-08T01:00:00-05:00\n2015-03-08T03:00:00-04:00\n2015-03-08T04:00:00-04:00\n"},
		{"recurrence timeZone keeps the wall clock across DST", []string{"--now", "2015-03-06T00:00:00Z", "--count", "3"},
			`{"startTime":"2015-03-06T09:00:00-05:00","recurrence":{"frequency":"Day","timeZone":"Eastern Standard Time"}}`,
			"2015-03-06T14:00:00Z\n2015-03-07T14:00:00Z\n2015-03-08T13:00:00Z\n"},
		{"a run a DST transition moved says so", []string{"--now", "2026-03-27T00:00:00Z", "--count", "3"},
			`{"startTime":"2026-03-28T00:00:00Z","recurrence":{"frequency":"Day","timeZone":"Europe/Berlin","schedule":{"hours":[2],"minutes":[30]}}}`,
			"2026-03-28T01:30:00Z\n2026-03-29T01:30:00Z  # DST moved it: 2026-03-29T02:30:00 did not exist\n2026-03-30T00:30:00Z\n"},
		{"recur's Second frequency", []string{"--now", seedNow, "--count", "3"},
			`{"startTime":"2015-04-08T13:00:05Z","recurrence":{"frequency":"Second","interval":10}}`,
			"2015-04-08T13:00:05Z\n2015-04-08T13:00:15Z\n2015-04-08T13:00:25Z\n"},
		{"a six-field cron, seconds first", []string{"--now", seedNow, "--count", "3"},
			`{"recurrence":{"cron":"15,45 0 14 * * *"}}`,
			"2015-04-08T14:00:15Z\n2015-04-08T14:00:45Z\n2015-04-09T14:00:15Z\n"},
		{"default count 10 and the clock as now", nil, `{"recurrence":{"frequency":"Minute","interval":15}}`, every15Minutes},
		{"recurrence count ends before --count", []string{"--now", seedNow, "--count", "5"},
			`{"startTime":"2015-04-09T14:00Z","recurrence":{"frequency":"Week","count":3}}`,
			"2015-04-09T14:00:00Z\n2015-04-16T14:00:00Z\n2015-04-23T14:00:00Z\n"},
		{"one-time job in the past runs at once", []string{"--now", seedNow}, `{"startTime":"2015-04-07T14:00Z"}`, seedNow + "\n"},
		{"never runs again: endTime passed", []string{"--now", "2015-04-10T00:00:00Z"},
			`{"properties":{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","endTime":"2015-04-08T00:00Z"}}}`, ""},
		{"fractional seconds are kept", []string{"--now", seedNow, "--count", "1"},
			`{"startTime":"2015-04-07T14:00:00.25Z","recurrence":{"frequency":"Day","interval":2}}`, "2015-04-09T14:00:00.25Z\n"},
		{"a whole job as GET answers it, free-form members and all", []string{"--now", seedNow, "--count", "4"},
			`{"id":"/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler/jobCollections/c/jobs/j","type":"Microsoft.Scheduler/jobCollections/jobs",` +
				`"name":"c/j","etag":"\"e-1\"","properties":{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","interval":2},` +
				`"action":{"type":"Workflow","workflow":{"workflowType":"w","taskQueue":"q","input":{"anyName":[null],"AnyName":1}},` +
				`"errorAction":{"type":"Http","request":{"uri":"http://a.example/","method":"GET","headers":{"X-Whatever":"1"}}}},` +
				`"state":"enabled","status":{"executionCount":0,"failureCount":0,"faultedCount":0}}}`, seedOut},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runPreviewTest(t, tc.args, tc.stdin)
			require.Equal(t, 0, code, "stderr: %s", stderr)
			assert.Empty(t, stderr)
			assert.Equal(t, tc.want, stdout)
		})
	}
}

func TestPreviewErrors(t *testing.T) {
	seedArgs := []string{"--now", seedNow}
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string // stderr starts with "recur preview: " + want
	}{
		{"bad JSON", seedArgs, `{"startTime":`, "invalid JSON"},
		{"--rrule: a part's error names its position", []string{"--rrule", "FREQ=MONTHLY;BYSETPOS=0;BYDAY=MO"}, "", "recurrence.rrule: BYSETPOS=0 at character 14"},
		{"--rrule and --file", []string{"--rrule", "FREQ=DAILY", "--file", "x.json"}, "", "--rrule and --file: give one"},
		{"trailing data", seedArgs, seedJob + ` {}`, "invalid JSON: more than one value"},
		{"empty stdin", seedArgs, " \n", "must be a JSON object with startTime and recurrence, not empty input"},
		{"not an object", seedArgs, `[1]`, `must be a JSON object with startTime and recurrence, not "[1]"`},
		{"null", seedArgs, `null`, `must be a JSON object with startTime and recurrence, not "null"`},
		{"interval out of range", seedArgs, `{"recurrence":{"frequency":"Day","interval":0}}`, "recurrence.interval: must be between 1 and 548"},
		{"properties: interval out of range", seedArgs, `{"properties":{"recurrence":{"frequency":"Day","interval":0}}}`,
			"properties.recurrence.interval: must be between 1 and 548"},
		{"properties: interval not an integer", seedArgs, `{"properties":{"recurrence":{"frequency":"Day","interval":"2"}}}`,
			"properties.recurrence.interval: must be an integer"},
		{"properties: bad startTime", seedArgs, `{"properties":{"startTime":"2015-13-01"}}`, "properties.startTime: must be an ISO 8601 date-time"},
		{"properties: missing frequency", seedArgs, `{"properties":{"recurrence":{"interval":2}}}`, "properties.recurrence.frequency: is required"},
		{"properties: unknown field", seedArgs, `{"properties":{"recurrence":{"frequency":"Day","frequncy":"Week"}}}`,
			"properties.recurrence.frequncy: is not a property of recurrence"},
		{"properties: unknown timeZone", seedArgs, `{"properties":{"recurrence":{"frequency":"Day","timeZone":"Mars/Olympus"}}}`,
			`properties.recurrence.timeZone: "Mars/Olympus" is not a time zone`},
		{"properties: endTime before startTime", seedArgs,
			`{"properties":{"startTime":"2015-04-07T14:00Z","recurrence":{"frequency":"Day","endTime":"2015-04-01"}}}`,
			"properties.recurrence.endTime: 2015-04-01T00:00:00Z is before startTime"},
		{"properties: schedule entry out of range", seedArgs, `{"properties":{"recurrence":{"frequency":"Day","schedule":{"hours":[1,24]}}}}`,
			"properties.recurrence.schedule.hours[1]: must be between 0 and 23"},
		{"properties: never occurs (Compile)", seedArgs,
			`{"properties":{"startTime":"2015-02-01T00:00Z","recurrence":{"frequency":"Month","interval":12,"schedule":{"monthDays":[30]}}}}`,
			"properties.recurrence.schedule: this recurrence never occurs"},
		{"the issue's properties typo", seedArgs, `{"properties":{"maxConcurentRuns":2,"recurrence":{"frequency":"Day"}}}`,
			"properties.maxConcurentRuns: is not a property of properties; did you mean maxConcurrentRuns?"},
		{"the issue's retry policy typo", seedArgs,
			`{"properties":{"action":{"type":"Http","retryPolicy":{"retryIntervall":"00:01:00"}},"recurrence":{"frequency":"Day"}}}`,
			"properties.action.retryPolicy.retryIntervall: is not a property of retryPolicy; did you mean retryInterval?"},
		{"a typo in job properties", seedArgs, `{"startTme":"2015-04-07T14:00Z","recurrence":{"frequency":"Day"}}`,
			"startTme: is not a property of the body; did you mean startTime?"},
		{"a typo in a whole job", seedArgs, `{"nmae":"c/j","properties":{"recurrence":{"frequency":"Day"}}}`,
			"nmae: is not a property of the body; did you mean name?"},
		{"a typo in a monthly occurrence", seedArgs,
			`{"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Monday"},{"day":"Friday","ocurrence":1}]}}}`,
			"recurrence.schedule.monthlyOccurrences[1].ocurrence: is not a property of monthlyOccurrences; did you mean occurrence?"},
		{"a member given twice", seedArgs, `{"startTime":"2015-04-07T14:00Z","StartTime":"2015-04-09T14:00Z","recurrence":{"frequency":"Day"}}`,
			`StartTime: "startTime" and "StartTime" are the same member (names match in any letter case); give it once`},
		{"null in an array", seedArgs, `{"properties":{"recurrence":{"frequency":"Hour","schedule":{"minutes":[null]}}}}`,
			"properties.recurrence.schedule.minutes[0]: null is not allowed in an array"},
		{"properties not an object", seedArgs, `{"properties":5}`, `properties: must be a JSON object with startTime and recurrence, not "5"`},
		{"properties null", seedArgs, `{"properties":null}`, `properties: must be a JSON object with startTime and recurrence, not "null"`},
		{"--count zero", []string{"--count", "0"}, seedJob, "--count: must be at least 1, not 0"},
		{"--count not a number", []string{"--count", "four"}, seedJob, `invalid value "four" for flag -count`},
		{"--now not RFC 3339", []string{"--now", "2015-04-08 13:00"}, seedJob, "--now: want an RFC 3339 time"},
		{"--tz-output unknown", []string{"--tz-output", "Mars/Olympus"}, seedJob, `--tz-output: "Mars/Olympus" is not a time zone`},
		{"--file missing", []string{"--file", filepath.Join(t.TempDir(), "missing.json")}, seedJob, "--file: open "},
		{"--file empty", []string{"--file", writeTemp(t, "")}, seedJob, "must be a JSON object with startTime and recurrence, not empty input"},
		{"unknown flag", []string{"--counts", "3"}, seedJob, "flag provided but not defined: -counts"},
		{"positional argument", []string{"job.json"}, seedJob, `unexpected argument "job.json"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runPreviewTest(t, tc.args, tc.stdin)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "recur preview: "+tc.want), "stderr: %s", stderr)
		})
	}
}

func TestPreviewHelp(t *testing.T) {
	stdout, stderr, code := runPreviewTest(t, []string{"-h"}, "")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	for _, flag := range []string{"-count N", "-now TIME", "-tz-output ZONE", "-file PATH"} {
		assert.Contains(t, stdout, flag)
	}
}

// TestBinary builds the real command and runs it as a user would.
func TestBinary(t *testing.T) {
	bin := buildRecur(t)

	run := func(stdin string, args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return o.String(), e.String(), exitErr.ExitCode()
		}
		require.NoError(t, err)
		return o.String(), e.String(), 0
	}

	t.Run("preview", func(t *testing.T) {
		stdout, stderr, code := run(seedJob, "preview", "--now", seedNow, "--count", "4")
		require.Equal(t, 0, code, "stderr: %s", stderr)
		assert.Equal(t, seedOut, stdout)
	})
	t.Run("preview with a Windows zone", func(t *testing.T) {
		stdout, stderr, code := run(seedJob, "preview", "--now", seedNow, "--count", "1", "--tz-output", "Tokyo Standard Time")
		require.Equal(t, 0, code, "stderr: %s", stderr)
		assert.Equal(t, "2015-04-09T23:00:00+09:00\n", stdout)
	})
	t.Run("preview of invalid input", func(t *testing.T) {
		stdout, stderr, code := run(`{"properties":{"recurrence":{"frequency":"Fortnight"}}}`, "preview")
		assert.Equal(t, 2, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "recur preview: properties.recurrence.frequency: ")
	})
	t.Run("--help prints the usage", func(t *testing.T) {
		stdout, _, code := run("", "--help")
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "recur serve")
	})
	t.Run("a bad flag of dev exits 2 before starting anything", func(t *testing.T) {
		_, stderr, code := run("", "--retention", "soon")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "want a number of days")
	})
	t.Run("help", func(t *testing.T) {
		stdout, _, code := run("", "help")
		assert.Equal(t, 0, code)
		assert.Contains(t, stdout, "recur preview")
	})
	t.Run("unknown command", func(t *testing.T) {
		_, stderr, code := run("", "frobnicate")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, `unknown command "frobnicate"`)
	})
}
