package db

import (
	"context"
	"database/sql"
	"sync"
)

// Preparing a statement costs more than running it for most of the store's
// queries (an INSERT into tasks compiles its sixteen indexes and triggers), so
// statements are prepared once and kept. Queries are built from fixed
// fragments only, so the set of statements is small and bounded; the one
// query whose text grows with its input (KnownFileIDs) does not use the cache.

// stmtCache holds statements prepared on a pool: the read pool, each
// statement prepared on a connection the first time it runs there, or the
// write connection, which keeps its statements from one batch to the next.
type stmtCache struct {
	pool  *sql.DB
	stmts sync.Map // query -> *sql.Stmt
	// pending marks the queries being prepared in the background.
	pending sync.Map
	// background counts those preparations: close waits for them, since one
	// still running holds a connection, and the database file, open after
	// the store has closed. closing stops new ones.
	mu         sync.Mutex
	closing    bool
	background sync.WaitGroup
}

// get returns the statement for query, preparing it now. It waits for a
// free connection: callers must not hold one.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := c.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if old, loaded := c.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return old.(*sql.Stmt), nil
	}
	return s, nil
}

// prepareLater prepares query in the background, for a caller that holds a
// connection of the pool and so cannot wait for another: on the write
// connection, the preparation waits for the batch's transaction to end.
func (c *stmtCache) prepareLater(query string) {
	if _, busy := c.pending.LoadOrStore(query, true); busy {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		c.pending.Delete(query)
		return
	}
	c.background.Add(1)
	go func() {
		defer c.background.Done()
		// Done either way: prepared, or failed and to be tried again by the
		// next transaction that runs the query.
		defer c.pending.Delete(query)
		c.get(context.Background(), query)
	}()
}

// close waits for the background preparations, then closes the statements.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.background.Wait()
	c.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
}

// txn is a transaction whose statements are prepared at most once: read
// transactions take them from the read pool's cache, write batches from the
// write connection's; a statement not cached yet is prepared in the
// transaction, kept for the rest of it, and cached for the next ones.
type txn struct {
	*sql.Tx
	shared *stmtCache
	local  map[string]*sql.Stmt
	// deliveriesDue says the transaction made webhook deliveries due (new
	// events, or a retry by hand): EventsWritten is signalled after its commit.
	deliveriesDue bool
	// mailQueued says the transaction queued mail: MailsQueued is
	// signalled after its commit.
	mailQueued bool
	// analysisQueued says the transaction queued analyses: AnalysesQueued
	// is signalled after its commit.
	analysisQueued bool
	// bankJobsQueued says the transaction queued a bank job: BankJobsQueued
	// is signalled after its commit.
	bankJobsQueued bool
	// exportQueued says the transaction queued an export: ExportsQueued is
	// signalled after its commit.
	exportQueued bool
}

func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if t.shared != nil {
		if s, ok := t.shared.stmts.Load(query); ok {
			return t.Tx.StmtContext(ctx, s.(*sql.Stmt)), nil
		}
		t.shared.prepareLater(query)
	}
	if s, ok := t.local[query]; ok {
		return s, nil
	}
	s, err := t.Tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if t.local == nil {
		t.local = map[string]*sql.Stmt{}
	}
	t.local[query] = s
	return s, nil
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := t.stmt(ctx, query)
	if err != nil {
		// The plain call fails the same way, into a Row that carries the error.
		return t.Tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}
