package jobs

import (
	"fmt"
	"strings"
)

// Collection is a job collection in Azure's JSON shape.
type Collection struct {
	ID         string               `json:"id,omitempty"`
	Type       string               `json:"type,omitempty"`
	Name       string               `json:"name,omitempty"`
	Location   string               `json:"location,omitempty"`
	Tags       map[string]string    `json:"tags,omitempty"`
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

// Collection states.
const (
	CollectionEnabled  = "Enabled"
	CollectionDisabled = "Disabled"
)

// Skus lists the sku names in the service's spelling.
var Skus = []string{"Free", "Standard", "P10Premium", "P20Premium"}

// Normalize validates a collection definition from a PUT and fills in the
// defaults (sku Standard, state Enabled), spelling enums as the service
// did. Identity fields (id, type, name) are set from k.
func (c *Collection) Normalize(k Key) error {
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
	state, ok := canonical(p.State, []string{CollectionEnabled, CollectionDisabled})
	if !ok {
		return &Error{Code: CodeInvalidRequest, Target: "properties.state",
			Message: fmt.Sprintf("state %q is not Enabled or Disabled", p.State)}
	}
	p.State = state
	if q := p.Quota; q != nil && q.MaxJobCount != nil && *q.MaxJobCount < 1 {
		return &Error{Code: CodeInvalidRequest, Target: "properties.quota.maxJobCount",
			Message: fmt.Sprintf("maxJobCount must be at least 1, not %d", *q.MaxJobCount)}
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
