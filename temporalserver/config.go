package temporalserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/recurhq/recur/internal/freeport"
)

// clusterName names the single local cluster. It is persisted in the
// database on first start, so it must never change.
const clusterName = "active"

// storeName is the one SQLite data store, used as both the default and the
// visibility store.
const storeName = "sqlite-default"

// devDynamicConfig is the dynamic config of a single-machine dev server
// with cfg's settings.
// The update settings are the server's defaults in v1.32 but recur cannot
// work without Updates, so they are pinned here.
func devDynamicConfig(cfg Config) *dynamicconfig.MemoryClient {
	dc := dynamicconfig.NewMemoryClient()
	for key, value := range map[dynamicconfig.Key]any{
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key():              true,
		dynamicconfig.FrontendEnableUpdateWorkflowExecutionAsyncAccepted.Key(): true,
		dynamicconfig.ForceNexusEndpointRefreshOnRead.Key():                    true,
		// Bypassing the caches costs persistence reads; the CLI's dev server
		// raises these limits in the same ratio as the defaults.
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): 10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  45000,
		// A page of a job or collection list is a visibility query; the
		// default visibility rate limit is low for one process serving the
		// UI and the API.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The default (128k) is sized for a cluster host.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): cfg.CachedWorkflows,
		// Describe reads the workflow's start event (for its user
		// metadata), and a GET is a describe. The default events cache,
		// 512 KiB for the one shard, holds a few hundred of recur's start
		// events; a miss reads SQLite on its one connection, behind every
		// write.
		dynamicconfig.EventsCacheMaxSizeBytes.Key(): cfg.CachedWorkflows * eventsCachedPerWorkflow,
		dynamicconfig.MemoSizeLimitWarn.Key():       MemoSizeWarning,
	} {
		dc.OverrideValue(key, value)
	}
	return dc
}

// eventsCachedPerWorkflow is the events cache's room per cached workflow,
// in bytes: a start event with room to spare.
const eventsCachedPerWorkflow = 4 << 10

// MemoSizeWarning is the memo size past which recur's server and clients
// log a warning. Temporal's 2 KiB is one a collection passes by design
// (its jobs' names: 100 KB at 1000 jobs of 100 letters) and so does a job
// with a large body: warned at every write, the warning meant nothing.
// At 512 KiB, Temporal's warning for any other payload, it says again
// what it means: a memo on its way to the 2 MiB Temporal refuses.
const MemoSizeWarning = 512 << 10

// searchAttributeCacheExpiry is how long after the attributes are
// registered every service's cache has reloaded them by itself: the
// server's cache refresh interval (60 s) and a margin
// (refreshSearchAttributeCaches).
var searchAttributeCacheExpiry = 65 * time.Second

// listenPorts listens on the ports the caller chose (the UI's only when
// it runs), failing with a clear message if one is taken, before anything
// is started or written.
func listenPorts(cfg Config) (frontend, ui net.Listener, err error) {
	if frontend, err = net.Listen("tcp", hostPort(cfg.Host, cfg.FrontendPort)); err != nil {
		return nil, nil, fmt.Errorf("frontend port %s is in use: %w", hostPort(cfg.Host, cfg.FrontendPort), err)
	}
	if cfg.UIPort == 0 {
		return frontend, nil, nil
	}
	if cfg.UIPort == cfg.FrontendPort {
		_ = frontend.Close()
		return nil, nil, fmt.Errorf("ui port %d is in use: it is also the frontend port", cfg.UIPort)
	}
	if ui, err = net.Listen("tcp", hostPort(cfg.Host, cfg.UIPort)); err != nil {
		_ = frontend.Close()
		return nil, nil, fmt.Errorf("ui port %s is in use: %w", hostPort(cfg.Host, cfg.UIPort), err)
	}
	return frontend, ui, nil
}

// servicePorts are the ports Start picks itself: the gRPC ports of the
// services nobody outside the process talks to. The frontend's HTTP API is
// off: recur, the Web UI and the temporal CLI speak gRPC, and a port
// nobody needs is one more a job's outbound call could aim at.
type servicePorts struct {
	frontend, history, matching, worker int
}

// internalPorts picks free ports on host for the internal services. They
// come from below the kernel's ephemeral port range (freeport.Pick): an
// outgoing connection that took one between the pick and the service's
// bind would leave the Temporal server with a nil listener and a panic.
func internalPorts(host string) (servicePorts, error) {
	ports, err := freeport.Pick(host, 3)
	if err != nil {
		return servicePorts{}, err
	}
	frontend, err := freeport.Pick(loopback(host), 1)
	if err != nil {
		return servicePorts{}, err
	}
	return servicePorts{frontend: frontend[0], history: ports[0], matching: ports[1], worker: ports[2]}, nil
}

