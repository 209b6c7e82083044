package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// maxMessage is the width of a history row's message in a table.
const maxMessage = 60

// kind is how a client command shows one kind of resource in a table.
type kind struct {
	plural  string
	columns []string
	row     func(json.RawMessage) ([]string, error)
}

var (
	jobKind = kind{plural: "jobs", row: jobRow,
		columns: []string{"NAME", "STATE", "RECURRENCE", "NEXT RUN", "LAST RUN", "EXECUTIONS", "FAILURES", "FAULTS"}}
	collectionKind = kind{plural: "job collections", row: collectionRow,
		columns: []string{"NAME", "RESOURCE GROUP", "STATE", "SKU", "MAX JOBS", "MAX RECURRENCE", "LOCATION"}}
	historyKind = kind{plural: "history rows", row: historyRow,
		columns: []string{"TIME", "ACTION", "STATUS", "RETRY", "MESSAGE"}}
	failureKind = kind{plural: "failures", row: failureRow,
		columns: []string{"FAILURE", "TIME", "KIND", "ANSWER", "ATTEMPTS", "MESSAGE"}}
)

// printOne prints one resource the API answered with.
func (k *kind) printOne(w io.Writer, format string, answer []byte) error {
	if format == "json" {
		return printJSON(w, answer)
	}
	return k.printTable(w, []json.RawMessage{answer})
}

// printList prints the values of every page of a list; as JSON, they are
// one list without a nextLink.
func (k *kind) printList(w io.Writer, format string, values []json.RawMessage) error {
	if format == "json" {
		if values == nil {
			values = []json.RawMessage{}
		}
		data, err := json.Marshal(struct {
			Value []json.RawMessage `json:"value"`
		}{values})
		if err != nil {
			return err
		}
		return printJSON(w, data)
	}
	return k.printTable(w, values)
}

