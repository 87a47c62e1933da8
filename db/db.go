// Package db is acctapi's store: SQLite through modernc.org/sqlite, with the
// schema built by embedded migrations. Every method takes a context and names
// its tenant in the query itself.
package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"acctapi/durable"
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
	// EncodeEvent writes the payloads of webhook events; only a store with
	// subscriptions needs it.
	EncodeEvent EventEncoder
	// IdempotencyKey finds the idempotency key a write records in its
	// transaction; nil records none.
	IdempotencyKey IdempotencyKeyFinder
	// ObserveBatch is told of every batch the writer ran; nil tells no one.
	ObserveBatch BatchObserver
	// MailHost is the domain of the Message-IDs of queued mails (the
	// sender address's); "localhost" when empty.
	MailHost string
	// MailQuota is how many mails a firm may have mailed in an hour
	// (DefaultMailQuota when 0): a request past it is refused, a reminder
	// waits.
	MailQuota int
	// Teacher turns a person's corrections into lessons for the firm's
	// later readings; nil learns nothing.
	Teacher Teacher
}

// DefaultMailQuota is a firm's hourly mail quota when none is configured.
const DefaultMailQuota = 1000

// BatchObserver is told, by the writer goroutine after each batch, how many
// writes the batch held and how long its transaction took, commit included.
// It runs on the write path, so it must be quick and must not write.
type BatchObserver func(writes int, took time.Duration)

// DB is the store. Writes go through a single connection so that concurrent
// writers queue in Go instead of failing with SQLITE_BUSY; reads use a pool of
// read-only connections that WAL lets run beside the writer.
type DB struct {
	path  string
	dirs  durable.Syncer
	write *sql.DB
	read  *sql.DB
	now   func() time.Time
	// readStmts keeps the statements prepared on the read pool, writeStmts
	// those prepared on the write connection.
	readStmts  *stmtCache
	writeStmts *stmtCache
	// direct serves the task list (see directReads).
	direct *directReads

	// jobs feeds the writer goroutine (see update); closing stops it.
	jobs       chan *writeJob
	closing    chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
	closeErr   error

	// idempotencyPurgedAt is when expired idempotency answers were last
	// deleted, in unix seconds.
	idempotencyPurgedAt atomic.Int64

	encodeEvent   EventEncoder
	teacher       Teacher
	eventsWritten chan struct{}
	mailsQueued   chan struct{}
	mailHost      string
	mailQuota     int
	// analysesQueued wakes the analysis worker (see AnalysesQueued).
	analysesQueued chan struct{}
	// bankJobsQueued wakes the banking worker (see BankJobsQueued).
	bankJobsQueued chan struct{}
	// importLocks has the statement imports of an account run one at a
	// time (see importStatement).
	importLocks keyedLocks
	// exportsQueued wakes the export worker (see ExportsQueued).
	exportsQueued chan struct{}

	idempotencyKey IdempotencyKeyFinder

	// pendingWrites counts the writes queued for the writer or in the batch
	// it runs; observeBatch is Options.ObserveBatch.
	pendingWrites atomic.Int64
	observeBatch  BatchObserver
}

// Open opens (creating if needed) the SQLite database at path. It does not
// migrate: see MigrateUp and SchemaVersion.
func Open(path string, opts Options) (*DB, error) {
	return open(path, opts, durable.Syncer{})
}

// open opens the store with the syncer of the database's directory.
func open(path string, opts Options, dirs durable.Syncer) (*DB, error) {
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
	// SQLite syncs what it writes into the database and its -wal, but not
	// their names: a new database, and the -wal each start makes, are
	// durable only once their directory is synced.
	if err := dirs.Dir(filepath.Dir(path)); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{path: path, write: write, read: read, now: now, readStmts: &stmtCache{pool: read},
		writeStmts: &stmtCache{pool: write}, dirs: dirs,
		direct: newDirectReads(path, readers),
		jobs:   make(chan *writeJob), closing: make(chan struct{}), writerDone: make(chan struct{}),
		encodeEvent: opts.EncodeEvent, teacher: opts.Teacher, eventsWritten: make(chan struct{}, 1),
		mailsQueued: make(chan struct{}, 1), mailHost: cmp.Or(opts.MailHost, "localhost"), mailQuota: cmp.Or(opts.MailQuota, DefaultMailQuota),
		analysesQueued: make(chan struct{}, 1), bankJobsQueued: make(chan struct{}, 1),
		exportsQueued:  make(chan struct{}, 1),
		idempotencyKey: opts.IdempotencyKey, observeBatch: opts.ObserveBatch}
	go db.writeLoop()
	return db, nil
}

// Page cache sizes, in KiB of pages as SQLite's cache_size counts them.
// Every connection has a cache of its own, and modernc.org/sqlite's
// allocator rounds each cached page (4 KiB and a header) up to an 8 KiB
// block, so a cache holds about twice its size in memory. These keep the
// caches of all connections under 32 MiB together: the writer's is the
// largest because a task insert walks sixteen indexes, a dozen of them at
// a place of their own for each workspace, a working set of a thousand
// pages and more (with 2,000 KiB, reading the pages it missed took 15% of
// the writer's time under load); a direct reader's holds the 120-odd pages
// of a task list page sorted by title, and the read pool's serve lookups by
// id.
const (
	writerCacheKiB = 8000
	directCacheKiB = 1000
	readCacheKiB   = 500
)

// walAutocheckpoint is how many pages the write-ahead log holds before a
// commit copies them into the database (SQLite's default is 1,000). A task
// insert dirties a page in each of a dozen indexes spread over the client's
// workspaces, pages that later inserts dirty again: a checkpoint every
// 8,000 pages copies such a page once where eight checkpoints would copy it
// eight times, and pays the checkpoint's two fsyncs (the log's and the
// database's) an eighth as often. The log file grows to about 32 MiB and
// stays that size, reused from its start after each checkpoint.
const walAutocheckpoint = 8000

// dsn builds the connection string: pragmas live in it so that every pooled
// connection gets them, busy_timeout first so the others wait for locks.
func dsn(path, synchronous string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	if readOnly {
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", readCacheKiB))
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", writerCacheKiB))
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walAutocheckpoint))
	}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	// Statement journals (a savepoint per write of a batch) stay in memory
	// instead of a temporary file per statement.
	q.Add("_pragma", "temp_store(MEMORY)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return FileURI(path) + "?" + q.Encode()
}

// FileURI is the SQLite URI of the database file at path, for a connection
// of its own (the bulk seed's) to add its parameters to.
func FileURI(path string) string { return "file:" + uriPath.Replace(path) }

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

// Close stops the writer, after the write it is running, and closes both
// connection handles, checkpointing the WAL. Writes after Close fail with
// ErrClosed.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		close(db.closing)
		<-db.writerDone
		db.readStmts.close()
		db.writeStmts.close()
		db.closeErr = errors.Join(db.direct.close(), db.read.Close(), db.write.Close())
	})
	return db.closeErr
}

// Ping reports whether the database answers a read.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.queryRow(ctx, `SELECT 1`).Scan(&one)
}

// beginRead starts a read transaction: one consistent snapshot for the
// queries of one method.
func (db *DB) beginRead(ctx context.Context) (*txn, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return &txn{Tx: tx, shared: db.readStmts}, nil
}

// queryRow runs a single-row query on the read pool.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := db.readStmts.get(ctx, query)
	if err != nil {
		return db.read.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// query runs a query on the read pool.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := db.readStmts.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}