// Sync says when SQLite's commits are synced to the disk (Config.Sync).
type Sync string

const (
	SyncFull   Sync = "full"
	SyncNormal Sync = "normal"
)

// sqliteConfig is the data store config for the database file at path.
// mode=rwc opens the file read-write and creates it if missing. The
// write-ahead log (journal_mode=wal) costs one sync per commit where the
// rollback journal costs several.
//
// The pool keeps the plugin's single connection. More let reads run
// beside a write, but Temporal's transactions begin as reads and then
// write: with two writers, one fails with SQLITE_BUSY_SNAPSHOT, which no
// busy timeout waits out, and the server retries it (hundreds a minute
// at 300 jobs; the plugin cannot ask for BEGIN IMMEDIATE).
func sqliteConfig(path string, sync Sync) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: path,
		ConnectAttributes: map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"synchronous":  string(sync),
		},
	}
}

// prepareDatabase creates the schema when the file is new and inserts the
// namespace when it is missing, both straight into SQLite before the server
// starts: a namespace registered through the API only becomes usable after
// every service's namespace cache refreshes.
func prepareDatabase(sqlCfg *config.SQL, cfg Config) error {
	path := sqlCfg.DatabaseName
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := sqliteschema.SetupSchema(sqlCfg); err != nil {
			// A half-built file would be taken for a database next time.
			_ = os.Remove(path)
			return fmt.Errorf("set up schema in %s: %w", path, err)
		}
	} else if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	if err := prepareVisibility(path); err != nil {
		return fmt.Errorf("database %s: %w", path, err)
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, cfg.Namespace, false, cfg.SearchAttributes)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", cfg.Namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(cfg.Retention)
	// A no-op when the namespace exists; ensureNamespace then reconciles it.
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return fmt.Errorf("create namespace %s: %w", cfg.Namespace, err)
	}
	return nil
}

// serverOptions assembles the Temporal server: all services in this process
// on static hosts, so there is no membership ring to join.
func serverOptions(cfg Config, sqlCfg *config.SQL, ports servicePorts, dc dynamicconfig.Client, logger *slog.Logger) ([]temporal.ServerOption, error) {
	conf := serverConfig(cfg, sqlCfg, ports)
	tlog := serverLogger{log: logger}
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("create authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, tlog)
	if err != nil {
		return nil, fmt.Errorf("create claim mapper: %w", err)
	}
	local := dialHost(cfg.Host)
	return []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(hostPort(loopback(cfg.Host), ports.frontend)),
			primitives.HistoryService:  static.SingleLocalHost(hostPort(local, ports.history)),
			primitives.MatchingService: static.SingleLocalHost(hostPort(local, ports.matching)),
			primitives.WorkerService:   static.SingleLocalHost(hostPort(local, ports.worker)),
		}),
		temporal.WithLogger(tlog),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dc),
	}, nil
}

func serverConfig(cfg Config, sqlCfg *config.SQL, ports servicePorts) *config.Config {
	local := dialHost(cfg.Host)
	frontend := hostPort(loopback(cfg.Host), ports.frontend)
	conf := &config.Config{}
	conf.Global.Membership.BroadcastAddress = local
	conf.Persistence = config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  storeName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: sqlCfg}},
	}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			// No ClusterID: the server generates one on first start and keeps
			// the persisted one afterwards.
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{
		// The frontend stays on loopback behind its gate, which alone
		// listens on the configured host; the others are internal and
		// stay on loopback when that host is a wildcard.
		string(primitives.FrontendService): {RPC: config.RPC{
			GRPCPort: ports.frontend,
			BindOnIP: loopback(cfg.Host),
		}},
		string(primitives.HistoryService):  {RPC: config.RPC{GRPCPort: ports.history, BindOnIP: local}},
		string(primitives.MatchingService): {RPC: config.RPC{GRPCPort: ports.matching, BindOnIP: local}},
		string(primitives.WorkerService):   {RPC: config.RPC{GRPCPort: ports.worker, BindOnIP: local}},
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	// The worker service's own SDK client dials this.
	conf.PublicClient.HostPort = frontend
	return conf
}

// dialHost is the address to connect to a listener bound on host: a
// wildcard bind is reached over loopback.
func dialHost(host string) string {
	ip := net.ParseIP(host)
	switch {
	case ip == nil || !ip.IsUnspecified():
		return host
	case ip.To4() != nil:
		return "127.0.0.1"
	default:
		return "::1"
	}
}

// loopback is the loopback address of host's family: where the frontend
// listens behind its gate, out of reach of other machines whatever host is.
func loopback(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "::1"
	}
	return "127.0.0.1"
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
