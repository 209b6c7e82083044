package jobs

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/recurhq/recur/recurrence"
)

// Summaries are Temporal's user metadata: the one line the Web UI and
// `temporal workflow describe` show for a workflow. They are payloads, so
// recur's codec encrypts them like everything else, but they must name no
// secret even so: a target appears as scheme, host and path, never with
// its query, user info, fragment, headers, body or authentication.

// MaxSummary bounds a summary in bytes: Temporal servers may refuse a
// summary payload over 400 bytes (limit.userMetadataSummarySize), and the
// codec's envelope adds about 80.
const MaxSummary = 200

// CollectionSummary is the summary of k's collection workflow.
func CollectionSummary(k Key) string {
	return clip(fmt.Sprintf("collection %s (subscription %s, resource group %s)", k.Collection, k.Subscription, k.ResourceGroup))
}

// JobSummary is the summary of k's job workflow, from the definition it
// starts with: "job coll1/job1: every 5 minutes → POST https://host/path".
// A later PUT changes the job, not the summary (Temporal keeps it for the
// workflow's run); the job workflow's current details are live.
func JobSummary(k Key, j Job) string {
	p := j.Properties
	s := fmt.Sprintf("job %s/%s: %s", k.Collection, k.Job, DescribeSchedule(p.Schedule()))
	if p.Action != nil {
		s += " → " + DescribeAction(p.Action.ActionSpec)
	}
	return clip(s)
}

// OccurrenceSummary is the summary of the local activity that runs one
// action of an occurrence, which the Web UI shows on its marker in the
// job's history: "occurrence 2026-11-21T10:00:00Z of coll1/job1 → POST
// https://host/path", "error action of occurrence ..." for the error
// action.
func OccurrenceSummary(k Key, nominal time.Time, actionName string, spec ActionSpec) string {
	what := "occurrence"
	if actionName == ErrorAction {
		what = "error action of occurrence"
	}
	return clip(fmt.Sprintf("%s %s of %s/%s → %s", what, nominal.UTC().Format(time.RFC3339Nano),
		k.Collection, k.Job, DescribeAction(spec)))
}

// Details describes a job as it is now, in Markdown: its state, next
// occurrence, schedule, action, counters and what ails it. The job workflow shows it as
// its current details (workflow.SetCurrentDetails).
func (s *JobState) Details() string {
	// fmt.Sprintf, not a Builder with Fprintf: workflowcheck takes any
	// write to an io.Writer for I/O, and this runs in the job workflow.
	p := s.Job.Properties
	d := "**" + string(p.State) + "**"
	if s.Next != nil && p.State == Enabled {
		d += ", next occurrence " + s.Next.UTC().Format(time.RFC3339)
	}
	d += "\n\n- schedule: " + DescribeSchedule(p.Schedule()) + "\n"
	if p.Action != nil {
		d += "- action: " + DescribeAction(p.Action.ActionSpec) + "\n"
		if e := p.Action.ErrorAction; e != nil {
			d += "- error action: " + DescribeAction(*e) + "\n"
		}
	}
	if st := p.Status; st != nil {
		d += fmt.Sprintf("- runs: %d, failed attempts %d, faulted %d", st.ExecutionCount, st.FailureCount, st.FaultedCount)
		if st.LastExecutionTime != nil {
			d += ", last started " + st.LastExecutionTime.UTC().Format(time.RFC3339)
		}
		d += "\n" + s.healthDetails(*st)
	}
	return d
}

// healthDetails are the lines of Details that say what ails a job, none
// for a healthy one.
func (s *JobState) healthDetails(st Status) string {
	d := ""
	if st.ConsecutiveFailures > 0 {
		d += fmt.Sprintf("- failing: %d runs in a row", st.ConsecutiveFailures)
		if s.FailingSince != nil {
			d += " since " + s.FailingSince.UTC().Format(time.RFC3339)
		}
		d += "\n"
	}
	if st.PostponedCount > 0 || st.MissedCount > 0 {
		d += fmt.Sprintf("- not run: %d postponed, %d missed", st.PostponedCount, st.MissedCount)
		if st.LastMissedTime != nil {
			d += ", the last due " + st.LastMissedTime.UTC().Format(time.RFC3339)
		}
		d += "\n"
	}
	if st.LastLateness != nil && LatenessBucket(time.Duration(*st.LastLateness)) != "" {
		d += "- last scheduled run started " + st.LastLateness.String() + " late\n"
	}
	return d
}

// DescribeSchedule says in words when a job runs: "once at ...",
// "every 5 minutes", "every week (weekDays monday, hours 9) in
// Europe/Berlin, 10 times, until ...".
func DescribeSchedule(d recurrence.Definition) string {
	r := d.Recurrence
	if r == nil {
		if d.StartTime == nil {
			return "once"
		}
		return "once at " + d.StartTime.String()
	}
	n := 1
	if r.Interval != nil {
		n = *r.Interval
	}
	unit := strings.ToLower(string(r.Frequency))
	s := "every " + unit
	if n != 1 {
		s = fmt.Sprintf("every %d %ss", n, unit)
	}
	if r.Cron != "" {
		s = "cron " + strings.TrimSpace(r.Cron)
	}
	if r.RRule != "" {
		s = "rrule " + oneLine(r.RRule)
	}
	if sc := describeAdvanced(r.Schedule); sc != "" {
		s += " (" + sc + ")"
	}
	if r.Rules != nil {
		parts := make([]string, len(r.Rules))
		for i, m := range r.Rules {
			parts[i] = describeRule(m)
		}
		s = fmt.Sprintf("%d rules: %s", len(r.Rules), strings.Join(parts, "; "))
	}
	if r.TimeZone != "" {
		s += " in " + r.TimeZone
	}
	if n := len(r.Exclusions); n > 0 {
		s += fmt.Sprintf(", except %d exclusion(s)", n)
	}
	if r.Count != nil {
		s += fmt.Sprintf(", %d times", *r.Count)
	}
	if r.EndTime != nil {
		s += ", until " + r.EndTime.String()
	}
	return s
}

