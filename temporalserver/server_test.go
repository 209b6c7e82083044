package temporalserver_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/recurhq/recur/internal/syncbuf"
	"github.com/recurhq/recur/temporalserver"

	_ "modernc.org/sqlite" // the driver the server uses, to read its file
)

// freePort returns a port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// start starts a server and stops it when the test ends.
func start(t *testing.T, cfg temporalserver.Config) *temporalserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := temporalserver.Start(ctx, cfg)
	require.NoError(t, err)
	t.Logf("started in %v", time.Since(begin))
	t.Cleanup(func() {
		begin := time.Now()
		require.NoError(t, s.Stop())
		t.Logf("stopped in %v", time.Since(begin))
	})
	return s
}

func dial(t *testing.T, s *temporalserver.Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.FrontendAddress(), Namespace: s.Namespace()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// get returns the body of a 200 answer to GET url.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", url, body)
	return string(body)
}

func customAttributes(t *testing.T, c client.Client, namespace string) map[string]enums.IndexedValueType {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(t.Context(),
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	return resp.GetCustomAttributes()
}

func retention(t *testing.T, c client.Client, namespace string) time.Duration {
	t.Helper()
	desc, err := c.WorkflowService().DescribeNamespace(t.Context(),
		&workflowservice.DescribeNamespaceRequest{Namespace: namespace})
	require.NoError(t, err)
	return desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
}

func TestStartServesFrontendUINamespaceAndSearchAttributes(t *testing.T) {
	t.Parallel()
	frontendPort, uiPort := freePort(t), freePort(t)
	attrs := map[string]enums.IndexedValueType{
		"RecurJob":        enums.INDEXED_VALUE_TYPE_KEYWORD,
		"RecurCollection": enums.INDEXED_VALUE_TYPE_KEYWORD,
		"RecurNominal":    enums.INDEXED_VALUE_TYPE_DATETIME,
		"RecurAttempts":   enums.INDEXED_VALUE_TYPE_INT,
	}
	s := start(t, temporalserver.Config{
		DataDir:          filepath.Join(t.TempDir(), "not", "there", "yet"),
		FrontendPort:     frontendPort,
		UIPort:           uiPort,
		Namespace:        "recur-test",
		Retention:        72 * time.Hour,
		SearchAttributes: attrs,
		Logger:           testLogger(t),
	})

	require.Equal(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(frontendPort)), s.FrontendAddress())
	require.Equal(t, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(uiPort)), s.UIAddress())
	require.Equal(t, "recur-test", s.Namespace())

	// The embedded assets, the UI's settings and its proxy to the frontend.
	require.Contains(t, get(t, s.UIAddress()+"/"), "/_app/immutable/")
	require.Contains(t, get(t, s.UIAddress()+"/api/v1/settings"), `"DefaultNamespace":"recur-test"`)
	require.Contains(t, get(t, s.UIAddress()+"/api/v1/namespaces/recur-test"), `"name": "recur-test"`)

	c := dial(t, s)
	require.Equal(t, 72*time.Hour, retention(t, c, "recur-test"))
	desc, err := c.WorkflowService().DescribeNamespace(t.Context(),
		&workflowservice.DescribeNamespaceRequest{Namespace: "recur-test"})
	require.NoError(t, err)
	require.True(t, desc.GetNamespaceInfo().GetCapabilities().GetSyncUpdate(), "updates are enabled")
	require.True(t, desc.GetNamespaceInfo().GetCapabilities().GetAsyncUpdate(), "async-accepted updates are enabled")
	custom := customAttributes(t, c, "recur-test")
	for name, typ := range attrs {
		require.Equal(t, typ, custom[name], "search attribute %s", name)
	}
	// Registered and mapped: a query naming them all is accepted, of every
	// type; one naming an attribute nobody registered is not.
	require.NoError(t, temporalserver.SearchAttributesUsable(t.Context(), c, "recur-test", attrs))
	require.Error(t, temporalserver.SearchAttributesUsable(t.Context(), c, "recur-test",
		map[string]enums.IndexedValueType{"RecurNeverRegistered": enums.INDEXED_VALUE_TYPE_KEYWORD}))

	// What jobs must never call: every listener answers, and the
	// frontend's HTTP API, which nothing of recur needs, is off.
	listeners := s.Listeners()
	require.Len(t, listeners, 6, "frontend's port, frontend, history, matching, worker, UI")
	for _, l := range listeners {
		conn, err := net.DialTimeout("tcp", l.Address, 5*time.Second)
		require.NoError(t, err, "%s at %s", l.What, l.Address)
		_ = conn.Close()
	}
	clusters, err := c.OperatorService().ListClusters(t.Context(), &operatorservice.ListClustersRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, clusters.GetClusters())
	for _, cl := range clusters.GetClusters() {
		require.Empty(t, cl.GetHttpAddress(), "no HTTP API")
	}
}

func TestWorkflowsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := temporalserver.Config{
		DataDir:          dir,
		FrontendPort:     freePort(t),
		SearchAttributes: map[string]enums.IndexedValueType{"RecurJob": enums.INDEXED_VALUE_TYPE_KEYWORD},
		Logger:           testLogger(t),
	}
	first, err := temporalserver.Start(t.Context(), cfg)
	require.NoError(t, err)
	require.Empty(t, first.UIAddress())
	c, err := client.Dial(client.Options{HostPort: first.FrontendAddress(), Namespace: first.Namespace()})
	require.NoError(t, err)
	run, err := c.ExecuteWorkflow(t.Context(),
		client.StartWorkflowOptions{ID: "survivor", TaskQueue: "nobody-polls-this"}, "nobody-runs-this")
	require.NoError(t, err)
	require.Equal(t, 60*24*time.Hour, retention(t, c, "default"))
	c.Close()
	require.NoError(t, first.Stop())
	require.NoError(t, first.Stop(), "second Stop")
	require.FileExists(t, filepath.Join(dir, "temporal.db"))

	// New ports, a new attribute and another retention: the existing
	// namespace is reconciled rather than re-created.
	cfg.FrontendPort = freePort(t)
	cfg.Retention = 10 * 24 * time.Hour
	cfg.SearchAttributes = map[string]enums.IndexedValueType{
		"RecurJob":   enums.INDEXED_VALUE_TYPE_KEYWORD,
		"RecurOwner": enums.INDEXED_VALUE_TYPE_KEYWORD,
	}
	second := start(t, cfg)
	c = dial(t, second)
	desc, err := c.DescribeWorkflowExecution(t.Context(), "survivor", run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enums.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
	require.Equal(t, "nobody-runs-this", desc.GetWorkflowExecutionInfo().GetType().GetName())
	require.Equal(t, 10*24*time.Hour, retention(t, c, "default"))
	custom := customAttributes(t, c, "default")
	require.Equal(t, enums.INDEXED_VALUE_TYPE_KEYWORD, custom["RecurJob"])
	require.Equal(t, enums.INDEXED_VALUE_TYPE_KEYWORD, custom["RecurOwner"])
}

func TestPortInUse(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	dir := filepath.Join(t.TempDir(), "data")
	_, err = temporalserver.Start(t.Context(), temporalserver.Config{DataDir: dir, FrontendPort: takenPort})
	require.ErrorContains(t, err, "frontend port 127.0.0.1:"+strconv.Itoa(takenPort)+" is in use")
	_, err = temporalserver.Start(t.Context(), temporalserver.Config{DataDir: dir, FrontendPort: freePort(t), UIPort: takenPort})
	require.ErrorContains(t, err, "ui port 127.0.0.1:"+strconv.Itoa(takenPort)+" is in use")
	_, statErr := os.Stat(dir)
	require.ErrorIs(t, statErr, os.ErrNotExist, "nothing is written before the ports are checked")

	s := start(t, temporalserver.Config{DataDir: dir, FrontendPort: freePort(t), Logger: testLogger(t)})
	dial(t, s)
}

func TestSearchAttributeTypeConflict(t *testing.T) {
	t.Parallel()
	cfg := temporalserver.Config{
		DataDir:          t.TempDir(),
		FrontendPort:     freePort(t),
		SearchAttributes: map[string]enums.IndexedValueType{"RecurJob": enums.INDEXED_VALUE_TYPE_KEYWORD},
		Logger:           testLogger(t),
	}
	s, err := temporalserver.Start(t.Context(), cfg)
	require.NoError(t, err)
	require.NoError(t, s.Stop())

	cfg.FrontendPort = freePort(t)
	cfg.SearchAttributes = map[string]enums.IndexedValueType{"RecurJob": enums.INDEXED_VALUE_TYPE_INT}
	_, err = temporalserver.Start(t.Context(), cfg)
	require.ErrorContains(t, err, "search attribute RecurJob exists with type")

	// The failed start stopped everything: the same port is free again.
	s = start(t, temporalserver.Config{DataDir: cfg.DataDir, FrontendPort: cfg.FrontendPort, Logger: testLogger(t)})
	dial(t, s)
}

// TestDatabaseUsesWriteAheadLog checks the SQLite settings the bench
// measured (BenchmarkWorkflowThroughput): the file is in WAL mode, which
// SQLite keeps in the file, and Sync takes only its two values.
func TestDatabaseUsesWriteAheadLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := start(t, temporalserver.Config{DataDir: dir, FrontendPort: freePort(t), Sync: temporalserver.SyncNormal, Logger: testLogger(t)})
	require.NoError(t, s.Stop())

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "temporal.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.Equal(t, "wal", mode)

	_, err = temporalserver.Start(t.Context(), temporalserver.Config{DataDir: t.TempDir(), FrontendPort: freePort(t), Sync: "off"})
	require.ErrorContains(t, err, `sync "off" is neither "full" nor "normal"`)
}

