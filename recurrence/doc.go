// Package recurrence turns an Azure Scheduler job's startTime and
// recurrence into occurrence instants, exactly as docs/recurrence.md at the
// repository root specifies.
//
// Parse reads and validates the JSON; Compile turns a Definition into a
// Rule; Rule.First applies the start-time rules and Rule.Next steps from
// one nominal occurrence to the next; Preview lists the next runs. A Rule
// walks one source of occurrences: Azure's fields or a cron (generator),
// an RFC 5545 rrule (rruleSource), or the union of a list of rules. The
// package uses only the standard library and never reads the clock: every
// instant is passed in.
//
// Where docs/recurrence.md is silent, this package decides:
//   - A startTime's fraction of a second is kept: every occurrence carries
//     it, so a rule without schedule runs at A itself (rule 4).
//   - When A is the later instant of a wall-clock time that exists twice,
//     A's own wall-clock time on A's date runs at A, once; other days
//     follow the DST rule (first instant).
//   - Next honours endTime but not count: counting runs is the caller's
//     business (the immediate run of rule 2 counts, "run now" does not).
//   - Occurrences after the year 9999 are never produced.
//
// Next costs tens to hundreds of nanoseconds whatever the distance to
// startTime; the repository's bench/history/2026-11-21-recurrence-engine.md
// has the figures and the command that made them.
package recurrence

//go:generate go run ./internal/genwinzones
