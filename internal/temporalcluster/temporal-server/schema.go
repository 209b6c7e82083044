package main

import (
	"bytes"
	"crypto/md5" // #nosec: a checksum of the manifest, as temporal-sql-tool records it
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/resolver"
	dbschemas "go.temporal.io/server/schema"
	v12 "go.temporal.io/server/schema/postgresql/v12"
)

// setupSchemas does for both stores what temporal-sql-tool's
// create-database, setup-schema -v 0.0 and update-schema do, from the
// schemas embedded in the server module. The tool's own packages would pull
// github.com/urfave/cli into recur's go.mod for a few lines of logic.
func setupSchemas(cfg *config.Config, logger log.Logger) error {
	stores := []struct {
		name, schema, version string
	}{
		{cfg.Persistence.DefaultStore, "postgresql/v12/temporal", v12.Version},
		{cfg.Persistence.VisibilityStore, "postgresql/v12/visibility", v12.VisibilityVersion},
	}
	for _, s := range stores {
		sqlCfg := cfg.Persistence.DataStores[s.name].SQL
		if sqlCfg == nil {
			return fmt.Errorf("store %s: %w", s.name, errNoSQL)
		}
		if err := setupSchema(*sqlCfg, s.schema, s.version, logger); err != nil {
			return fmt.Errorf("store %s, database %s: %w", s.name, sqlCfg.DatabaseName, err)
		}
	}
	return nil
}

// setupSchema creates the database of sqlCfg if missing and brings its
// schema up to want, applying every versioned directory above its current
// version in order.
func setupSchema(sqlCfg config.SQL, schemaName, want string, logger log.Logger) error {
	admin := sqlCfg
	// Any database but the one to create: PostgreSQL's own always exists.
	admin.DatabaseName = "postgres"
	if err := withAdminDB(admin, logger, func(db sqlplugin.AdminDB) error {
		return db.CreateDatabase(sqlCfg.DatabaseName)
	}); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return withAdminDB(sqlCfg, logger, func(db sqlplugin.AdminDB) error {
		if err := db.CreateSchemaVersionTables(); err != nil {
			return fmt.Errorf("create schema version tables: %w", err)
		}
		current, err := db.ReadSchemaVersion(sqlCfg.DatabaseName)
		if err != nil || current == "" {
			// setup-schema -v 0.0: a database without a version is empty.
			current = "0.0"
			if err := db.UpdateSchemaVersion(sqlCfg.DatabaseName, current, current); err != nil {
				return fmt.Errorf("set schema version %s: %w", current, err)
			}
			if err := db.WriteSchemaUpdateLog("0", current, "", "initial version"); err != nil {
				return fmt.Errorf("log schema version %s: %w", current, err)
			}
		}
		final, err := applyVersions(db, sqlCfg.DatabaseName, schemaName, current)
		if err != nil {
			return err
		}
		if final != want {
			return fmt.Errorf("schema %s is at version %s after the update, the server needs %s", schemaName, final, want)
		}
		return nil
	})
}

func withAdminDB(cfg config.SQL, logger log.Logger, f func(sqlplugin.AdminDB) error) error {
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, &cfg, resolver.NewNoopResolver(), logger, metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("connect to %s/%s: %w", cfg.ConnectAddr, cfg.DatabaseName, err)
	}
	defer db.Close()
	return f(db)
}

// manifest is a versioned directory's manifest.json.
type manifest struct {
	CurrVersion          string
	MinCompatibleVersion string
	Description          string
	SchemaUpdateCqlFiles []string
}

// applyVersions runs the versioned directories of schemaName above current
// in version order, each followed by its schema version row, as
// update-schema does, and returns the version reached.
func applyVersions(db sqlplugin.AdminDB, dbName, schemaName, current string) (string, error) {
	fsys := dbschemas.Assets()
	dir := path.Join(schemaName, "versioned")
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return "", fmt.Errorf("read embedded schema %s: %w", dir, err)
	}
	from, err := parseVersion(current)
	if err != nil {
		return "", fmt.Errorf("current schema version: %w", err)
	}
	type versioned struct {
		dir     string
		version [2]int
	}
	var todo []versioned
	for _, e := range entries {
		v, err := parseVersion(strings.TrimPrefix(e.Name(), "v"))
		if err != nil || !e.IsDir() {
			return "", fmt.Errorf("embedded schema %s: unexpected entry %s", dir, e.Name())
		}
		if compareVersions(v, from) > 0 {
			todo = append(todo, versioned{path.Join(dir, e.Name()), v})
		}
	}
	slices.SortFunc(todo, func(a, b versioned) int { return compareVersions(a.version, b.version) })
	for _, v := range todo {
		m, sum, err := readManifest(fsys, v.dir)
		if err != nil {
			return "", err
		}
		for _, file := range m.SchemaUpdateCqlFiles {
			if err := execFile(db, fsys, path.Join(v.dir, file)); err != nil {
				return "", err
			}
		}
		if err := db.UpdateSchemaVersion(dbName, m.CurrVersion, m.MinCompatibleVersion); err != nil {
			return "", fmt.Errorf("set schema version %s: %w", m.CurrVersion, err)
		}
		if err := db.WriteSchemaUpdateLog(current, m.CurrVersion, sum, m.Description); err != nil {
			return "", fmt.Errorf("log schema version %s: %w", m.CurrVersion, err)
		}
		current = m.CurrVersion
	}
	return current, nil
}

func readManifest(fsys fs.FS, dir string) (manifest, string, error) {
	var m manifest
	data, err := fs.ReadFile(fsys, path.Join(dir, "manifest.json"))
	if err != nil {
		return m, "", fmt.Errorf("read manifest of %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, "", fmt.Errorf("parse manifest of %s: %w", dir, err)
	}
	if "v"+m.CurrVersion != path.Base(dir) {
		return m, "", fmt.Errorf("manifest of %s names version %s", dir, m.CurrVersion)
	}
	sum := md5.Sum(data) // #nosec
	return m, hex.EncodeToString(sum[:]), nil
}

func execFile(db sqlplugin.AdminDB, fsys fs.FS, file string) error {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	stmts, err := persistence.LoadAndSplitQueryFromReaders([]io.Reader{bytes.NewReader(data)})
	if err != nil {
		return fmt.Errorf("split %s: %w", file, err)
	}
	for _, stmt := range stmts {
		if err := db.Exec(stmt); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return nil
}

// parseVersion parses "MAJOR.MINOR", the form of every PostgreSQL schema
// version.
func parseVersion(s string) ([2]int, error) {
	major, minor, ok := strings.Cut(s, ".")
	a, errA := strconv.Atoi(major)
	b, errB := strconv.Atoi(minor)
	if !ok || errA != nil || errB != nil {
		return [2]int{}, fmt.Errorf("version %q is not MAJOR.MINOR", s)
	}
	return [2]int{a, b}, nil
}

func compareVersions(a, b [2]int) int {
	if c := a[0] - b[0]; c != 0 {
		return c
	}
	return a[1] - b[1]
}
