package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// OpenExistingStore opens the database of the data dir, refusing to create
// one: a mistyped --data-dir is an error, not a new empty database. The error
// is os.ErrNotExist (errors.Is) when the database is missing.
func OpenExistingStore(cfg *Config) (*db.DB, error) {
	if _, err := os.Stat(cfg.DatabasePath()); err != nil {
		if os.IsNotExist(err) {
			return nil, &os.PathError{Op: "open database", Path: cfg.DatabasePath(),
				Err: fmt.Errorf("%w (check --data-dir, or run acctapi serve once to create it)", os.ErrNotExist)}
		}
		return nil, err
	}
	return OpenStore(cfg, nil)
}

// OpenCurrentStore opens the existing database and checks that it is at
// this binary's schema, as every command but serve and migrate needs.
func OpenCurrentStore(ctx context.Context, cfg *Config) (*db.DB, error) {
	store, err := OpenExistingStore(cfg)
	if err != nil {
		return nil, err
	}
	if err := store.CheckSchema(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// OpenSchema opens the data dir's database and reads its schema state.
// Only with create does a missing database become a new one: migrate up
// creates it, the other subcommands refuse a mistyped --data-dir.
func OpenSchema(ctx context.Context, cfg *Config, create bool) (*db.DB, db.SchemaState, error) {
	store, err := OpenExistingStore(cfg)
	if errors.Is(err, os.ErrNotExist) && create {
		store, err = OpenStore(cfg, nil)
	}
	if err != nil {
		return nil, db.SchemaState{}, err
	}
	state, err := store.Schema(ctx)
	if err != nil {
		store.Close()
		return nil, db.SchemaState{}, err
	}
	return store, state, nil
}

// ChangeSchema runs migrate, which moves the schema up or down from
// before, and returns the state after and the path of the backup it wrote.
// It refuses a dirty schema, and first backs up a database that holds data
// when backup is set.
func ChangeSchema(ctx context.Context, cfg *Config, store *db.DB, before db.SchemaState, backup bool, migrate func() error) (string, db.SchemaState, error) {
	if before.Dirty {
		return "", db.SchemaState{}, fmt.Errorf("schema version %d is dirty: a migration failed half-way; repair the schema by hand (or restore a backup), then run `acctapi migrate force N` with the version it is at", before.Version)
	}
	var path string
	if !before.Empty && backup {
		path = backupPath(cfg.DatabasePath(), before.Version, time.Now())
		if err := store.Backup(ctx, path); err != nil {
			return "", db.SchemaState{}, err
		}
	}
	if err := migrate(); err != nil {
		return path, db.SchemaState{}, err
	}
	after, err := store.Schema(ctx)
	return path, after, err
}

// backupPath names a backup after the schema version and the time, with a
// counter when a backup of the same second exists.
func backupPath(dbPath string, version uint, now time.Time) string {
	base := fmt.Sprintf("%s.backup-v%d-%s", dbPath, version, now.UTC().Format("20060102T150405Z"))
	path := base
	for i := 2; ; i++ {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return path
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
}

// SetUpFirm migrates a new database and creates the firm and the
// link-signing secret, as a first start does, without the firm's first key:
// for a database a bulk load fills.
func SetUpFirm(ctx context.Context, store *db.DB, name string) (*db.Firm, error) {
	if err := store.MigrateUp(); err != nil {
		return nil, err
	}
	firm, err := store.CreateFirm(ctx, name)
	if err != nil {
		return nil, err
	}
	return firm, store.InitLinkSigningSecret(ctx, auth.NewSecret())
}
