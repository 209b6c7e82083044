package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/recurhq/recur/jobs"
	"github.com/recurhq/recur/lifecycle"
	"github.com/recurhq/recur/migrate"
)

// An import is all or nothing: it first checks every resource, the server
// saying what each PUT would do (Recur-Apply: what-if, which checks a
// job against its collection's quotas and terms as its admission would),
// and the jobs it adds to a collection against that collection's quota
// together; it writes only when every resource passes, so that a failure
// leaves nothing half migrated to clean up. --partial writes what passes.
// The dry run is the check alone, so its answer is the real run's.

// outcomeHeld is a resource that passed its check and was not written:
// another failed, and the import writes all or nothing.
const outcomeHeld = "held"

// plan is what the check of a resource found: the outcome its PUT would
// have, or that it would fail (the item's outcome then says why).
type plan struct {
	outcome string // created, updated or unchanged; "" until checked or when the check failed
	// collection is a collection's definition as the server would store
	// it: its quotas, which its jobs are checked against.
	collection *jobs.Collection
	// held is how many jobs a job's collection holds, as the server's
	// what-if answer counts them; -1 when it was not asked.
	held int
	// atOnce says why a job's first run would come as soon as it is
	// written; "" when it would not.
	atOnce string
}

// checkAll checks every item: collections first, then each job against
// its collection, then every collection's quota against the jobs the
// import adds to it.
func (im *importer) checkAll(ctx context.Context, collections, jobItems []*importItem, collectionOf func(*importItem) *importItem) {
	im.each(ctx, collections, nil, im.check)
	im.each(ctx, jobItems, collectionOf, im.check)
	im.checkQuotas(ctx, jobItems, collectionOf)
}

// check checks one item, whose collection's item is coll (nil for a
// collection, or a job whose collection the files do not define), as the
// cutover flags write it (cutover).
func (im *importer) check(ctx context.Context, it, coll *importItem) {
	it.plan.held = -1
	switch {
	case it.outcome != "":
		return // failed already (defined twice)
	case len(it.Missing) > 0:
		it.outcome, it.detail = outcomeSkipped, needsSummary(it.Missing)
		return
	case it.ResourceGroup == "":
		it.outcome, it.detail = outcomeSkipped, "the file names no resource group: give --resource-group"
		return
	case coll != nil && coll.plan.outcome == "":
		it.outcome, it.detail = outcomeSkipped, "its collection "+coll.Collection+" fails"
		return
	}
	// A job the files disable stays as they say: it runs nowhere.
	movable := it.Kind == migrate.Job && !disabledIn(it.Body)
	if movable && im.disabled {
		im.setState(it, jobs.Disabled, "imported disabled (recur import --disabled): the same import without --disabled enables it",
			"written disabled (--disabled)")
	}
	im.ask(ctx, it, coll)
	if movable && it.plan.outcome != "" && !im.runPast && ranWhereItCameFrom(it.Body) {
		// It ran where it came from. A job is given Completed only as it
		// is created; one that exists (imported ahead of the cutover) is
		// kept from running instead.
		if it.plan.outcome == jobs.OutcomeCreated {
			im.setState(it, jobs.Completed, "", "written completed: a one-time job whose time has passed ran where it came from (--run-past runs it)")
		} else {
			im.setState(it, jobs.Disabled, "its time passed before the cutover: it ran where it came from (recur import --run-past runs it)",
				"written disabled: a one-time job whose time has passed ran where it came from (--run-past runs it)")
		}
		im.ask(ctx, it, coll)
	}
}

