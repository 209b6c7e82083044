package temporalserver

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/server/common/dynamicconfig"

	"github.com/recurhq/recur/internal/freeport"
)

// TestSearchAttributeRefreshOnlyAfterARegistration: refreshing the search
// attribute caches on every read costs a persistence read per row of every
// visibility list; a start runs it only when it registers attributes in a
// namespace made before, until the caches have reloaded by themselves. A
// new database's attributes are usable from the start without it. Not
// parallel: it shortens searchAttributeCacheExpiry.
func TestSearchAttributeRefreshOnlyAfterARegistration(t *testing.T) {
	defer func(d time.Duration) { searchAttributeCacheExpiry = d }(searchAttributeCacheExpiry)
	searchAttributeCacheExpiry = 2 * time.Second
	cfg := Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SearchAttributes: map[string]enums.IndexedValueType{"RecurJob": enums.INDEXED_VALUE_TYPE_KEYWORD}}
	start := func() *Server {
		ports, err := freeport.Pick("127.0.0.1", 1)
		require.NoError(t, err)
		cfg.FrontendPort = ports[0]
		s, err := Start(t.Context(), cfg)
		require.NoError(t, err)
		return s
	}
	refreshing := func(s *Server) bool {
		for _, v := range s.dc.GetValue(dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key()) {
			return v.Value == true
		}
		return false
	}

	s := start()
	require.False(t, refreshing(s), "a new database")
	c, err := client.Dial(client.Options{HostPort: s.FrontendAddress(), Namespace: s.Namespace()})
	require.NoError(t, err)
	_, err = c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: "tagged", TaskQueue: "nobody-polls-this",
		TypedSearchAttributes: temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyKeyword("RecurJob").ValueSet("j1"))}, "nobody-runs-this")
	require.NoError(t, err, "a new database's attribute is usable at once")
	require.Eventually(t, func() bool {
		resp, err := c.ListWorkflow(t.Context(), &workflowservice.ListWorkflowExecutionsRequest{Query: `RecurJob = "j1"`})
		require.NoError(t, err)
		return len(resp.GetExecutions()) == 1
	}, 10*time.Second, 100*time.Millisecond, "and listed by it")
	c.Close()
	require.NoError(t, s.Stop())

	cfg.SearchAttributes["RecurOwner"] = enums.INDEXED_VALUE_TYPE_KEYWORD
	s = start()
	defer s.Stop()
	require.True(t, refreshing(s), "right after a start that registered an attribute")
	require.Eventually(t, func() bool { return !refreshing(s) }, 10*time.Second, 100*time.Millisecond, "after the caches' expiry")
}

// TestTheHistoryCacheIsConfigured: the history service caches the
// workflows Config.CachedWorkflows says, DefaultCachedWorkflows when it
// says nothing, and the start events of as many.
func TestTheHistoryCacheIsConfigured(t *testing.T) {
	cached := func(cfg Config, key dynamicconfig.Key) any {
		cfg, err := withDefaults(cfg)
		require.NoError(t, err)
		dc := devDynamicConfig(cfg)
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
