// Package recurrence turns an Azure Scheduler job's startTime and
// recurrence into occurrence instants, exactly as RECURRENCE.md specifies.
//
// Parse reads and validates the JSON; Compile turns a Definition into a
// Rule; Rule.First applies the start-time rules and Rule.Next steps from
// one nominal occurrence to the next. The package uses only the standard
// library and never reads the clock: every instant is passed in.
package recurrence

//go:generate go run ./internal/genwinzones
