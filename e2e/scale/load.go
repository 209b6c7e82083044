package main

import (
	"context"
	"log"
	"math/rand/v2"
	"time"
)

// The operations of the API load, and how many of every 10 requests each
// one is: for recur GET job, GET jobs of its collection, GET its history
// and PUT job; for Schedules what subject says.
var loadMix = []weighted{{"get", 5}, {"list (first page)", 2}, {"history (first page)", 1}, {"redefine", 2}}

// loadResult is what the API load measured.
type loadResult struct {
	ran      time.Duration
	ops      []*recorder // by loadMix's order
	fullList *recorder   // the list of the first perCollection items, page by page, once
	pages    int
	listed   int // items in the full list
	inList   int // items created of the first perCollection
}

// load lists the first perCollection items once, page by page, then sends
// the mix of loadMix from -concurrency workers for d.
func (s *phase) load(ctx context.Context, d time.Duration) *loadResult {
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
			op := pick(loadMix)
			i := created[rand.IntN(len(created))]
			started := time.Now()
			err := s.request(lctx, op, i)
			if lctx.Err() != nil {
				return // cut by the deadline, not a failure
			}
			r.ops[op].add(time.Since(started), err)
		}
	})
	r.ran = time.Since(started)
	// The figures go to the log at once too: the table comes after the
	// burst and the deletions, and a run stopped before them keeps these.
	for i, op := range r.ops {
		op.window = r.ran
		log.Printf("API load: %s %s, %s; errors %s", loadMix[i].name, op.latency(), op.rate(), op.errors())
	}
	return r
}

// weighted is an operation of a mix, and how many of the mix's requests
// it is.
type weighted struct {
	name   string
	weight int
}

// pick returns the index in mix of a random operation, by weight.
func pick(mix []weighted) int {
	total := 0
	for _, m := range mix {
		total += m.weight
	}
	n := rand.IntN(total)
	for op, m := range mix {
		if n < m.weight {
			return op
		}
		n -= m.weight
	}
	return 0
}

// request sends operation op of loadMix about item i.
func (s *phase) request(ctx context.Context, op, i int) error {
	switch op {
	case 0:
		return s.subject.get(ctx, i)
	case 1:
		return s.subject.listFirst(ctx, i)
	case 2:
		return s.subject.history(ctx, i)
	default:
		return s.subject.define(ctx, i, s.burst)
	}
}

// listAll lists the first perCollection items, page by page, on the idle
// server.
func (s *phase) listAll(ctx context.Context, r *loadResult) {
	started := time.Now()
	r.pages, r.listed = s.subject.listPages(ctx, r.fullList)
	r.fullList.window = time.Since(started)
	log.Printf("%s: listed %d items in %d pages in %s", s.subject.name(), r.listed, r.pages, r.fullList.window.Round(time.Millisecond))
}
