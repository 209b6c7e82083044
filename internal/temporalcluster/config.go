package temporalcluster

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/template"
)

// serverPorts are the ports of the Temporal server's listeners, picked once
// and kept across restarts: clients reconnect to the same frontend, and the
// membership rows the server left in the database name the same hosts.
type serverPorts struct {
	FrontendGRPC, FrontendHTTP, FrontendMembership int
	HistoryGRPC, HistoryMembership                 int
	MatchingGRPC, MatchingMembership               int
	WorkerGRPC, WorkerMembership                   int
	Metrics                                        int
}

func portsOf(p []int) serverPorts {
	return serverPorts{
		FrontendGRPC: p[0], FrontendHTTP: p[1], FrontendMembership: p[2],
		HistoryGRPC: p[3], HistoryMembership: p[4],
		MatchingGRPC: p[5], MatchingMembership: p[6],
		WorkerGRPC: p[7], WorkerMembership: p[8],
		Metrics: p[9],
	}
}

const numServerPorts = 10

// configTemplate is the server's config, shaped like Temporal's own
// config/development-postgres12.yaml and its Docker image's template: the
// services find each other through ringpop membership, as in a deployed
// cluster, rather than through the static hosts of `recur dev`. Pool sizes
// are the Docker template's defaults.
var configTemplate = template.Must(template.New("config").Parse(`log:
  stdout: true
  level: {{.LogLevel}}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: {{.HistoryShards}}
  datastores:
    postgres-default:
      sql:
        pluginName: postgres12
        databaseName: temporal
        connectAddr: "{{.Postgres}}"
        connectProtocol: tcp
        user: "{{.User}}"
        password: "{{.Password}}"
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: postgres12
        databaseName: temporal_visibility
        connectAddr: "{{.Postgres}}"
        connectProtocol: tcp
        user: "{{.User}}"
        password: "{{.Password}}"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:{{.Ports.Metrics}}"

services:
  frontend:
    rpc:
      grpcPort: {{.Ports.FrontendGRPC}}
      httpPort: {{.Ports.FrontendHTTP}}
      membershipPort: {{.Ports.FrontendMembership}}
      bindOnIP: 127.0.0.1
  history:
    rpc:
      grpcPort: {{.Ports.HistoryGRPC}}
      membershipPort: {{.Ports.HistoryMembership}}
      bindOnIP: 127.0.0.1
  matching:
    rpc:
      grpcPort: {{.Ports.MatchingGRPC}}
      membershipPort: {{.Ports.MatchingMembership}}
      bindOnIP: 127.0.0.1
  worker:
    rpc:
      grpcPort: {{.Ports.WorkerGRPC}}
      membershipPort: {{.Ports.WorkerMembership}}
      bindOnIP: 127.0.0.1

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:{{.Ports.FrontendGRPC}}"
      httpAddress: "127.0.0.1:{{.Ports.FrontendHTTP}}"

dcRedirectionPolicy:
  policy: noop

archival:
  history:
    state: disabled
  visibility:
    state: disabled

namespaceDefaults:
  archival:
    history:
      state: disabled
    visibility:
      state: disabled

publicClient:
  hostPort: "127.0.0.1:{{.Ports.FrontendGRPC}}"
{{- if .DynamicConfigFile}}

dynamicConfigClient:
  filepath: "{{.DynamicConfigFile}}"
  pollInterval: 10s
{{- end}}
`))

// configData fills configTemplate.
type configData struct {
	LogLevel          string
	HistoryShards     int
	Postgres          string
	User, Password    string
	Ports             serverPorts
	DynamicConfigFile string
}

// writeConfig writes the server's config to path, and the dynamic config,
// when there is one, to dynamicPath.
func writeConfig(path, dynamicPath string, data configData, dynamic map[string]any) error {
	if len(dynamic) > 0 {
		if err := writeDynamicConfig(dynamicPath, dynamic); err != nil {
			return err
		}
		data.DynamicConfigFile = dynamicPath
	}
	var b strings.Builder
	if err := configTemplate.Execute(&b, data); err != nil {
		return fmt.Errorf("render server config: %w", err)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeDynamicConfig writes values in the server's dynamic config file
// format, each unconstrained. JSON is YAML: it renders any value.
func writeDynamicConfig(path string, values map[string]any) error {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(values)) {
		v, err := json.Marshal(values[key])
		if err != nil {
			return fmt.Errorf("dynamic config %s: %w", key, err)
		}
		fmt.Fprintf(&b, "%s:\n  - value: %s\n    constraints: {}\n", key, v)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