// TestVisibilityKeepsTheIndexesListsUse: a new database keeps only the
// visibility indexes that lists query (every change of a memo rewrites
// each index), and one made before is trimmed at its next start.
func TestVisibilityKeepsTheIndexesListsUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := temporalserver.Config{DataDir: dir, FrontendPort: freePort(t), Logger: testLogger(t)}
	s := start(t, cfg)
	require.NoError(t, s.Stop())
	want := []string{"by_execution_time", "by_keyword_01", "by_keyword_02", "by_keyword_03", "by_keyword_04", "by_keyword_05",
		"by_keyword_06", "by_keyword_07", "by_keyword_08", "by_keyword_09", "by_keyword_10", "by_status", "by_task_queue",
		"by_temporal_namespace_division", "by_workflow_id", "by_workflow_type", "default_idx"}
	require.Equal(t, want, visibilityIndexes(t, dir))

	// As Temporal's schema makes it.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "temporal.db"))
	require.NoError(t, err)
	_, err = db.Exec(`CREATE INDEX by_int_01 ON executions_visibility (namespace_id, Int01)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.Contains(t, visibilityIndexes(t, dir), "by_int_01")

	cfg.FrontendPort = freePort(t)
	s = start(t, cfg)
	require.NoError(t, s.Stop())
	require.Equal(t, want, visibilityIndexes(t, dir))
}

// TestListsReadThroughTheirSelectiveIndex: SQLite reads a page of jobs
// (the SQL the server's sqlite plugin makes of recur's WorkflowId BETWEEN
// ... AND ExecutionStatus = 'Running') through by_workflow_id, 101 rows,
// and, with the planner statistics the embedded server writes, Schedules'
// list through its division, not every running workflow of the namespace
// through by_status. A database made without them gets them at its next
// start.
func TestListsReadThroughTheirSelectiveIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := temporalserver.Config{DataDir: dir, FrontendPort: freePort(t), Logger: testLogger(t)}
	s := start(t, cfg)
	require.NoError(t, s.Stop())
	const order = ` ORDER BY COALESCE(close_time, '9999-12-31 23:59:59+00:00') DESC, start_time DESC, run_id LIMIT 1000`
	page := `SELECT * FROM executions_visibility WHERE namespace_id = 'n' AND workflow_id BETWEEN 'job:s/g/c/job-000' AND 'job:s/g/c/job-100'` +
		` AND status = 1` + order
	schedules := `SELECT * FROM executions_visibility WHERE namespace_id = 'n' AND TemporalNamespaceDivision = 'TemporalScheduler' AND status = 1` + order
	require.Contains(t, queryPlan(t, dir, page), "USING INDEX by_workflow_id ")
	require.Contains(t, queryPlan(t, dir, schedules), "USING INDEX by_temporal_namespace_division ")

	// As a database made without them.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "temporal.db"))
	require.NoError(t, err)
	_, err = db.Exec(`DROP TABLE sqlite_stat1`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.Contains(t, queryPlan(t, dir, schedules), "USING INDEX by_status ")

	cfg.FrontendPort = freePort(t)
	s = start(t, cfg)
	require.NoError(t, s.Stop())
	require.Contains(t, queryPlan(t, dir, schedules), "USING INDEX by_temporal_namespace_division ")
}

// queryPlan is SQLite's plan for query on the database in dir, one line
// per step.
func queryPlan(t *testing.T, dir, query string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "temporal.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("EXPLAIN QUERY PLAN " + query)
	require.NoError(t, err)
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan.WriteString(detail + "\n")
	}
	require.NoError(t, rows.Err())
	return plan.String()
}

// visibilityIndexes lists the named indexes of the visibility table of the
// database in dir, sorted.
func visibilityIndexes(t *testing.T, dir string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "temporal.db")+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND sql IS NOT NULL ORDER BY name`)
	require.NoError(t, err)
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		names = append(names, name)
	}
	require.NoError(t, rows.Err())
	return names
}

// TestALargeMemoIsNoWarning: the server warns of a memo past
// temporalserver.MemoSizeWarning, not past Temporal's 2 KiB, which
// recur's collections pass at every write.
func TestALargeMemoIsNoWarning(t *testing.T) {
	t.Parallel()
	var logged syncbuf.Buffer
	s := start(t, temporalserver.Config{
		DataDir:      t.TempDir(),
		FrontendPort: freePort(t),
		Logger:       slog.New(slog.NewJSONHandler(&logged, nil)),
	})
	c := dial(t, s)
	const warning = "Blob data size exceeds the warning limit"
	for i, size := range []int{100 << 10, temporalserver.MemoSizeWarning} {
		_, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{
			ID: "memo-" + strconv.Itoa(i), TaskQueue: "nobody-polls-this",
			Memo: map[string]any{"names": strings.Repeat("n", size)},
		}, "nobody-runs-this")
		require.NoError(t, err)
		if size < temporalserver.MemoSizeWarning {
			require.NotContains(t, logged.String(), warning)
		}
	}
	require.Contains(t, logged.String(), warning, "a memo past the limit is still a warning")
}
