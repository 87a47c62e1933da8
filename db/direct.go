package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"zombiezen.com/go/sqlite"
)

// directReads is a pool of read-only connections to the database opened
// with zombiezen.com/go/sqlite, which runs on modernc.org/sqlite's own
// SQLite library without database/sql. The task list, the store's busiest
// read, runs on it: through database/sql every column of every row is a
// driver.Value boxed in an interface and converted into its destination,
// and modernc.org/sqlite asks each column's type before reading it, taking
// the connection's mutex (it opens every connection SQLITE_OPEN_FULLMUTEX)
// on each call. Here a column is one call into SQLite, and the connections
// have no mutex: the pool gives each to one goroutine at a time.
type directReads struct {
	path string
	// slots holds a token per connection that may be in use; idle the open
	// connections no one uses. Connections open when first needed.
	slots chan struct{}
	idle  chan *directConn
}

func newDirectReads(path string, size int) *directReads {
	return &directReads{path: path, slots: make(chan struct{}, size), idle: make(chan *directConn, size)}
}

// directConn is a connection of directReads and its prepared statements.
//
// The statements are kept here, not in zombiezen's own cache: on each reuse
// its Conn.Prepare clears the statement's bindings, and since SQLite 3.54
// clearing them expires a statement whose plan depends on a "col = ?" term
// (an ORDER BY query's), so every task list was parsed and planned again,
// a quarter of its time in SQLite. Here a statement keeps its last values
// until the next use binds all of its parameters again.
type directConn struct {
	conn  *sqlite.Conn
	stmts map[string]*sqlite.Stmt
}

// prepare returns the statement of query, prepared on its first use.
func (c *directConn) prepare(query string) (*sqlite.Stmt, error) {
	if s := c.stmts[query]; s != nil {
		return s, s.Reset()
	}
	s, err := c.conn.Prepare(query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// read runs fn in a read transaction on a connection of the pool: one
// snapshot for its queries. Cancelling ctx interrupts the running query.
func (p *directReads) read(ctx context.Context, fn func(src directTx) error) error {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.slots }()
	var c *directConn
	select {
	case c = <-p.idle:
	default:
		var err error
		if c, err = p.open(); err != nil {
			return err
		}
	}
	c.conn.SetInterrupt(ctx.Done())
	err := p.transaction(c, fn)
	c.conn.SetInterrupt(nil)
	// SQLite reports an interrupted statement, not why: name the cause, so
	// that a caller who hung up is not taken for a failing store.
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	// A connection left inside a transaction would pin an old snapshot: end
	// it, without the interrupt, or drop the connection.
	if !c.conn.AutocommitEnabled() {
		if rollbackErr := exec(c, "ROLLBACK"); rollbackErr != nil {
			c.conn.Close()
			return errors.Join(err, fmt.Errorf("end read: %w", rollbackErr))
		}
	}
	p.idle <- c
	return err
}

func (p *directReads) transaction(c *directConn, fn func(src directTx) error) error {
	if err := exec(c, "BEGIN"); err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	return fn(directTx{conn: c})
}

// open opens a connection as the read pool's are: read and write flags (a
// read-only open cannot create the WAL index when it is missing) with
// writes refused by query_only, and the same busy timeout; its page cache
// is directCacheKiB.
func (p *directReads) open() (*directConn, error) {
	conn, err := sqlite.OpenConn(FileURI(p.path), sqlite.OpenReadWrite|sqlite.OpenURI)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p.path, err)
	}
	c := &directConn{conn: conn, stmts: map[string]*sqlite.Stmt{}}
	conn.SetBusyTimeout(10 * time.Second)
	for _, pragma := range []string{fmt.Sprintf("PRAGMA cache_size = -%d", directCacheKiB), "PRAGMA query_only = 1"} {
		if err := exec(c, pragma); err != nil {
			c.conn.Close()
			return nil, fmt.Errorf("open %s: %w", p.path, err)
		}
	}
	return c, nil
}