// ask has the server check it, whose collection's item is coll, with a
// what-if PUT, or checks it here when its collection does not exist yet,
// and notes what it found in it.plan (its outcome "" when it fails, the
// item's outcome then saying why).
func (im *importer) ask(ctx context.Context, it, coll *importItem) {
	it.plan = plan{held: -1}
	fail := func(outcome, detail string) { it.plan.outcome, it.outcome, it.detail = "", outcome, detail }
	if coll != nil && coll.plan.outcome == jobs.OutcomeCreated {
		// A what-if PUT finds no collection, but the server checks first
		// what it checks of a job alone, its operator's floor
		// (--min-interval) among it: then the job is checked here,
		// against the collection's definition as the server would store
		// it.
		_, err := im.client.putApplying(ctx, im.path(it.Resource), it.Body, jobs.ApplyWhatIf)
		var ae *armError
		switch {
		case err != nil && ctx.Err() != nil:
			fail(outcomeStopped, "not checked: the import was interrupted")
			return
		case err != nil && !(errors.As(err, &ae) && ae.Code == jobs.CodeCollectionMissing):
			fail(outcomeFailed, err.Error())
			return
		}
		it.plan.outcome, it.plan.held = jobs.OutcomeCreated, 0
		if err := checkJobLocally(it.Resource, coll.plan.collection); err != nil {
			fail(outcomeFailed, err.Error())
			return
		}
		it.plan.atOnce = runsAtOnce(it.Body)
		return
	}
	answer, err := im.client.putApplying(ctx, im.path(it.Resource), it.Body, jobs.ApplyWhatIf)
	switch {
	case err != nil && ctx.Err() != nil:
		fail(outcomeStopped, "not checked: the import was interrupted")
		return
	case err != nil:
		fail(outcomeFailed, err.Error())
		return
	}
	it.plan.outcome = answer.outcome
	if it.Kind == migrate.Collection {
		var c jobs.Collection
		if err := json.Unmarshal(answer.body, &c); err != nil {
			fail(outcomeFailed, "the server's what-if answer: "+err.Error())
			return
		}
		it.plan.collection = &c
		return
	}
	if n, err := strconv.Atoi(answer.header.Get("Recur-Collection-Jobs")); err == nil {
		it.plan.held = n
	}
	if answer.outcome == jobs.OutcomeUnchanged {
		return
	}
	if coll != nil {
		// The server checked the job against the collection it holds;
		// the import redefines that collection first.
		if err := checkJobLocally(it.Resource, coll.plan.collection); err != nil {
			fail(outcomeFailed, err.Error())
			return
		}
	}
	it.plan.atOnce = runsAtOnce(it.Body)
}

// checkQuotas fails the jobs the import would create in a collection whose
// quota (maxJobCount) they would pass together with the jobs it holds,
// naming the count on each: every job would pass its own check, the
// collection having room for one.
func (im *importer) checkQuotas(ctx context.Context, jobItems []*importItem, collectionOf func(*importItem) *importItem) {
	type group struct {
		coll  *importItem
		key   migrate.Resource
		held  int
		added []*importItem
	}
	groups := map[string]*group{}
	var order []string
	for _, it := range jobItems {
		if it.plan.outcome != jobs.OutcomeCreated {
			continue
		}
		key := it.ResourceGroup + "/" + it.Collection
		g := groups[key]
		if g == nil {
			g = &group{coll: collectionOf(it), key: migrate.Resource{Kind: migrate.Collection, ResourceGroup: it.ResourceGroup, Collection: it.Collection}}
			groups[key], order = g, append(order, key)
		}
		g.held = max(g.held, it.plan.held)
		g.added = append(g.added, it)
	}
	for _, key := range order {
		g := groups[key]
		var limit int
		if g.coll != nil {
			limit = g.coll.plan.collection.MaxJobs()
		} else {
			c, err := im.collection(ctx, g.key)
			if err != nil {
				for _, it := range g.added {
					it.plan.outcome, it.outcome, it.detail = "", outcomeFailed, "its collection's quota: "+err.Error()
				}
				continue
			}
			limit = c.MaxJobs()
		}
		if limit == 0 || g.held+len(g.added) <= limit {
			continue
		}
		for _, it := range g.added {
			it.plan.outcome, it.outcome = "", outcomeFailed
			it.detail = fmt.Sprintf("QuotaExceeded (properties.quota.maxJobCount): job collection %s holds %d jobs and the import adds %d, past its maximum of %d",
				it.Collection, g.held, len(g.added), limit)
		}
	}
}

