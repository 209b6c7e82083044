package temporalserver

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/dynamicconfig"
)

// TestSearchAttributeRefreshEndsAfterStart: refreshing the search
// attribute caches on every read makes attributes registered at start
// usable at once, and costs a persistence read per row of every
// visibility list; it must end once the caches have reloaded by
// themselves. Not parallel: it shortens searchAttributeCacheExpiry.
func TestSearchAttributeRefreshEndsAfterStart(t *testing.T) {
	defer func(d time.Duration) { searchAttributeCacheExpiry = d }(searchAttributeCacheExpiry)
	searchAttributeCacheExpiry = 2 * time.Second

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	s, err := Start(t.Context(), Config{DataDir: t.TempDir(), FrontendPort: port, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer s.Stop()

	refreshing := func() bool {
		for _, v := range s.dc.GetValue(dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key()) {
			return v.Value == true
		}
		return false
	}
	require.True(t, refreshing(), "right after start")
	require.Eventually(t, func() bool { return !refreshing() }, 10*time.Second, 100*time.Millisecond, "after the caches' expiry")
}

// TestTheHistoryCacheIsConfigured: the history service caches the
// workflows Config.CachedWorkflows says, DefaultCachedWorkflows when it
// says nothing, and the start events of as many.
func TestTheHistoryCacheIsConfigured(t *testing.T) {
	cached := func(cfg Config, key dynamicconfig.Key) any {
		cfg, err := withDefaults(cfg)
		require.NoError(t, err)
		dc, endRefresh := devDynamicConfig(cfg)
		endRefresh()
		for _, v := range dc.GetValue(key) {
			return v.Value
		}
		return nil
	}
	workflows, events := dynamicconfig.HistoryCacheHostLevelMaxSize.Key(), dynamicconfig.EventsCacheMaxSizeBytes.Key()
	require.Equal(t, DefaultCachedWorkflows, cached(Config{DataDir: "d"}, workflows))
	require.Equal(t, 50000, cached(Config{DataDir: "d", CachedWorkflows: 50000}, workflows))
	require.Equal(t, DefaultCachedWorkflows*4096, cached(Config{DataDir: "d"}, events))
	require.Equal(t, 50000*4096, cached(Config{DataDir: "d", CachedWorkflows: 50000}, events))
}
