package db

import (
	"context"
	"database/sql"
	"time"

	"acctapi/durable"
)

// OpenCounting opens the store with sync called for every directory it
// syncs, so that tests see which entries are made durable.
func OpenCounting(path string, opts Options, sync func(dir string) error) (*DB, error) {
	return open(path, opts, durable.Syncer{Sync: sync})
}

// NewIDAt exposes newIDAt so that tests can make ids at chosen times.
var NewIDAt = newIDAt

// Handles exposes the store's writer and reader pools, so that tests can read
// the pragmas each connection was opened with.
func (db *DB) Handles() (write, read *sql.DB) { return db.write, db.read }

// The store has no methods for workspaces, folders and files yet: tests
// insert them on the writer, timestamped by the store's clock.

// InsertTestWorkspace inserts a workspace of the client and returns its id.
func (db *DB) InsertTestWorkspace(ctx context.Context, clientID, name string) (string, error) {
	id, now := NewID(), unix(db.now().UTC().Truncate(time.Second))
	_, err := db.write.ExecContext(ctx, `INSERT INTO workspaces (id, client_id, name, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)`, id, clientID, name, now, now)
	return id, err
}

// InsertTestFolder inserts a top-level folder of the workspace and returns its id.
func (db *DB) InsertTestFolder(ctx context.Context, clientID, workspaceID, name string) (string, error) {
	id, now := NewID(), unix(db.now().UTC().Truncate(time.Second))
	_, err := db.write.ExecContext(ctx, `INSERT INTO folders (id, client_id, workspace_id, name, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, id, clientID, workspaceID, name, now, now)
	return id, err
}

// InsertTestFile inserts the record of a file of the workspace, linked to
// taskID when it is not nil, and returns its id.
func (db *DB) InsertTestFile(ctx context.Context, clientID, workspaceID string, taskID *string, name string) (string, error) {
	id, now := NewID(), unix(db.now().UTC().Truncate(time.Second))
	_, err := db.write.ExecContext(ctx, `INSERT INTO files (id, client_id, workspace_id, task_id, name, mimetype,
		size, sha256, document_date, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'application/pdf', 0, x'', ?, ?, ?)`, id, clientID, workspaceID, taskID, name, now, now, now)
	return id, err
}
