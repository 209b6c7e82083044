package temporalserver

import (
	"database/sql"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // the driver the server's sqlite plugin uses
)

// visibilityIndexes are the indexes of the visibility table that the
// embedded server keeps, each with the statistics SQLite's query planner
// reads for it: those recur's lists (its search attributes are keywords,
// as users' custom ones mostly are), the Web UI's and the temporal CLI's
// default lists and Schedules' lists use.
//
// Temporal's SQLite schema indexes every column of executions_visibility,
// most of them computed from the search attributes' JSON, and every change
// of a workflow's memo or search attributes rewrites the row and each
// index. recur writes its job's memo at every occurrence, on the one
// SQLite connection, so each index nobody queries is paid at every
// occurrence (bench/history/2026-11-23-job-runs-its-actions.md). A query
// on an unindexed column still answers, by a scan.
//
// Without statistics the planner takes every equality for equally
// selective and reads Schedules' list (TemporalNamespaceDivision =
// 'TemporalScheduler' AND ExecutionStatus = 'Running') or a list of
// collections (RecurKind = 'collection' AND ...) through by_status, every
// running workflow of the namespace, instead of their own index. The
// statistics (sqlite_stat1's format: the rows of the table, then the rows
// that share each prefix of the index's columns) describe the table's
// shape rather than its size, so that they hold from the first workflow
// on: a million rows in one namespace, a workflow ID names a few runs, a
// keyword value a hundredth of the rows, a status, type or task queue
// half of them.
var visibilityIndexes = map[string]string{
	"default_idx":                    "1000000 1000000 2 1 1", // every list: namespace, newest first
	"by_execution_time":              "1000000 1000000 2 1 1 1",
	"by_workflow_id":                 "1000000 1000000 2 1 1 1",
	"by_workflow_type":               "1000000 1000000 500000 1 1 1",
	"by_status":                      "1000000 1000000 500000 1 1 1",
	"by_task_queue":                  "1000000 1000000 500000 1 1 1",
	"by_temporal_namespace_division": "1000000 1000000 100000 1 1 1", // Schedules' lists
	"by_keyword_01":                  keywordStats,
	"by_keyword_02":                  keywordStats,
	"by_keyword_03":                  keywordStats,
	"by_keyword_04":                  keywordStats,
	"by_keyword_05":                  keywordStats,
	"by_keyword_06":                  keywordStats,
	"by_keyword_07":                  keywordStats,
	"by_keyword_08":                  keywordStats,
	"by_keyword_09":                  keywordStats,
	"by_keyword_10":                  keywordStats,
	// The primary key's (namespace_id, run_id): without statistics it
	// would pass for a selective index of the namespace.
	"sqlite_autoindex_executions_visibility_1": "1000000 1000000 1",
}

const keywordStats = "1000000 1000000 10000 1 1 1"

// prepareVisibility drops the indexes of the visibility table that
// visibilityIndexes does not keep and writes the planner statistics of
// those it keeps. It runs before the server opens the file, at every
// start, so a database made by an earlier recur is brought up to date too;
// both are idempotent.
func prepareVisibility(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("list visibility indexes: %w", err)
	}
	var drop []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if _, keep := visibilityIndexes[name]; !keep {
			drop = append(drop, name)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, name := range drop {
		// Names come from sqlite_master; quoted as identifiers all the same.
		if _, err := tx.Exec(`DROP INDEX IF EXISTS "` + strings.ReplaceAll(name, `"`, `""`) + `"`); err != nil {
			return fmt.Errorf("drop visibility index %s: %w", name, err)
		}
	}
	// ANALYZE of the (unindexed) schema table creates sqlite_stat1, which
	// no CREATE TABLE may, without reading the visibility table.
	if _, err := tx.Exec(`ANALYZE sqlite_schema`); err != nil {
		return fmt.Errorf("create the planner statistics: %w", err)
	}
	if _, err := tx.Exec(`DELETE FROM sqlite_stat1 WHERE tbl = 'executions_visibility'`); err != nil {
		return fmt.Errorf("clear the visibility statistics: %w", err)
	}
	for name, stat := range visibilityIndexes {
		if _, err := tx.Exec(`INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('executions_visibility', ?, ?)`, name, stat); err != nil {
			return fmt.Errorf("write the statistics of %s: %w", name, err)
		}
	}
	return tx.Commit()
}
