// Command temporal-server is the Temporal server that temporalcluster runs
// as a process of its own for tests: the server packages of the version
// recur's go.mod requires, with the PostgreSQL plugin, started from a
// config file the way Temporal's own `temporal-server start` is.
//
//	temporal-server -config FILE setup-schema   # create both databases and apply the schemas
//	temporal-server -config FILE start          # serve until SIGINT or SIGTERM
//
// It is built by temporalcluster, not installed: nothing imports it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // registers postgres12
	"go.temporal.io/server/temporal"
)

func main() {
	configFile := flag.String("config", "", "the server's YAML config `file`")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s -config FILE setup-schema|start\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if *configFile == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	cfg, err := config.Load(config.WithConfigFile(*configFile))
	if err != nil {
		fmt.Fprintf(os.Stderr, "load config %s: %v\n", *configFile, err)
		os.Exit(1)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	switch flag.Arg(0) {
	case "setup-schema":
		err = setupSchemas(cfg, logger)
	case "start":
		err = start(cfg, logger)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		logger.Error("temporal-server "+flag.Arg(0)+" failed", tag.Error(err))
		fmt.Fprintf(os.Stderr, "temporal-server %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
}

// start runs all four services in this process, as `temporal-server start`
// does, until SIGINT or SIGTERM: then they stop gracefully.
func start(cfg *config.Config, logger log.Logger) error {
	authorizer, err := authorization.GetAuthorizerFromConfig(&cfg.Global.Authorization)
	if err != nil {
		return fmt.Errorf("create authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&cfg.Global.Authorization, logger)
	if err != nil {
		return fmt.Errorf("create claim mapper: %w", err)
	}
	s, err := temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithConfig(cfg),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
	)
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	// With InterruptOn, Start returns once a signal has stopped the services.
	if err := s.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	return nil
}

// errNoSQL is returned for a config whose stores are not SQL.
var errNoSQL = errors.New("not an SQL store")
