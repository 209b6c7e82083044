package main

import (
	"context"
	"log"
	"math/rand/v2"
	"net/http"
	"time"
)

// The operations of the API load, and how many of every 10 requests each
// one is.
var loadMix = []struct {
	name   string
	weight int
}{{"GET job", 5}, {"list jobs (first page)", 2}, {"history (first page)", 1}, {"PUT job (redefine)", 2}}

// loadResult is what the API load measured.
type loadResult struct {
	ran      time.Duration
	ops      []*recorder // by loadMix's order
	fullList *recorder   // the whole list of one collection by nextLink, once
	pages    int
	listed   int // jobs in the full list
	inList   int // jobs created in that collection
}

// jobList is the part of Azure's JobListResult the load reads.
type jobList struct {
	Value    []struct{ Name string } `json:"value"`
	NextLink string                  `json:"nextLink"`
}

// load lists the first collection in full once, then sends the mix of
// loadMix from -concurrency workers for d.
func (s *scale) load(ctx context.Context, d time.Duration) *loadResult {
	r := &loadResult{fullList: newRecorder()}
	for i := 0; i < min(perCollection, s.cfg.jobs); i++ {
		if s.created[i] {
			r.inList++
		}
	}
	s.listAll(ctx, r)
	var created []int
	for i, ok := range s.created {
		if ok {
			created = append(created, i)
		}
	}
	for range loadMix {
		r.ops = append(r.ops, newRecorder())
	}
	if len(created) == 0 || d <= 0 {
		return r
	}
	log.Printf("API load: %d workers for %s", s.cfg.concurrency, d)
	started := time.Now()
	lctx, cancel := context.WithDeadline(ctx, started.Add(d))
	defer cancel()
	each(lctx, s.cfg.concurrency, 0, s.cfg.concurrency, func(int) {
		for lctx.Err() == nil {
			op := pick()
			i := created[rand.IntN(len(created))]
			status, took, err := s.request(lctx, op, i)
			if lctx.Err() != nil {
				return // cut by the deadline, not a failure
			}
			r.ops[op].add(status, took, err)
		}
	})
	r.ran = time.Since(started)
	for _, op := range r.ops {
		op.window = r.ran
	}
	return r
}

// pick returns the index in loadMix of a random operation.
func pick() int {
	total := 0
	for _, m := range loadMix {
		total += m.weight
	}
	n := rand.IntN(total)
	for op, m := range loadMix {
		if n < m.weight {
			return op
		}
		n -= m.weight
	}
	return 0
}

// request sends operation op of loadMix about job i.
func (s *scale) request(ctx context.Context, op, i int) (int, time.Duration, error) {
	switch op {
	case 0:
		return s.api.call(ctx, http.MethodGet, jobKey(i).JobID(), nil, nil)
	case 1:
		return s.api.call(ctx, http.MethodGet, jobKey(i).CollectionID()+"/jobs", nil, nil)
	case 2:
		return s.api.call(ctx, http.MethodGet, jobKey(i).JobID()+"/history", nil, nil)
	default:
		return s.api.call(ctx, http.MethodPut, jobKey(i).JobID(), s.jobBody(i, s.burst), nil)
	}
}

// listAll lists the jobs of the first collection, page by page, following
// nextLink, on the idle server.
func (s *scale) listAll(ctx context.Context, r *loadResult) {
	started := time.Now()
	target := jobKey(0).CollectionID() + "/jobs"
	for target != "" && ctx.Err() == nil {
		var page jobList
		status, took, err := s.api.call(ctx, http.MethodGet, target, nil, &page)
		r.fullList.add(status, took, err)
		if err != nil {
			break
		}
		r.pages++
		r.listed += len(page.Value)
		target = page.NextLink
	}
	r.fullList.window = time.Since(started)
	log.Printf("listed %d jobs of %s in %d pages in %s", r.listed, jobKey(0).Collection, r.pages, r.fullList.window.Round(time.Millisecond))
}