// collection GETs the collection r names.
func (im *importer) collection(ctx context.Context, r migrate.Resource) (*jobs.Collection, error) {
	data, err := im.client.do(ctx, http.MethodGet, im.path(r), nil, nil)
	if err != nil {
		return nil, err
	}
	var c jobs.Collection
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// path is the API path of r.
func (im *importer) path(r migrate.Resource) string {
	a := address{subscription: im.subscription, resourceGroup: r.ResourceGroup, collection: r.Collection, job: r.Job}
	if r.Kind == migrate.Job {
		return a.jobPath()
	}
	return a.collectionPath()
}

// checkJobLocally checks a job to be written into coll, the definition its
// collection will have once the import has written it, as the API and
// the collection's admission would: its definition, and how often it
// runs against the collection's maxRecurrence.
func checkJobLocally(r migrate.Resource, coll *jobs.Collection) error {
	var job jobs.Job
	err := jobs.CheckMembers(r.Body, reflect.TypeFor[jobs.Job]())
	if err == nil {
		err = json.Unmarshal(r.Body, &job)
	}
	now := time.Now().UTC().Truncate(time.Second)
	k := jobs.Key{Subscription: "import", ResourceGroup: r.ResourceGroup, Collection: r.Collection, Job: r.Job}
	if err == nil {
		err = job.Accept(k, now)
	}
	if err == nil {
		err = coll.Terms(0).Check(jobs.ShortestGap(job, now), r.Collection)
	}
	var e *jobs.Error
	if errors.As(err, &e) {
		return &armError{Code: e.Code, Message: e.Message, Target: e.Target}
	}
	return err
}

// runsAtOnce says why the job body defines runs as soon as it is written
// ("" when it does not): enabled, with a first occurrence that has come.
func runsAtOnce(body json.RawMessage) string {
	job, ok := firstRunHasCome(body)
	if !ok || job.Properties.State != jobs.Enabled {
		return ""
	}
	p := job.Properties
	switch {
	case p.Recurrence == nil && p.StartTime == nil:
		return "a one-time job without a start time"
	case p.Recurrence == nil:
		return "a one-time job whose start time " + p.StartTime.String() + " has passed"
	case p.StartTime == nil:
		return "a recurring job without a start time"
	}
	return "its first occurrence is now"
}

// firstRunHasCome reports whether the job body, planned now, has its first
// occurrence at once, and returns the job accepted; false for a body the
// API refuses, whose check says why.
func firstRunHasCome(body json.RawMessage) (jobs.Job, bool) {
	var job jobs.Job
	if json.Unmarshal(body, &job) != nil {
		return job, false
	}
	now := time.Now().UTC().Truncate(time.Second)
	if job.Accept(jobs.Key{Subscription: "import", ResourceGroup: "rg", Collection: "c", Job: "j"}, now) != nil {
		return job, false
	}
	first, _ := lifecycle.Direct{}.First(job.Properties.Schedule(), now)
	return job, first != nil && !first.After(now)
}

// disabledIn reports whether the job body is disabled.
func disabledIn(body json.RawMessage) bool {
	var job struct {
		Properties struct{ State string }
	}
	return json.Unmarshal(body, &job) == nil && strings.EqualFold(job.Properties.State, string(jobs.Disabled))
}

// setState writes state (and reason, when not "") into it's body, and
// notes how the import changed it.
func (im *importer) setState(it *importItem, state jobs.State, reason, note string) {
	var body map[string]any
	if json.Unmarshal(it.Body, &body) != nil {
		return // the check says what is wrong with it
	}
	props, _ := body["properties"].(map[string]any)
	if props == nil {
		return
	}
	props["state"] = string(state)
	if reason != "" {
		props["stateReason"] = reason
	} else {
		delete(props, "stateReason")
	}
	if data, err := json.Marshal(body); err == nil {
		it.Body, it.cutover = data, note
	}
}

// ranWhereItCameFrom reports whether the job body is a one-time job whose
// time has passed (or that has none): its scheduler ran it when it was
// defined there.
func ranWhereItCameFrom(body json.RawMessage) bool {
	job, ok := firstRunHasCome(body)
	return ok && job.Properties.Recurrence == nil
}
