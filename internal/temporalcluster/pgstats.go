package temporalcluster

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Writes is what PostgreSQL has written since it started, every database
// together: what a sizing of its disks needs (transactions, rows, the
// write-ahead log's bytes and its syncs).
type Writes struct {
	// Commits are the transactions committed (pg_stat_database), a read's
	// too: each statement outside a transaction is one.
	Commits int64
	// Rows are the rows inserted, updated and deleted (pg_stat_database).
	Rows int64
	// WALBytes is how far the write-ahead log has advanced: every byte a
	// write put on the disk before its data pages (pg_current_wal_lsn).
	WALBytes int64
	// WALSyncs are the log's syncs to the disk (pg_stat_wal.wal_sync): on
	// a durable server, the write operations commits wait for, several
	// commits sharing one when they come together.
	WALSyncs int64
}

// Sub returns what was written between v and w.
func (w Writes) Sub(v Writes) Writes {
	return Writes{Commits: w.Commits - v.Commits, Rows: w.Rows - v.Rows,
		WALBytes: w.WALBytes - v.WALBytes, WALSyncs: w.WALSyncs - v.WALSyncs}
}

// Writes reads PostgreSQL's counters of what it has written. The
// statistics counters lag the writes by up to a backend's flush interval
// (about 10 s when it went idle); the log's position does not.
func (p *Postgres) Writes(ctx context.Context) (Writes, error) {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return Writes{}, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	var w Writes
	err = conn.QueryRow(ctx, `SELECT
			(SELECT sum(xact_commit)::bigint FROM pg_stat_database),
			(SELECT sum(tup_inserted + tup_updated + tup_deleted)::bigint FROM pg_stat_database),
			(pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint,
			(SELECT wal_sync FROM pg_stat_wal)`).Scan(&w.Commits, &w.Rows, &w.WALBytes, &w.WALSyncs)
	if err != nil {
		return Writes{}, fmt.Errorf("read PostgreSQL's statistics: %w", err)
	}
	return w, nil
}

// Databases are the databases the Temporal server keeps its data in.
var Databases = []string{"temporal", "temporal_visibility"}

// TableBytes returns the bytes on disk of each table of the Temporal
// server's databases, indexes and TOAST included, by "database.table":
// what grows with each job (its mutable state, its visibility row), with
// each occurrence (its history), and what the queues hold for a while.
func (p *Postgres) TableBytes(ctx context.Context) (map[string]int64, error) {
	sizes := map[string]int64{}
	for _, db := range Databases {
		if err := p.tableBytes(ctx, db, sizes); err != nil {
			return nil, err
		}
	}
	return sizes, nil
}

func (p *Postgres) tableBytes(ctx context.Context, db string, into map[string]int64) error {
	conn, err := pgx.Connect(ctx, p.DSN(db))
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL's %s: %w", db, err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT relname, pg_total_relation_size(oid)
		FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`)
	if err != nil {
		return fmt.Errorf("list %s's tables: %w", db, err)
	}
	var table string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&table, &size}, func() error {
		into[db+"."+table] = size
		return nil
	})
	return err
}