// describeRule says in words when one rule of a list runs.
func describeRule(m recurrence.RuleSpec) string {
	switch {
	case m.Cron != "":
		return "cron " + strings.TrimSpace(m.Cron)
	case m.RRule != "":
		return "rrule " + oneLine(m.RRule)
	}
	s := DescribeSchedule(recurrence.Definition{Recurrence: &recurrence.Recurrence{Frequency: m.Frequency, Interval: m.Interval}})
	if sc := describeAdvanced(m.Schedule); sc != "" {
		s += " (" + sc + ")"
	}
	return s
}

// oneLine is an rrule's lines joined by " / ", for a one-line summary.
func oneLine(text string) string {
	var lines []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " / ")
}

func describeAdvanced(sc *recurrence.Schedule) string {
	if sc == nil {
		return ""
	}
	var parts []string
	ints := func(name string, v []int) {
		if len(v) == 0 {
			return
		}
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = strconv.Itoa(x)
		}
		parts = append(parts, name+" "+strings.Join(s, ","))
	}
	ints("minutes", sc.Minutes)
	ints("hours", sc.Hours)
	if len(sc.WeekDays) > 0 {
		days := make([]string, len(sc.WeekDays))
		for i, d := range sc.WeekDays {
			days[i] = string(d)
		}
		parts = append(parts, "weekDays "+strings.Join(days, ","))
	}
	ints("monthDays", sc.MonthDays)
	if len(sc.MonthlyOccurrences) > 0 {
		occ := make([]string, len(sc.MonthlyOccurrences))
		for i, o := range sc.MonthlyOccurrences {
			occ[i] = string(o.Day)
			if o.Occurrence != nil {
				occ[i] += " " + strconv.Itoa(*o.Occurrence)
			}
		}
		parts = append(parts, "monthlyOccurrences "+strings.Join(occ, ","))
	}
	return strings.Join(parts, ", ")
}

// DescribeAction names an action's target without its secrets: the
// method and the URL without query, user info or fragment; the storage
// account and queue; the Service Bus namespace and entity; the workflow
// type and task queue.
func DescribeAction(a ActionSpec) string {
	switch {
	case a.Request != nil:
		return strings.ToUpper(a.Request.Method) + " " + PublicURL(a.Request.URI)
	case a.QueueMessage != nil:
		return fmt.Sprintf("storage queue %s/%s", a.QueueMessage.StorageAccount, a.QueueMessage.QueueName)
	case a.ServiceBusQueueMessage != nil:
		m := a.ServiceBusQueueMessage
		return fmt.Sprintf("Service Bus queue %s/%s", m.Namespace, m.QueueName)
	case a.ServiceBusTopicMessage != nil:
		m := a.ServiceBusTopicMessage
		return fmt.Sprintf("Service Bus topic %s/%s", m.Namespace, m.TopicPath)
	case a.Workflow != nil:
		w := a.Workflow
		s := fmt.Sprintf("workflow %s on task queue %s", w.WorkflowType, w.TaskQueue)
		if w.Namespace != "" {
			s += " in namespace " + w.Namespace
		}
		return s
	}
	return a.Type
}

// PublicURL is raw without what may hold a secret: user info, query and
// fragment. What does not parse as a URL is not shown at all.
func PublicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	clean := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return clean.String()
}

// clip cuts s to MaxSummary bytes on a rune boundary.
func clip(s string) string { return Clip(s, MaxSummary) }

// Clip cuts s to at most n bytes on a rune boundary, "…" where the rest
// was: a value quoted in a message or a summary stays short and valid
// UTF-8.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutBody(s, max(n-len("…"), 0)) + "…"
}

// DescribeDuration writes d as people write a limit: "10 minutes", "1 hour
// 30 minutes", "1.5 seconds", where time.Duration's String gives 10m0s,
// 1h30m0s and 1.5s. Messages name limits this way.
func DescribeDuration(d time.Duration) string {
	if d < 0 {
		return "-" + DescribeDuration(-d)
	}
	var parts []string
	for _, unit := range []struct {
		name string
		size time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}} {
		if n := d / unit.size; n > 0 {
			parts = append(parts, plural(int64(n), unit.name))
			d -= n * unit.size
		}
	}
	if d > 0 || len(parts) == 0 {
		seconds := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
		if seconds == "1" {
			parts = append(parts, "1 second")
		} else {
			parts = append(parts, seconds+" seconds")
		}
	}
	return strings.Join(parts, " ")
}

// plural is n units: "1 hour", "2 hours".
func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}
