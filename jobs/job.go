package jobs

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"github.com/recurhq/recur/recurrence"
)

// Job is a job in Azure's JSON shape.
type Job struct {
	ID   string `json:"id,omitempty"`
	Type string `json:"type,omitempty"`
	Name string `json:"name,omitempty"`
	// ETag names the definition's revision (NewETag); the job's workflow
	// sets it, a client's is ignored.
	ETag       string     `json:"etag,omitempty"`
	Properties Properties `json:"properties"`
}

// Properties are a job's definition, state and status. OverlapPolicy,
// CatchUpWindow, MaxConsecutiveFaults, DisableAfterFailures and the
// others below StateReason are recur's extensions.
type Properties struct {
	StartTime  *recurrence.DateTime   `json:"startTime,omitempty"`
	Action     *Action                `json:"action,omitempty"`
	Recurrence *recurrence.Recurrence `json:"recurrence,omitempty"`
	State      State                  `json:"state,omitempty"`
	// StateReason says why the job is disabled or faulted: given with the
	// PUT or PATCH that disables it, or written by recur when it disables
	// or faults the job itself; cleared when the job is enabled (recur's
	// extension).
	StateReason string  `json:"stateReason,omitempty"`
	Status      *Status `json:"status,omitempty"`

	// OverlapPolicy says what happens to an occurrence due while the
	// previous run still runs: Skip (default: recorded as Postponed),
	// BufferOne (runs when the previous one ends; one at most) or AllowAll.
	OverlapPolicy string `json:"overlapPolicy,omitempty"`
	// CatchUpWindow is how late an occurrence missed while recur was down
	// may still run (ISO 8601 or TimeSpan); default one recurrence period.
	CatchUpWindow string `json:"catchUpWindow,omitempty"`
	// Jitter spreads the job's runs: each occurrence starts at its nominal
	// time plus an offset in [0, Jitter) of its own (JitterOffset); ISO
	// 8601 or TimeSpan, at most the rule's shortest gap. History and the
	// expected-execution header keep the nominal time.
	Jitter string `json:"jitter,omitempty"`
	// MaxConsecutiveFaults faults a recurring job after that many faulted
	// runs in a row; 0 never does.
	MaxConsecutiveFaults int `json:"maxConsecutiveFaults,omitempty"`
	// MaxConcurrentRuns is how many runs may run at once (1 to
	// MaxConcurrentRunsLimit); 0 is OverlapPolicy's: one for Skip and
	// BufferOne, any number for AllowAll. An occurrence due while that
	// many run is buffered (BufferOne, one at most) or postponed.
	MaxConcurrentRuns int `json:"maxConcurrentRuns,omitempty"`
	// DisableAfterFailures disables the job once that many of its runs
	// in a row failed after their retries (status.consecutiveFailures),
	// with a stateReason naming the last error; 0 never does. Enabling it
	// again starts the streak anew. Unlike MaxConsecutiveFaults, which
	// faults a recurring job for good, it can be undone.
	DisableAfterFailures int `json:"disableAfterFailures,omitempty"`
}

// MaxConcurrentRunsLimit bounds maxConcurrentRuns, as Logic Apps bound
// their concurrency.
const MaxConcurrentRunsLimit = 100

// RunLimit returns how many runs may run at once, 0 for no limit.
func (p Properties) RunLimit() int {
	switch {
	case p.MaxConcurrentRuns > 0:
		return p.MaxConcurrentRuns
	case p.OverlapPolicy == OverlapAllowAll:
		return 0
	}
	return 1
}

// Overlap policies.
const (
	OverlapSkip      = "Skip"
	OverlapBufferOne = "BufferOne"
	OverlapAllowAll  = "AllowAll"
)

