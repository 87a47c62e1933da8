// These are the store's own maintenance operations: a consistent copy of the
// database, the records of the stored files, whether another process has a
// database open, and SQLite's integrity checks. The backup package, acctapi
// migrate and the crash test call them. Their SQL lives here, as all of
// acctapi's does.

package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// Backup writes a consistent copy of the database to dest with VACUUM INTO,
// which reads one snapshot and so works while a server writes, and syncs it.
// It runs on a connection of its own: on the writer it would hold up every
// write of a server in this process for as long as the copy takes, and the
// read pool's query_only connections refuse VACUUM INTO. Its read
// transaction takes no write lock, so writers of other processes go on too.
// dest must not exist.
func (db *DB) Backup(ctx context.Context, dest string) error {
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("backup: %s already exists", dest)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	conn, err := sql.Open("sqlite", FileURI(db.path)+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	if _, err := conn.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		return fmt.Errorf("backup to %s: %w", dest, err)
	}
	// VACUUM INTO leaves the copy to the page cache; a backup is worth
	// something only once it is on disk.
	f, err := os.Open(dest)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("backup: sync %s: %w", dest, err)
	}
	// The copy's name, too: it is a new entry in its directory.
	if err := db.dirs.Dir(filepath.Dir(dest)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// FileDigest is what the database records of a stored file's bytes.
type FileDigest struct {
	ID     string
	Size   int64
	SHA256 []byte
}

// FileDigests calls fn with the record of every stored file, in id order,
// from one snapshot: what a backup copies and a restore verifies. It stops
// at fn's first error and returns it.
func (db *DB) FileDigests(ctx context.Context, fn func(FileDigest) error) error {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, size, sha256 FROM files ORDER BY id`)
	if err != nil {
		return fmt.Errorf("file digests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var f FileDigest
		if err := rows.Scan(&f.ID, &f.Size, &f.SHA256); err != nil {
			return fmt.Errorf("file digests: %w", err)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("file digests: %w", err)
	}
	return nil
}

// InUse reports whether another connection, of this process or another,
// has the database at path open, as a running server does: it asks SQLite
// for the exclusive lock, which any other connection to a WAL database
// prevents, and lets it go at once. acctapi keeps no lock of its own on a
// data dir, so this is a check at one moment, not a guard.
func InUse(ctx context.Context, path string) (bool, error) {
	q := url.Values{}
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	conn, err := sql.Open("sqlite", FileURI(path)+"?"+q.Encode())
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	var n int
	err = conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&n)
	if sqliteCode(err) == sqlite3.SQLITE_BUSY {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	return false, nil
}

// Check runs SQLite's integrity_check and foreign_key_check and returns an
// error naming what they found, or nil for a sound database: what a restore,
// a crash test or an operator asks of a database before trusting it.
func (db *DB) Check(ctx context.Context) error {
	rows, err := db.read.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return fmt.Errorf("integrity check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	var violations int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&violations); err != nil {
		return fmt.Errorf("foreign key check: %w", err)
	}
	if violations > 0 {
		problems = append(problems, fmt.Sprintf("%d rows break a foreign key", violations))
	}
	if len(problems) > 0 {
		return fmt.Errorf("database %s is damaged: %s", db.path, strings.Join(problems, "; "))
	}
	return nil
}