// close waits for the connections in use, then closes them all.
func (p *directReads) close() error {
	for range cap(p.slots) {
		p.slots <- struct{}{}
	}
	var errs []error
	for {
		select {
		case c := <-p.idle:
			errs = append(errs, c.conn.Close())
		default:
			return errors.Join(errs...)
		}
	}
}

// exec runs a statement that returns no rows, from the connection's
// prepared statements.
func exec(c *directConn, query string) error {
	s, err := c.prepare(query)
	if err != nil {
		return err
	}
	_, err = s.Step()
	return errors.Join(err, s.Reset())
}

// directTx is a read transaction of directReads, with the two query methods
// paginate needs. Statements are prepared once per connection.
type directTx struct {
	conn *directConn
}

func (t directTx) QueryContext(_ context.Context, query string, args ...any) (pageRows, error) {
	s, err := t.prepare(query, args)
	if err != nil {
		return nil, err
	}
	return &directRows{stmt: s}, nil
}

func (t directTx) QueryRowContext(_ context.Context, query string, args ...any) scanner {
	s, err := t.prepare(query, args)
	return &directRow{stmt: s, err: err}
}

func (t directTx) prepare(query string, args []any) (*sqlite.Stmt, error) {
	s, err := t.conn.prepare(query)
	if err != nil {
		return nil, err
	}
	for i, arg := range args {
		switch v := arg.(type) {
		case nil:
			s.BindNull(i + 1)
		case string:
			s.BindText(i+1, v)
		case int:
			s.BindInt64(i+1, int64(v))
		case int64:
			s.BindInt64(i+1, v)
		default:
			return nil, fmt.Errorf("bind parameter %d: unsupported type %T", i+1, arg)
		}
	}
	return s, nil
}

// directRows reads the rows of a statement, as sql.Rows does.
type directRows struct {
	stmt *sqlite.Stmt
	err  error
	done bool
}

func (r *directRows) Next() bool {
	if r.done {
		return false
	}
	row, err := r.stmt.Step()
	if err != nil || !row {
		r.err, r.done = err, true
		return false
	}
	return true
}

func (r *directRows) Scan(dest ...any) error { return scanColumns(r.stmt, dest) }

func (r *directRows) Err() error { return r.err }

func (r *directRows) Close() error {
	r.done = true
	return r.stmt.Reset()
}

// directRow is a single-row query, as sql.Row is: sql.ErrNoRows when there
// is no row.
type directRow struct {
	stmt *sqlite.Stmt
	err  error
}

func (r *directRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	row, err := r.stmt.Step()
	switch {
	case err != nil:
	case !row:
		err = sql.ErrNoRows
	default:
		err = scanColumns(r.stmt, dest)
	}
	return errors.Join(err, r.stmt.Reset())
}

// scanColumns reads the current row into dest, one destination a column,
// for the destination types the store's scans use.
func scanColumns(s *sqlite.Stmt, dest []any) error {
	if len(dest) != s.ColumnCount() {
		return fmt.Errorf("scan: %d destinations for %d columns", len(dest), s.ColumnCount())
	}
	for i, d := range dest {
		switch d := d.(type) {
		case *string:
			*d = s.ColumnText(i)
		case *int:
			*d = s.ColumnInt(i)
		case *int64:
			*d = s.ColumnInt64(i)
		case *sql.NullString:
			d.Valid = s.ColumnType(i) != sqlite.TypeNull
			d.String = ""
			if d.Valid {
				d.String = s.ColumnText(i)
			}
		case *sql.NullInt64:
			d.Valid = s.ColumnType(i) != sqlite.TypeNull
			d.Int64 = s.ColumnInt64(i)
		case *any:
			switch s.ColumnType(i) {
			case sqlite.TypeInteger:
				*d = s.ColumnInt64(i)
			case sqlite.TypeText:
				*d = s.ColumnText(i)
			case sqlite.TypeNull:
				*d = nil
			default:
				return fmt.Errorf("scan column %d: unsupported type %v", i, s.ColumnType(i))
			}
		default:
			return fmt.Errorf("scan column %d: unsupported destination %T", i, d)
		}
	}
	return nil
}
