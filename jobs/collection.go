package jobs

import (
	"fmt"
	"strings"
	"time"
)

// Collection is a job collection in Azure's JSON shape.
type Collection struct {
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Name     string            `json:"name,omitempty"`
	Location string            `json:"location,omitempty"`
	Tags     map[string]string `json:"tags,omitempty"`
	// ETag names the definition's revision (NewETag); the collection's
	// workflow sets it, a client's is ignored.
	ETag       string               `json:"etag,omitempty"`
	Properties CollectionProperties `json:"properties"`
}

// CollectionProperties are a collection's sku, state and quota.
type CollectionProperties struct {
	Sku   *Sku   `json:"sku,omitempty"`
	State string `json:"state,omitempty"`
	Quota *Quota `json:"quota,omitempty"`
}

// Sku is a collection's pricing tier.
type Sku struct {
	Name string `json:"name"`
}

// Quota limits the jobs of a collection.
type Quota struct {
	MaxJobCount      *int           `json:"maxJobCount,omitempty"`
	MaxJobOccurrence *int           `json:"maxJobOccurrence,omitempty"`
	MaxRecurrence    *MaxRecurrence `json:"maxRecurrence,omitempty"`
}

// MaxRecurrence is the shortest recurrence a collection allows.
type MaxRecurrence struct {
	Frequency string `json:"frequency,omitempty"`
	Interval  int    `json:"interval,omitempty"`
}

// Collection states. Suspended is in the 2016-03-01 contract and Azure
// accepted it on PUT; its jobs do not run, as a disabled collection's.
const (
	CollectionEnabled   = "Enabled"
	CollectionDisabled  = "Disabled"
	CollectionSuspended = "Suspended"
)

// JobsState is the state a collection in state s gives its jobs: enabled
// for an enabled collection, disabled otherwise.
func JobsState(s string) State {
	if s == CollectionEnabled {
		return Enabled
	}
	return Disabled
}

// Skus lists the sku names in the service's spelling.
var Skus = []string{"Free", "Standard", "P10Premium", "P20Premium"}

// skuLimit is what a sku allows: its jobs, how often a job may recur at
// most when the quota does not say (Azure Scheduler's documented quotas),
// and the shortest maxRecurrence a quota may set. The paid skus' quota
// may go down to recur's Second, which Azure did not have; the operator's
// floor (--min-interval) still holds below it.
type skuLimit struct {
	maxJobs  int
	every    MaxRecurrence
	shortest MaxRecurrence
}

var (
	hourly      = MaxRecurrence{Frequency: "Hour", Interval: 1}
	everyMinute = MaxRecurrence{Frequency: "Minute", Interval: 1}
	everySecond = MaxRecurrence{Frequency: "Second", Interval: 1}
)

var skuLimits = map[string]skuLimit{
	"Free":       {5, hourly, hourly},
	"Standard":   {50, everyMinute, everySecond},
	"P10Premium": {50, everyMinute, everySecond},
	"P20Premium": {1000, everyMinute, everySecond},
}

// recurrenceUnits are the frequencies of maxRecurrence and the shortest
// time each can mean (a month can be 28 days). Second is recur's.
var recurrenceUnits = map[string]time.Duration{
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour, "Day": 24 * time.Hour, "Week": 7 * 24 * time.Hour, "Month": 28 * 24 * time.Hour,
}

// dstSlack forgives the hour or two a DST change takes from a day: a job
// at 02:30 every day in Berlin still runs "daily".
const dstSlack = 2 * time.Hour

// Period returns the shortest gap m allows between two runs.
func (m MaxRecurrence) Period() time.Duration {
	unit := recurrenceUnits[m.Frequency]
	gap := unit * time.Duration(m.Interval)
	if unit >= 24*time.Hour {
		gap -= dstSlack
	}
	return gap
}

// Terms returns the collection's terms at its revision.
func (c *Collection) Terms(revision int) CollectionTerms {
	t := CollectionTerms{Revision: revision, Disabled: JobsState(c.Properties.State) == Disabled}
	if q := c.Properties.Quota; q != nil && q.MaxRecurrence != nil {
		m := *q.MaxRecurrence
		t.MaxRecurrence = &m
	}
	return t
}

