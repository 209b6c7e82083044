package temporalserver

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// sortedPageDB is a table shaped like the visibility table for a sorted
// page: 10,000 rows of 1500-byte memos, an index on the workflow ID, and
// the visibility lists' ORDER BY, which the index does not give.
func sortedPageDB(tb testing.TB) *sql.DB {
	require.NoError(tb, usePageCache(), "as Start sets it up")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tb.TempDir(), "v.db")+"?mode=rwc&_pragma=journal_mode(wal)")
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE v (ns TEXT, run_id TEXT, wid TEXT, start_time TIMESTAMP, close_time TIMESTAMP, status INT, memo BLOB, PRIMARY KEY (ns, run_id))`)
	require.NoError(tb, err)
	_, err = db.Exec(`CREATE INDEX by_wid ON v (ns, wid, coalesce(close_time, '9999-12-31 23:59:59') DESC, start_time DESC, run_id)`)
	require.NoError(tb, err)
	tx, err := db.Begin()
	require.NoError(tb, err)
	memo := strings.Repeat("m", 1500)
	for i := range 10000 {
		_, err := tx.Exec(`INSERT INTO v VALUES ('n', ?, ?, ?, NULL, 1, ?)`, fmt.Sprintf("r%05d", i),
			fmt.Sprintf("c%02d/j%04d", i/1000, i%1000), fmt.Sprintf("2026-11-25 09:%02d:%02d", i/600%60, i%60), memo)
		require.NoError(tb, err)
	}
	require.NoError(tb, tx.Commit())
	return db
}

// sortedPage reads a page of 101 rows of collection c sorted as the
// visibility lists sort them, and calls during once the first is read.
func sortedPage(tb testing.TB, db *sql.DB, c int, during func()) {
	rows, err := db.Query(`SELECT run_id, wid, memo FROM v WHERE ns = 'n' AND wid BETWEEN ? AND ? AND status = 1
		ORDER BY coalesce(close_time, '9999-12-31 23:59:59') DESC, start_time DESC, run_id LIMIT 1000`,
		fmt.Sprintf("c%02d/j0100", c), fmt.Sprintf("c%02d/j0200", c))
	require.NoError(tb, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var run, wid string
		var memo []byte
		require.NoError(tb, rows.Scan(&run, &wid, &memo))
		if n++; n == 1 {
			during()
		}
	}
	require.NoError(tb, rows.Err())
	require.Equal(tb, 101, n)
}

// sqliteStatus returns SQLite's current value of the status parameter op.
func sqliteStatus(t *testing.T, op int32) int64 {
	tls := libc.NewTLS()
	defer tls.Close()
	values := new([2]int64) // current and highest
	var pin runtime.Pinner
	pin.Pin(values)
	defer pin.Unpin()
	p := uintptr(unsafe.Pointer(values))
	require.Equal(t, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_status64(tls, op, p, p+8, 0))
	return values[0]
}

func TestSQLitePagesComeFromOneBuffer(t *testing.T) {
	db := sortedPageDB(t)
	before := sqliteStatus(t, sqlite3.SQLITE_STATUS_PAGECACHE_USED)
	sortedPage(t, db, 3, func() {
		// The temporary b-tree of the sort holds its pages until the
		// statement ends: they are the buffer's, not malloc's.
		require.Greater(t, sqliteStatus(t, sqlite3.SQLITE_STATUS_PAGECACHE_USED), before)
	})
	require.Zero(t, sqliteStatus(t, sqlite3.SQLITE_STATUS_PAGECACHE_OVERFLOW), "pages past the buffer")
}

// BenchmarkSortedPage reads a sorted page of 101 rows, as the embedded
// server's visibility lists do.
func BenchmarkSortedPage(b *testing.B) {
	db := sortedPageDB(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sortedPage(b, db, i%10, func() {})
	}
}
