package temporalcluster

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestPostgresRunsWithTheOptionsSettings: PostgreSQL runs with the
// settings Options name, over the cluster's own where both name one, and
// a setting that is no parameter's name is refused before anything starts.
func TestPostgresRunsWithTheOptionsSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: it needs PostgreSQL, which it installs when the system lacks it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout+InstallTimeout)
	defer cancel()
	opts, err := Options{PostgresSettings: map[string]string{
		"max_wal_size":           "3GB",
		"synchronous_commit":     "local",
		"recur.test_custom_name": "on",
	}}.withDefaults()
	require.NoError(t, err)
	pgBin, err := postgresBinaries(ctx)
	require.NoError(t, err)
	dir, err := makeClusterDir()
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	p, err := startPostgres(ctx, pgBin, filepath.Join(dir, "postgres"), postgresSettings(opts))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.stop()) })

	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	require.NoError(t, err)
	defer conn.Close(ctx)
	show := func(name string) string {
		var v string
		require.NoError(t, conn.QueryRow(ctx, "SHOW "+name).Scan(&v))
		return v
	}
	require.Equal(t, "3GB", show("max_wal_size"))
	require.Equal(t, "local", show("synchronous_commit"), "the option's, over the cluster's own off")
	require.Equal(t, "off", show("fsync"), "the cluster's own, not durable")
	require.Equal(t, "300", show("max_connections"))
	require.Equal(t, "on", show("recur.test_custom_name"))

	for _, name := range []string{"", "max_wal_size; DROP", "Max_Wal_Size", "a=b", "a.b.c"} {
		_, err := Options{PostgresSettings: map[string]string{name: "1"}}.withDefaults()
		require.ErrorContains(t, err, "not a parameter's name", name)
	}
}