// Accept checks a collection definition from a PUT or PATCH and writes it
// in the service's form: the defaults (sku Standard, state Enabled), enums
// spelled as Azure did, the identity fields (id, type, name) from k.
func (c *Collection) Accept(k Key) error {
	c.ID, c.Type, c.Name = k.CollectionID(), "Microsoft.Scheduler/jobCollections", k.Collection
	p := &c.Properties
	if p.Sku == nil {
		p.Sku = &Sku{Name: "Standard"}
	}
	name, ok := canonical(p.Sku.Name, Skus)
	if !ok {
		return &Error{Code: CodeInvalidRequest, Target: "properties.sku.name",
			Message: fmt.Sprintf("sku %q is not one of %s", p.Sku.Name, strings.Join(Skus, ", "))}
	}
	p.Sku.Name = name
	if p.State == "" {
		p.State = CollectionEnabled
	}
	state, ok := canonical(p.State, []string{CollectionEnabled, CollectionDisabled, CollectionSuspended})
	if !ok {
		return &Error{Code: CodeInvalidRequest, Target: "properties.state",
			Message: fmt.Sprintf("state %q is not Enabled, Disabled or Suspended", p.State)}
	}
	p.State = state
	return p.normalizeQuota()
}

// normalizeQuota fills the sku's defaults into the quota and refuses a
// quota the sku does not allow.
func (p *CollectionProperties) normalizeQuota() error {
	limit := skuLimits[p.Sku.Name]
	if p.Quota == nil {
		p.Quota = &Quota{}
	}
	q := p.Quota
	if q.MaxJobCount == nil {
		n := limit.maxJobs
		q.MaxJobCount = &n
	}
	if n := *q.MaxJobCount; n < 1 || n > limit.maxJobs {
		return &Error{Code: CodeInvalidRequest, Target: "properties.quota.maxJobCount",
			Message: fmt.Sprintf("maxJobCount must be between 1 and %d for sku %s, not %d", limit.maxJobs, p.Sku.Name, n)}
	}
	if q.MaxRecurrence == nil {
		every := limit.every
		q.MaxRecurrence = &every
	}
	m := q.MaxRecurrence
	freq, ok := canonical(m.Frequency, []string{"Second", "Minute", "Hour", "Day", "Week", "Month"})
	if !ok {
		return &Error{Code: CodeInvalidRequest, Target: "properties.quota.maxRecurrence.frequency",
			Message: fmt.Sprintf("frequency %q is not one of Second, Minute, Hour, Day, Week, Month", m.Frequency)}
	}
	m.Frequency = freq
	if m.Interval == 0 {
		m.Interval = 1
	}
	if m.Interval < 1 {
		return &Error{Code: CodeInvalidRequest, Target: "properties.quota.maxRecurrence.interval",
			Message: fmt.Sprintf("interval must be at least 1, not %d", m.Interval)}
	}
	if m.Period() < limit.shortest.Period() {
		return &Error{Code: CodeInvalidRequest, Target: "properties.quota.maxRecurrence",
			Message: fmt.Sprintf("sku %s allows jobs at most once every %d %s(s)", p.Sku.Name, limit.shortest.Interval, strings.ToLower(limit.shortest.Frequency))}
	}
	return nil
}

// MaxJobs returns the collection's job quota, 0 for none.
func (c *Collection) MaxJobs() int {
	if q := c.Properties.Quota; q != nil && q.MaxJobCount != nil {
		return *q.MaxJobCount
	}
	return 0
}

// canonical returns the spelling in list that equals s in any letter case.
func canonical(s string, list []string) (string, bool) {
	for _, v := range list {
		if strings.EqualFold(s, v) {
			return v, true
		}
	}
	return s, false
}

// Public returns the collection as the API writes it: state in lower case,
// as the service wrote it, but Suspended, which its recorded answers
// wrote capitalized.
func (c Collection) Public() Collection {
	if c.Properties.State != CollectionSuspended {
		c.Properties.State = strings.ToLower(c.Properties.State)
	}
	return c
}