// CatchUp returns the catch-up window: CatchUpWindow, else one period of
// the recurrence (a one-time job always runs, however late).
func (p Properties) CatchUp() time.Duration {
	if d, err := ParseInterval(p.CatchUpWindow); err == nil && p.CatchUpWindow != "" {
		return d
	}
	r := p.Recurrence
	if r == nil {
		return 1<<63 - 1
	}
	if r.Cron != "" {
		d, _ := recurrence.CronPeriod(r.Cron)
		return d
	}
	if r.RRule != "" || r.Rules != nil {
		d, _ := recurrence.RulesPeriod(p.Schedule())
		return d
	}
	n := time.Duration(1)
	if r.Interval != nil {
		n = time.Duration(*r.Interval)
	}
	unit := map[recurrence.Frequency]time.Duration{
		recurrence.Second: time.Second, recurrence.Minute: time.Minute, recurrence.Hour: time.Hour, recurrence.Day: 24 * time.Hour,
		recurrence.Week: 7 * 24 * time.Hour, recurrence.Month: 31 * 24 * time.Hour, recurrence.Year: 366 * 24 * time.Hour,
	}[r.Frequency]
	return n * unit
}

// Schedule returns the part of p that decides when the job runs.
func (p Properties) Schedule() recurrence.Definition {
	return recurrence.Definition{StartTime: p.StartTime, Recurrence: p.Recurrence}
}

// State is a job's state.
type State string

// Job states, spelled as the service wrote them.
const (
	Enabled   State = "Enabled"
	Disabled  State = "Disabled"
	Completed State = "Completed"
	Faulted   State = "Faulted"
)

// Final reports whether s is completed or faulted, which no write changes.
func (s State) Final() bool { return s == Completed || s == Faulted }

// Status is what the scheduler reports of a job's runs: Azure's counters
// and times, then the job's health (recur's extensions, health.go).
type Status struct {
	ExecutionCount    int        `json:"executionCount"`
	FailureCount      int        `json:"failureCount"`
	FaultedCount      int        `json:"faultedCount"`
	LastExecutionTime *time.Time `json:"lastExecutionTime,omitempty"`
	NextExecutionTime *time.Time `json:"nextExecutionTime,omitempty"`

	// LastSuccessTime is when the last run whose main action succeeded
	// started.
	LastSuccessTime *time.Time `json:"lastSuccessTime,omitempty"`
	// ConsecutiveFailures counts the runs in a row whose main action
	// failed after its retries (faulted); a success ends the streak, and
	// so does enabling the job.
	ConsecutiveFailures int `json:"consecutiveFailures"`
	// LastLateness is how late the last scheduled run that ended started:
	// its start against its start as planned (its nominal time, plus its
	// jitter offset when the job has a jitter).
	LastLateness *Duration `json:"lastLateness,omitempty"`
	// PostponedCount counts the occurrences not run because earlier runs
	// still ran (overlapPolicy, maxConcurrentRuns).
	PostponedCount int `json:"postponedCount"`
	// MissedCount counts the occurrences not run because recur was down
	// or behind when they fell due (catchUpWindow).
	MissedCount int `json:"missedCount"`
	// LastMissedTime is the nominal time of the last occurrence not run,
	// postponed or missed.
	LastMissedTime *time.Time `json:"lastMissedTime,omitempty"`
}

// Action types.
const (
	ActionHTTP  = "Http"
	ActionHTTPS = "Https"
)

// Action types beyond HTTP(S). Workflow is recur's extension: it starts a
// Temporal workflow.
const (
	ActionStorageQueue    = "StorageQueue"
	ActionServiceBusQueue = "ServiceBusQueue"
	ActionServiceBusTopic = "ServiceBusTopic"
	ActionWorkflow        = "Workflow"
)

// actionTypes lists every action type.
var actionTypes = []string{ActionHTTP, ActionHTTPS, ActionStorageQueue, ActionServiceBusQueue, ActionServiceBusTopic, ActionWorkflow}

// ActionTypes returns every action type a definition may name.
func ActionTypes() []string { return slices.Clone(actionTypes) }

