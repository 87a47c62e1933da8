package db

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/sqlite"
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// LatestVersion is the schema version the embedded migrations build.
func LatestVersion() uint {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic("embedded migrations unreadable: " + err.Error())
	}
	var latest uint
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(prefix, 10, 32)
		if err != nil {
			continue
		}
		latest = max(latest, uint(v))
	}
	return latest
}

// SchemaState describes the schema of an opened database.
type SchemaState struct {
	Version uint // 0 when no migration has run
	Dirty   bool // a migration failed half-way
	Empty   bool // no tables at all: a new database
}

// Schema reads the schema version without changing anything.
func (db *DB) Schema(ctx context.Context) (SchemaState, error) {
	var state SchemaState
	var tables int
	err := db.queryRow(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).Scan(&tables)
	if err != nil {
		return state, fmt.Errorf("read schema: %w", err)
	}
	state.Empty = tables == 0

	var hasVersions int
	err = db.queryRow(ctx,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&hasVersions)
	if err != nil {
		return state, fmt.Errorf("read schema: %w", err)
	}
	if hasVersions == 0 {
		return state, nil
	}
	var version int64
	var dirty bool
	err = db.queryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty)
	if errors.Is(err, sql.ErrNoRows) {
		return state, nil
	}
	if err != nil {
		return state, fmt.Errorf("read schema version: %w", err)
	}
	state.Version, state.Dirty = uint(version), dirty
	return state, nil
}

// CheckSchema returns an error, written for the operator, unless the database
// is exactly at the schema this binary was built for.
func (db *DB) CheckSchema(ctx context.Context) error {
	state, err := db.Schema(ctx)
	if err != nil {
		return err
	}
	latest := LatestVersion()
	switch {
	case state.Dirty:
		return fmt.Errorf("database %s: a migration to schema version %d failed half-way; restore the backup written next to it, or fix the schema by hand, then run `acctapi migrate force N` with the version it is at and `acctapi migrate`", db.path, state.Version)
	case state.Version < latest:
		return fmt.Errorf("database %s has schema version %d, older than this binary's %d: run `acctapi migrate` first", db.path, state.Version, latest)
	case state.Version > latest:
		return fmt.Errorf("database %s has schema version %d, newer than this binary's %d: run a newer acctapi, or `acctapi migrate down N` with the binary that made it", db.path, state.Version, latest)
	}
	return nil
}

// MigrateUp applies every pending migration.
func (db *DB) MigrateUp() error {
	return db.migrate(func(m *migrate.Migrate) error { return m.Up() })
}

// MigrateDown reverts the last n applied migrations.
func (db *DB) MigrateDown(n int) error {
	if n < 1 {
		return fmt.Errorf("migrate down needs a number of steps of at least 1, not %d", n)
	}
	return db.migrate(func(m *migrate.Migrate) error { return m.Steps(-n) })
}

// MigrateForce records the schema as being at version v, clean, without
// running anything: for after a failed migration was repaired by hand.
func (db *DB) MigrateForce(v int) error {
	if v < 0 {
		return fmt.Errorf("migrate force needs a version of at least 0, not %d", v)
	}
	return db.migrate(func(m *migrate.Migrate) error { return m.Force(v) })
}

// migrate runs step through golang-migrate on a connection of its own, since
// closing the migrator closes the connection it was given.
func (db *DB) migrate(step func(*migrate.Migrate) error) error {
	conn, err := sql.Open("sqlite", dsn(db.path, "FULL", false))
	if err != nil {
		return err
	}
	conn.SetMaxOpenConns(1)
	driver, err := sqlite.WithInstance(conn, &sqlite.Config{})
	if err != nil {
		conn.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	source, err := iofs.New(migrationFiles, "migrations")
	if err != nil {
		conn.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", source, "sqlite", driver)
	if err != nil {
		conn.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	err = step(m)
	srcErr, dbErr := m.Close()
	if errors.Is(err, migrate.ErrNoChange) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return errors.Join(srcErr, dbErr)
}

// Dump returns the schema the migrations built, as SQL statements in a stable
// order, without golang-migrate's own bookkeeping table. schema.sql holds it.
func (db *DB) Dump(ctx context.Context) (string, error) {
	rows, err := db.query(ctx, `
		SELECT type, name, sql FROM sqlite_schema
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
		  AND tbl_name <> 'schema_migrations'`)
	if err != nil {
		return "", fmt.Errorf("dump schema: %w", err)
	}
	defer rows.Close()
	type object struct{ kind, name, sql string }
	var objects []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.kind, &o.name, &o.sql); err != nil {
			return "", fmt.Errorf("dump schema: %w", err)
		}
		objects = append(objects, o)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("dump schema: %w", err)
	}
	// Tables, then indexes, then triggers, each by name: the order a reader
	// expects and one that does not depend on the order of CREATE statements.
	rank := map[string]int{"table": 0, "index": 1, "view": 2, "trigger": 3}
	sort.Slice(objects, func(i, j int) bool {
		if objects[i].kind != objects[j].kind {
			return rank[objects[i].kind] < rank[objects[j].kind]
		}
		return objects[i].name < objects[j].name
	})
	var b strings.Builder
	b.WriteString("-- Generated from db/migrations by `go test ./db -run TestSchemaFile -update`. Do not edit.\n")
	for _, o := range objects {
		b.WriteString("\n")
		b.WriteString(o.sql)
		b.WriteString(";\n")
	}
	return b.String(), nil
}
