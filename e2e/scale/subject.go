package main

import (
	"context"
	"time"
)

// subject is what a phase measures, through its own client: recur's jobs
// through the REST API, or the peer's native Schedules through the
// Temporal client. Item i is job i or schedule i; each is hourly, and
// posts to the sink's target for i.
type subject interface {
	// name is the phase's name in the report.
	name() string
	// prepare makes room for n items (recur's collections).
	prepare(ctx context.Context, n int) error
	// define creates item i, or redefines it, first due at start.
	define(ctx context.Context, i int, start time.Time) error
	// get reads item i.
	get(ctx context.Context, i int) error
	// listFirst reads the first page of the list item i is in.
	listFirst(ctx context.Context, i int) error
	// history reads the first page of item i's past occurrences.
	history(ctx context.Context, i int) error
	// listPages reads the list of the first perCollection items page by
	// page, recording each page, and returns the pages and items read.
	listPages(ctx context.Context, rec *recorder) (pages, items int)
	// remove deletes the n items.
	remove(ctx context.Context, n int) error
}

// pageSize is the items in a page of a list or of history: recur's
// largest $top, asked of both.
const pageSize = 100