// Action is what a job does when it runs, and what it does when that
// fails for good.
type Action struct {
	ActionSpec
	ErrorAction *ActionSpec `json:"errorAction,omitempty"`
}

// ActionSpec is one action: its type, request and retry policy. Timeout is
// recur's extension: the limit of one attempt, ISO 8601 or TimeSpan,
// default 60 s.
type ActionSpec struct {
	Type                   string               `json:"type"`
	Request                *HTTPRequest         `json:"request,omitempty"`
	QueueMessage           *StorageQueueMessage `json:"queueMessage,omitempty"`
	ServiceBusQueueMessage *ServiceBusMessage   `json:"serviceBusQueueMessage,omitempty"`
	ServiceBusTopicMessage *ServiceBusMessage   `json:"serviceBusTopicMessage,omitempty"`
	Workflow               *WorkflowStart       `json:"workflow,omitempty"`
	RetryPolicy            *RetryPolicy         `json:"retryPolicy,omitempty"`
	Timeout                string               `json:"timeout,omitempty"`
}

// DefaultTimeout and MaxTimeout bound one attempt of an action.
const (
	DefaultTimeout = 60 * time.Second
	MaxTimeout     = 10 * time.Minute
)

// ActionHeartbeatTimeout is how long the server waits for a word from the
// worker running an action's attempt before it takes the worker for lost
// and runs the attempt again; the worker speaks every half of it
// (package worker). An attempt's own timeout is up to MaxTimeout, far
// longer than a lost worker should keep an occurrence waiting.
const ActionHeartbeatTimeout = 20 * time.Second

// AttemptTimeout returns the limit of one attempt.
func (a ActionSpec) AttemptTimeout() time.Duration {
	if d, err := ParseInterval(a.Timeout); err == nil && a.Timeout != "" {
		return d
	}
	return DefaultTimeout
}

// HTTPRequest is an HTTP(S) action's request.
type HTTPRequest struct {
	URI     string            `json:"uri"`
	Method  string            `json:"method"`
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Authentication is how the request authenticates; its secrets are
	// stored but never shown (see Job.Redacted).
	Authentication *Authentication `json:"authentication,omitempty"`
	// SuccessStatusCodes and SuccessBodyPattern decide when an answer is
	// a success (recur's extension): a status among the codes (default
	// 2xx) and, when set, a body whose first SuccessBodyLimit bytes match
	// the RE2 pattern. An answer that fails them fails the attempt like a
	// non-2xx status, retried per the policy.
	SuccessStatusCodes StatusCodes `json:"successStatusCodes,omitempty"`
	SuccessBodyPattern string      `json:"successBodyPattern,omitempty"`
	// Signing signs every call with Standard Webhooks' headers (recur's
	// extension); its secrets are stored but never shown.
	Signing *Signing `json:"signing,omitempty"`
}

// RetryPolicy is an action's retry policy as the API spells it.
// MaximumInterval is recur's extension for retryType Exponential.
type RetryPolicy struct {
	RetryType       string `json:"retryType,omitempty"`
	RetryInterval   string `json:"retryInterval,omitempty"`
	RetryCount      *int   `json:"retryCount,omitempty"`
	MaximumInterval string `json:"maximumInterval,omitempty"`
}

// Limits of a job definition, from Azure Scheduler's documented limits.
const (
	MaxURILength   = 2048
	MaxHeaders     = 50
	MaxHeaderBytes = 4096 // names and values together
	MaxBodyLength  = 8192
)

