// Package db is acctapi's store: SQLite through modernc.org/sqlite, with the
// schema built by embedded migrations. Every method takes a context and names
// its tenant in the query itself.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Synchronous settings the store accepts. FULL makes every acknowledged commit
// survive power loss; NORMAL survives a process crash but may lose the last
// commits on power loss (WAL mode stays consistent either way).
var Synchronous = []string{"FULL", "NORMAL", "EXTRA"}

// Options configures Open.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default), NORMAL or EXTRA.
	Synchronous string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// DB is the store. Writes go through a single connection so that concurrent
// writers queue in Go instead of failing with SQLITE_BUSY; reads use a pool of
// read-only connections that WAL lets run beside the writer.
type DB struct {
	path  string
	write *sql.DB
	read  *sql.DB
	now   func() time.Time
}

// Open opens (creating if needed) the SQLite database at path. It does not
// migrate: see MigrateUp and SchemaVersion.
func Open(path string, opts Options) (*DB, error) {
	sync := strings.ToUpper(opts.Synchronous)
	if sync == "" {
		sync = "FULL"
	}
	if !validSynchronous(sync) {
		return nil, fmt.Errorf("synchronous must be one of %s, not %q", strings.Join(Synchronous, ", "), opts.Synchronous)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}

	write, err := sql.Open("sqlite", dsn(path, sync, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	// The writer opens first: it switches a new database to WAL before any
	// read-only connection looks at it.
	if err := write.Ping(); err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}

	read, err := sql.Open("sqlite", dsn(path, sync, true))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	readers := max(4, 2*runtime.NumCPU())
	read.SetMaxOpenConns(readers)
	read.SetMaxIdleConns(readers)
	read.SetConnMaxLifetime(0)
	read.SetConnMaxIdleTime(0)
	if err := read.Ping(); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &DB{path: path, write: write, read: read, now: now}, nil
}

// dsn builds the connection string: pragmas live in it so that every pooled
// connection gets them, busy_timeout first so the others wait for locks.
func dsn(path, synchronous string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if !readOnly {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + uriPath.Replace(path) + "?" + q.Encode()
}

// uriPath escapes the characters a SQLite URI filename gives a meaning to, so
// that a data dir such as "a#b" opens a#b/acctapi.db and not a file "a".
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

func validSynchronous(s string) bool {
	for _, v := range Synchronous {
		if v == s {
			return true
		}
	}
	return false
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Close closes both connection handles, checkpointing the WAL.
func (db *DB) Close() error {
	return errors.Join(db.read.Close(), db.write.Close())
}

// Ping reports whether the database answers a read.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&one)
}

// beginWrite starts a write transaction on the writer connection. It takes
// SQLite's write lock at once (_txlock=immediate), so a transaction never has
// to be retried after it started reading.
func (db *DB) beginWrite(ctx context.Context) (*sql.Tx, error) {
	return db.write.BeginTx(ctx, nil)
}

// beginRead starts a read transaction: one consistent snapshot for the
// queries of one method.
func (db *DB) beginRead(ctx context.Context) (*sql.Tx, error) {
	return db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
}

// unix converts a time to the stored form: unix seconds, UTC.
func unix(t time.Time) int64 { return t.Unix() }

// fromUnix converts a stored timestamp back.
func fromUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }

// nullTime converts a nullable stored timestamp.
func nullTime(s sql.NullInt64) *time.Time {
	if !s.Valid {
		return nil
	}
	t := fromUnix(s.Int64)
	return &t
}

// nullString converts a nullable column to a pointer.
func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}