// printTable is the one table printer: a header and a row for each value.
func (k *kind) printTable(w io.Writer, values []json.RawMessage) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(k.columns, "\t"))
	for _, v := range values {
		cells, err := k.row(v)
		if err != nil {
			return fmt.Errorf("read the answer: %w", err)
		}
		for i, c := range cells {
			cells[i] = cell(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// cell makes a value fit a table cell: no tabs, line breaks or terminal
// control sequences, which would break the table or the terminal; "-" for
// nothing.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if s == "" {
		return "-"
	}
	return s
}

// printJSON prints the API's JSON indented; an empty answer prints
// nothing.
func printJSON(w io.Writer, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}

// shortName is the last part of an ARM name ("coll/job" is job).
func shortName(name string) string { return name[strings.LastIndex(name, "/")+1:] }

func jobRow(data json.RawMessage) ([]string, error) {
	var j struct {
		Name       string `json:"name"`
		Properties struct {
			State      string           `json:"state"`
			Recurrence *recurrenceShape `json:"recurrence"`
			Status     struct {
				ExecutionCount    int        `json:"executionCount"`
				FailureCount      int        `json:"failureCount"`
				FaultedCount      int        `json:"faultedCount"`
				LastExecutionTime *time.Time `json:"lastExecutionTime"`
				NextExecutionTime *time.Time `json:"nextExecutionTime"`
			} `json:"status"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, err
	}
	p := j.Properties
	return []string{shortName(j.Name), p.State, p.Recurrence.summary(),
		timeCell(p.Status.NextExecutionTime), timeCell(p.Status.LastExecutionTime),
		strconv.Itoa(p.Status.ExecutionCount), strconv.Itoa(p.Status.FailureCount), strconv.Itoa(p.Status.FaultedCount)}, nil
}

func collectionRow(data json.RawMessage) ([]string, error) {
	var c struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Location   string `json:"location"`
		Properties struct {
			State string `json:"state"`
			Sku   struct {
				Name string `json:"name"`
			} `json:"sku"`
			Quota struct {
				MaxJobCount   *int             `json:"maxJobCount"`
				MaxRecurrence *recurrenceShape `json:"maxRecurrence"`
			} `json:"quota"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	p := c.Properties
	maxJobs := ""
	if p.Quota.MaxJobCount != nil {
		maxJobs = strconv.Itoa(*p.Quota.MaxJobCount)
	}
	maxRecurrence := ""
	if p.Quota.MaxRecurrence != nil {
		maxRecurrence = p.Quota.MaxRecurrence.summary()
	}
	return []string{c.Name, resourceGroupOf(c.ID), p.State, p.Sku.Name, maxJobs, maxRecurrence, c.Location}, nil
}

// resourceGroupOf reads the resource group of an ARM ID.
func resourceGroupOf(id string) string {
	parts := strings.Split(id, "/")
	for i := 0; i+1 < len(parts); i++ {
		if strings.EqualFold(parts[i], "resourceGroups") {
			return parts[i+1]
		}
	}
	return ""
}

func historyRow(data json.RawMessage) ([]string, error) {
	var h struct {
		Properties struct {
			StartTime             *time.Time `json:"startTime"`
			ExpectedExecutionTime time.Time  `json:"expectedExecutionTime"`
			ActionName            string     `json:"actionName"`
			Status                string     `json:"status"`
			Message               string     `json:"message"`
			RetryCount            int        `json:"retryCount"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, err
	}
	p := h.Properties
	at := p.StartTime
	if at == nil {
		at = &p.ExpectedExecutionTime
	}
	return []string{timeCell(at), p.ActionName, p.Status, strconv.Itoa(p.RetryCount), clip(p.Message, maxMessage)}, nil
}

// failureRow is a failure's row: its ID (what recur jobs rerun takes),
// its nominal time, its kind, the status of its last answer, its attempts
// and its message.
func failureRow(data json.RawMessage) ([]string, error) {
	var f struct {
		Name       string `json:"name"`
		Properties struct {
			ExpectedExecutionTime time.Time `json:"expectedExecutionTime"`
			Kind                  string    `json:"kind"`
			Response              struct {
				Status string `json:"status"`
			} `json:"response"`
			Attempts int    `json:"attempts"`
			Message  string `json:"message"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	p := f.Properties
	id := f.Name[strings.LastIndexByte(f.Name, '/')+1:]
	return []string{id, timeCell(&p.ExpectedExecutionTime), p.Kind, p.Response.Status, strconv.Itoa(p.Attempts), clip(p.Message, maxMessage)}, nil
}

func timeCell(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// recurrenceShape is what a table shows of a recurrence (or of a
// collection's maxRecurrence).
type recurrenceShape struct {
	Cron      string            `json:"cron"`
	RRule     string            `json:"rrule"`
	Rules     []json.RawMessage `json:"rules"`
	Frequency string            `json:"frequency"`
	Interval  *int              `json:"interval"`
	Schedule  *struct {
		Minutes            []int           `json:"minutes"`
		Hours              []int           `json:"hours"`
		WeekDays           []string        `json:"weekDays"`
		MonthDays          []int           `json:"monthDays"`
		MonthlyOccurrences json.RawMessage `json:"monthlyOccurrences"`
	} `json:"schedule"`
	Count    *int   `json:"count"`
	EndTime  string `json:"endTime"`
	TimeZone string `json:"timeZone"`
}

// summary is a recurrence in a few words: "every 2 days; hours 2;
// minutes 30; Europe/Berlin; until ...". No recurrence runs once.
func (r *recurrenceShape) summary() string {
	if r == nil || (r.Frequency == "" && r.Cron == "" && r.RRule == "" && r.Rules == nil) {
		return "once"
	}
	unit := strings.ToLower(r.Frequency)
	parts := []string{"every " + unit}
	if r.Interval != nil && *r.Interval != 1 {
		parts[0] = fmt.Sprintf("every %d %ss", *r.Interval, unit)
	}
	if r.Cron != "" {
		parts[0] = "cron " + r.Cron
	}
	if r.RRule != "" {
		parts[0] = "rrule " + strings.Join(strings.Fields(r.RRule), " / ")
	}
	if r.Rules != nil {
		parts[0] = fmt.Sprintf("%d rules", len(r.Rules))
	}
	if s := r.Schedule; s != nil {
		parts = appendList(parts, "minutes", s.Minutes)
		parts = appendList(parts, "hours", s.Hours)
		parts = appendList(parts, "weekdays", s.WeekDays)
		parts = appendList(parts, "month days", s.MonthDays)
		if len(s.MonthlyOccurrences) > 0 && string(s.MonthlyOccurrences) != "null" {
			parts = append(parts, "monthly occurrences "+string(s.MonthlyOccurrences))
		}
	}
	if r.TimeZone != "" {
		parts = append(parts, r.TimeZone)
	}
	if r.Count != nil {
		parts = append(parts, fmt.Sprintf("%d times", *r.Count))
	}
	if r.EndTime != "" {
		parts = append(parts, "until "+r.EndTime)
	}
	return strings.Join(parts, "; ")
}

func appendList[T any](parts []string, name string, values []T) []string {
	if len(values) == 0 {
		return parts
	}
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = fmt.Sprint(v)
	}
	return append(parts, name+" "+strings.Join(s, ","))
}