// normalize checks a job definition given at created and writes it in the
// service's form: the identity fields from k, the defaults, enums spelled
// as Azure did; the status is the scheduler's, whatever the client sent
// is dropped. Accept adds the rules of a definition given now.
func (j *Job) normalize(k Key, created time.Time) error {
	j.ID, j.Type, j.Name = k.JobID(), "Microsoft.Scheduler/jobCollections/jobs", k.Collection+"/"+k.Job
	p := &j.Properties
	p.Status = nil
	switch state, ok := canonical(string(p.State), []string{string(Enabled), string(Disabled), string(Completed)}); {
	case p.State == "":
		p.State = Enabled
	case !ok:
		return invalidf("properties.state", "state %q is not Enabled, Disabled or Completed", p.State)
	default:
		p.State = State(state)
	}
	if err := p.Action.validate("properties.action"); err != nil {
		return err
	}
	if err := p.validateExtensions(); err != nil {
		return err
	}
	def := p.Schedule()
	if err := def.Validate(); err != nil {
		return schedulingError(err)
	}
	rule, err := recurrence.Compile(def, created)
	if err != nil {
		return schedulingError(err)
	}
	return p.validateJitter(rule, created)
}

// Accept checks a definition a client gives now (PUT, PATCH) at created
// and writes it in the service's form (normalize), with the rules that
// only a new write meets: userinfo and ports in URIs, the ranges of time
// spans. A definition meets it wherever it enters: in the API, so that a
// bad one is answered before Temporal sees it; in the job workflow's
// update validator, which trusts no caller; and in its update handler, in
// a side effect whose recorded result is the stored definition: a replay
// reads it and never runs Accept, so a rule made stricter never changes
// what a recorded write did.
func (j *Job) Accept(k Key, created time.Time) error {
	if err := j.Properties.checkURIs(); err != nil {
		return err
	}
	if err := j.normalize(k, created); err != nil {
		return err
	}
	return j.Properties.checkTimeSpans()
}

// checkTimeSpans checks every interval of a normalized definition with
// checkTimeSpan, in a fixed order: the validator of the job workflow runs
// it.
func (p *Properties) checkTimeSpans() error {
	type interval struct{ path, value string }
	intervals := []interval{{"properties.catchUpWindow", p.CatchUpWindow}, {"properties.jitter", p.Jitter}}
	spec := func(path string, a *ActionSpec) {
		if a == nil {
			return
		}
		intervals = append(intervals, interval{path + ".timeout", a.Timeout})
		if r := a.RetryPolicy; r != nil {
			intervals = append(intervals, interval{path + ".retryPolicy.retryInterval", r.RetryInterval},
				interval{path + ".retryPolicy.maximumInterval", r.MaximumInterval})
		}
		ttl := ".brokeredMessageProperties." + BrokeredTimeToLive
		intervals = append(intervals, interval{path + ".serviceBusQueueMessage" + ttl, a.ServiceBusQueueMessage.timeToLive()},
			interval{path + ".serviceBusTopicMessage" + ttl, a.ServiceBusTopicMessage.timeToLive()})
	}
	if p.Action != nil {
		spec("properties.action", &p.Action.ActionSpec)
		spec("properties.action.errorAction", p.Action.ErrorAction)
	}
	for _, iv := range intervals {
		if err := checkTimeSpan(iv.value); err != nil {
			return invalidf(iv.path, "%v", err)
		}
	}
	return nil
}

func (p *Properties) validateExtensions() error {
	if p.OverlapPolicy != "" {
		policy, ok := canonical(p.OverlapPolicy, []string{OverlapSkip, OverlapBufferOne, OverlapAllowAll})
		if !ok {
			return invalidf("properties.overlapPolicy", "overlapPolicy %q is not Skip, BufferOne or AllowAll", p.OverlapPolicy)
		}
		p.OverlapPolicy = policy
	}
	if p.CatchUpWindow != "" {
		if _, err := ParseInterval(p.CatchUpWindow); err != nil {
			return invalidf("properties.catchUpWindow", "%v", err)
		}
	}
	if p.MaxConsecutiveFaults < 0 {
		return invalidf("properties.maxConsecutiveFaults", "maxConsecutiveFaults must be 0 (never) or more, not %d", p.MaxConsecutiveFaults)
	}
	if n := p.DisableAfterFailures; n < 0 || n > MaxDisableAfterFailures {
		return invalidf("properties.disableAfterFailures", "disableAfterFailures must be from 1 to %d (0: never), not %d", MaxDisableAfterFailures, n)
	}
	if n := p.MaxConcurrentRuns; n < 0 || n > MaxConcurrentRunsLimit {
		return invalidf("properties.maxConcurrentRuns", "maxConcurrentRuns must be from 1 to %d (0: the overlapPolicy's), not %d", MaxConcurrentRunsLimit, n)
	}
	if n := utf8.RuneCountInString(p.StateReason); n > MaxStateReason {
		return invalidf("properties.stateReason", "stateReason has %d characters; at most %d", n, MaxStateReason)
	}
	if p.State == Enabled {
		// An enabled job has nothing to explain: enabling clears it.
		p.StateReason = ""
	}
	return nil
}

