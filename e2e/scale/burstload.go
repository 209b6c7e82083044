package main

import (
	"context"
	"errors"
	"log"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// The operations sent while the burst runs, and how many of every 14
// requests (16 with -floor) each one is. Reads go to the burst's items;
// writes go to items of their own (writesPerWorker for each worker, and
// for recur a collection of its own to disable and enable), due a day
// later, so that the burst's count stays exact: what a user does to other
// jobs while a burst is delivered. A DELETE is followed by the PUT that
// creates the item again (weight 0: it is never picked alone), a PATCH and
// a collection's disable by the write that undoes them, each timed apart.
// The floor's signal and update are in the mix with -floor only
// (phase.mixDuringBurst).
var burstMix = []weighted{
	{"get", 2},
	{"list (first page)", 2},
	{"list across the subscription (first page)", 1},
	{"history (first page)", 1},
	{"PUT (redefine)", 2},
	{"PATCH (disable, then enable)", 2},
	{"DELETE", 1},
	{"PUT (create after the DELETE)", 0},
	{"run now", 2},
	{"collection disable, then enable", 1},
	{"signal to an unpolled workflow (-floor)", 0},
	{"update to an idle worker's workflow (-floor)", 0},
}

// The indexes in burstMix of the operations the loop treats apart.
const (
	opRedefine = 4
	opDelete   = 6
	opRecreate = 7
	opDisable  = 9
	opFloor    = 10
	opUpdate   = 11
)

// mixDuringBurst is the mix the phase sends: burstMix, with the floor's signals
// and updates if it measures the floor.
func (s *phase) mixDuringBurst() []weighted {
	mix := slices.Clone(burstMix)
	if s.floor != nil {
		mix[opFloor].weight = 1
		mix[opUpdate].weight = 1
	}
	return mix
}

// writesPerWorker is how many items each worker of the burst's load
// writes to, in turn: its own, so that no two writes race on one item.
const writesPerWorker = 4

// errNoCounterpart is what a subject's write answers when the peer has no
// such write (a collection's disable, for Schedules).
var errNoCounterpart = errors.New("no counterpart")

// burstWriter is what a subject writes and reads during the burst besides
// what subject does. Item k of the writes is not one of the burst's.
type burstWriter interface {
	// prepareWrites creates the n items the writes go to, first due at
	// start, and what else they need (recur's collection to disable).
	prepareWrites(ctx context.Context, n int, start time.Time) error
	redefineW(ctx context.Context, k int, start time.Time) error
	deleteW(ctx context.Context, k int) error
	// pauseW disables (pauses) item k, or enables it again.
	pauseW(ctx context.Context, k int, paused bool) error
	runW(ctx context.Context, k int) error
	// disableGroup disables the collection of the writes' own, or
	// enables it again.
	disableGroup(ctx context.Context, disabled bool) error
	// listAcross reads the first page of every item the tenant has.
	listAcross(ctx context.Context) error
}

// burstLoad is what the load during the burst measured.
type burstLoad struct {
	ran time.Duration
	ops []*recorder // by burstMix's order
}

// writesStart is when the writes' own items first fall due: after
// everything a run measures.
func (s *phase) writesStart() time.Time { return s.burst.Add(24 * time.Hour) }

// prepareWrites creates the items the load during the burst writes to.
func (s *phase) prepareWrites(ctx context.Context) error {
	if s.cfg.burstLoad <= 0 {
		return nil
	}
	started := time.Now()
	n := s.cfg.concurrency * writesPerWorker
	if err := s.subject.(burstWriter).prepareWrites(ctx, n, s.writesStart()); err != nil {
		return err
	}
	if s.floor != nil {
		if err := s.floor.start(ctx, n); err != nil {
			return err
		}
	}
	log.Printf("%s: created the items for the writes during the burst (%d and a collection's) in %s", s.subject.name(), n, time.Since(started).Round(time.Millisecond))
	return nil
}

// loadBurst sends burstMix from -concurrency workers until ctx ends or
// -burst-load has passed.
func (s *phase) loadBurst(ctx context.Context) *burstLoad {
	r := &burstLoad{}
	for range burstMix {
		r.ops = append(r.ops, newRecorder())
	}
	var created []int
	for i, ok := range s.created {
		if ok {
			created = append(created, i)
		}
	}
	if len(created) == 0 || s.cfg.burstLoad <= 0 {
		return r
	}
	w := s.subject.(burstWriter)
	mix := s.mixDuringBurst()
	started := time.Now()
	lctx, cancel := context.WithDeadline(ctx, started.Add(s.cfg.burstLoad))
	defer cancel()
	log.Printf("%s: load during the burst: %d workers for up to %s", s.subject.name(), s.cfg.concurrency, s.cfg.burstLoad)
	var group sync.Mutex    // one collection's disable at a time
	var groupNext time.Time // the earliest start of the next (-group-every)
	each(lctx, s.cfg.concurrency, 0, s.cfg.concurrency, func(worker int) {
		mine := worker * writesPerWorker
		// The worker's items deleted whose re-creation failed: a write
		// answered 503 has not happened, so they are missing until a PUT
		// creates them again, and a 404 about one is the right answer,
		// counted apart from one nothing explains.
		var missing [writesPerWorker]bool
		for turn := 0; lctx.Err() == nil; turn++ {
			op := pick(mix)
			k := mine + turn%writesPerWorker
			gone := &missing[turn%writesPerWorker]
			i := created[rand.IntN(len(created))]
			record := func(op int, do func() error) bool {
				started := time.Now()
				err := do()
				if *gone && notFound(err) {
					err = &missingItem{err}
				}
				switch {
				case op == opRecreate:
					*gone = err != nil
				case op == opRedefine && err == nil:
					*gone = false
				}
				if lctx.Err() != nil || errors.Is(err, errNoCounterpart) {
					return false // cut by the deadline, or not a write the peer has
				}
				r.ops[op].add(time.Since(started), err)
				return err == nil
			}
			switch op {
			case 0:
				record(op, func() error { return s.subject.get(lctx, i) })
			case 1:
				record(op, func() error { return s.subject.listFirst(lctx, i) })
			case 2:
				record(op, func() error { return w.listAcross(lctx) })
			case 3:
				record(op, func() error { return s.subject.history(lctx, i) })
			case opRedefine:
				record(op, func() error { return w.redefineW(lctx, k, s.writesStart()) })
			case 5:
				if record(op, func() error { return w.pauseW(lctx, k, true) }) {
					record(op, func() error { return w.pauseW(lctx, k, false) })
				}
			case opDelete:
				if record(op, func() error { return w.deleteW(lctx, k) }) {
					record(opRecreate, func() error { return w.redefineW(lctx, k, s.writesStart()) })
				}
			case 8:
				record(op, func() error { return w.runW(lctx, k) })
			case opDisable:
				if !group.TryLock() {
					continue
				}
				if time.Now().Before(groupNext) {
					group.Unlock()
					continue
				}
				groupNext = time.Now().Add(s.cfg.groupEvery)
				if record(op, func() error { return w.disableGroup(lctx, true) }) {
					record(op, func() error { return w.disableGroup(lctx, false) })
				}
				group.Unlock()
			case opFloor:
				record(op, func() error { return s.floor.signal(lctx, k) })
			case opUpdate:
				record(op, func() error { return s.floor.update(lctx, k) })
			}
		}
	})
	r.ran = time.Since(started)
	for i, op := range r.ops {
		op.window = r.ran
		if op.count() > 0 {
			log.Printf("%s: during the burst: %s %s, %s; errors %s", s.subject.name(), burstMix[i].name, op.latency(), op.rate(), op.errors())
		}
	}
	return r
}
