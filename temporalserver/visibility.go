package temporalserver

import (
	"database/sql"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // the driver the server's sqlite plugin uses
)

// visibilityIndexes are the indexes of the visibility table that the
// embedded server keeps: those recur's lists (its search attributes are
// keywords, as users' custom ones mostly are), the Web UI's and the
// temporal CLI's default lists and Schedules' lists use.
//
// Temporal's SQLite schema indexes every column of executions_visibility,
// most of them computed from the search attributes' JSON, and every change
// of a workflow's memo or search attributes rewrites the row and each
// index. recur writes its job's memo at every occurrence, on the one
// SQLite connection, so each index nobody queries is paid at every
// occurrence (BENCHMARKS.md). A query on an unindexed column still
// answers, by a scan.
var visibilityIndexes = map[string]bool{
	"default_idx":                    true, // every list: namespace, newest first
	"by_execution_time":              true,
	"by_workflow_id":                 true,
	"by_workflow_type":               true,
	"by_status":                      true,
	"by_task_queue":                  true,
	"by_temporal_namespace_division": true, // Schedules' lists
	"by_keyword_01":                  true,
	"by_keyword_02":                  true,
	"by_keyword_03":                  true,
	"by_keyword_04":                  true,
	"by_keyword_05":                  true,
	"by_keyword_06":                  true,
	"by_keyword_07":                  true,
	"by_keyword_08":                  true,
	"by_keyword_09":                  true,
	"by_keyword_10":                  true,
}

// trimVisibilityIndexes drops the indexes of the visibility table that
// visibilityIndexes does not keep. It runs before the server opens the
// file, at every start, so a database made by an earlier recur is trimmed
// too; dropping is idempotent.
func trimVisibilityIndexes(path string) error {
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
		if !visibilityIndexes[name] {
			drop = append(drop, name)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(drop) == 0 {
		return nil
	}
	var stmts strings.Builder
	stmts.WriteString("BEGIN;")
	for _, name := range drop {
		// Names come from sqlite_master; quoted as identifiers all the same.
		fmt.Fprintf(&stmts, `DROP INDEX IF EXISTS "%s";`, strings.ReplaceAll(name, `"`, `""`))
	}
	stmts.WriteString("COMMIT;")
	if _, err := db.Exec(stmts.String()); err != nil {
		return fmt.Errorf("drop %d visibility indexes: %w", len(drop), err)
	}
	return nil
}