// MaxStateReason is how many characters a stateReason may have.
const MaxStateReason = 1024

// schedulingError turns a recurrence validation error into an *Error
// whose target is the path under properties.
func schedulingError(err error) error {
	var ve *recurrence.ValidationError
	if errors.As(err, &ve) {
		ve = ve.WithPrefix("properties")
		return &Error{Code: ve.Code, Target: ve.Path, Message: ve.Error()}
	}
	return err
}

func (a *Action) validate(path string) error {
	if a == nil {
		return invalidf(path, "%s is required", path)
	}
	if err := a.ActionSpec.validate(path); err != nil {
		return err
	}
	if a.ErrorAction != nil {
		return a.ErrorAction.validate(path + ".errorAction")
	}
	return nil
}

func (a *ActionSpec) validate(path string) error {
	typ, ok := canonical(a.Type, actionTypes)
	if !ok {
		return invalidf(path+".type", "action type %q is not one of %s", a.Type, strings.Join(actionTypes, ", "))
	}
	a.Type = typ
	if _, err := a.RetryPolicy.Resolve(path + ".retryPolicy"); err != nil {
		return err
	}
	if a.Timeout != "" {
		d, err := ParseInterval(a.Timeout)
		if err != nil {
			return invalidf(path+".timeout", "%v", err)
		}
		if d < time.Second || d > MaxTimeout {
			return invalidf(path+".timeout", "timeout %s must be at least 1 second and at most %s", a.Timeout, DescribeDuration(MaxTimeout))
		}
	}
	switch typ {
	case ActionStorageQueue:
		return a.QueueMessage.validate(path + ".queueMessage")
	case ActionServiceBusQueue:
		return a.ServiceBusQueueMessage.validate(path+".serviceBusQueueMessage", false)
	case ActionServiceBusTopic:
		return a.ServiceBusTopicMessage.validate(path+".serviceBusTopicMessage", true)
	case ActionWorkflow:
		return a.Workflow.validate(path + ".workflow")
	}
	return a.Request.validate(path+".request", typ)
}

func (r *HTTPRequest) validate(path, typ string) error {
	if r == nil {
		return invalidf(path, "%s is required for an %s action", path, typ)
	}
	if len(r.URI) > MaxURILength {
		return invalidf(path+".uri", "uri is %d characters; at most %d are allowed", len(r.URI), MaxURILength)
	}
	u, err := url.Parse(r.URI)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return invalidf(path+".uri", "uri %q must be an absolute http or https URL", withoutUserinfo(r.URI))
	}
	if typ == ActionHTTPS && u.Scheme != "https" {
		return invalidf(path+".uri", "an Https action needs an https uri, not %q", withoutUserinfo(r.URI))
	}
	if r.Method == "" {
		return invalidf(path+".method", "method is required")
	}
	// The method goes into the request line as it is: a CR or LF in it
	// would write lines of the job's choosing.
	if !httpguts.ValidHeaderFieldName(r.Method) {
		return invalidf(path+".method", "method %q must be an HTTP token such as GET or POST", r.Method)
	}
	r.Method = strings.ToUpper(r.Method)
	if err := validateHeaders(path+".headers", r.Headers); err != nil {
		return err
	}
	if n := len([]rune(r.Body)); n > MaxBodyLength {
		return invalidf(path+".body", "body is %d characters; at most %d are allowed", n, MaxBodyLength)
	}
	if err := r.validateSuccessRules(path); err != nil {
		return err
	}
	if err := r.validateSigning(path); err != nil {
		return err
	}
	return r.validateAuthentication(path + ".authentication")
}

// validateHeaders checks an HTTP action's headers: how many, how large,
// and that each is one well-formed header. A name that is not an HTTP
// token, or a value with CR, LF, NUL or another control character, could
// smuggle headers of the job's choosing into the request (header
// injection). Go's transport would refuse them too, but only when the job
// runs, as a fault; the API answers 400 instead. Values stay out of the
// messages: they may be secrets.
func validateHeaders(path string, headers map[string]string) error {
	if len(headers) > MaxHeaders {
		return invalidf(path, "%d headers; at most %d are allowed", len(headers), MaxHeaders)
	}
	size := 0
	for _, name := range sortedKeys(headers) {
		if !httpguts.ValidHeaderFieldName(name) {
			return invalidf(path, "header name %q must be an HTTP token (letters, digits, and !#$%%&'*+-.^_`|~)", name)
		}
		if !httpguts.ValidHeaderFieldValue(headers[name]) {
			return invalidf(path, "the value of header %s must not hold control characters such as CR, LF or NUL", name)
		}
		size += len(name) + len(headers[name])
	}
	if size > MaxHeaderBytes {
		return invalidf(path, "headers take %d bytes; at most %d are allowed", size, MaxHeaderBytes)
	}
	return nil
}

func invalidf(target, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Target: target, Message: fmt.Sprintf(format, args...)}
}

// Public returns the job as the API writes it: secrets removed (see
// Redacted), state and retryType in the lower case the service wrote,
// as it writes frequency and day names, and no nextExecutionTime unless
// the job is enabled: as Azure answered, a job that is not enabled has no
// next run, whatever its schedule would give once enabled (the preview
// still says).
func (j Job) Public() Job {
	j = j.Redacted()
	p := &j.Properties
	if p.State != Enabled && p.Status != nil && p.Status.NextExecutionTime != nil {
		status := *p.Status
		status.NextExecutionTime = nil
		p.Status = &status
	}
	p.State = State(strings.ToLower(string(p.State)))
	if p.Action != nil {
		a := *p.Action
		a.RetryPolicy = a.RetryPolicy.public()
		if a.ErrorAction != nil {
			e := *a.ErrorAction
			e.RetryPolicy = e.RetryPolicy.public()
			a.ErrorAction = &e
		}
		p.Action = &a
	}
	return j
}

func (p *RetryPolicy) public() *RetryPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.RetryType = strings.ToLower(c.RetryType)
	return &c
}

// Upcoming lists the next runs of an enabled job: from next on, at most
// n (1 to MaxPreview), as many as its count (runs counted so far) and
// endTime leave. created is when it was last defined, as its rule was
// compiled then.
func Upcoming(job Job, created time.Time, runs int, next *time.Time, n int) []time.Time {
	out, _ := upcoming(job, created, runs, next, n)
	return out
}

// upcoming is Upcoming with the rule that planned it, nil when none did.
func upcoming(job Job, created time.Time, runs int, next *time.Time, n int) ([]time.Time, *recurrence.Rule) {
	out := []time.Time{}
	if next == nil || job.Properties.State != Enabled {
		return out, nil
	}
	rule, err := recurrence.Compile(job.Properties.Schedule(), created)
	if err != nil {
		return out, nil
	}
	n = min(max(n, 1), MaxPreview)
	if c := rule.Count(); c > 0 {
		n = min(n, c-runs)
	}
	for t, ok := *next, true; ok && len(out) < n; t, ok = rule.Next(t) {
		out = append(out, t)
	}
	return out, rule
}
