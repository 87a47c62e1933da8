package db

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"reflect"
	"testing"

	"modernc.org/libc"
	lib "modernc.org/sqlite/lib"
)

// A direct read leaves its connection outside any transaction, whatever fn
// returned, so that the next read gets a fresh snapshot.
func TestDirectReadEndsTransaction(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	failed := errors.New("fn failed")
	err := d.direct.read(ctx, func(tx directTx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM settings`).Scan(&n); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("read: %v, want %v", err, failed)
	}
	c := <-d.direct.idle
	if !c.conn.AutocommitEnabled() {
		t.Error("the connection went back to the pool inside a transaction")
	}
	d.direct.idle <- c
}

func TestDirectReadNoRows(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	err := d.direct.read(ctx, func(tx directTx) error {
		var n int
		return tx.QueryRowContext(ctx, `SELECT 1 FROM settings WHERE 0`).Scan(&n)
	})
	if !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("read: %v, want sql.ErrNoRows", err)
	}
}

// A cancelled read fails with the context's error, and the connection it
// interrupted serves the next read.
func TestDirectReadCancelled(t *testing.T) {
	d := openWriterTestDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := d.direct.read(ctx, func(tx directTx) error {
		cancel()
		var n int
		return tx.QueryRowContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c)
			SELECT count(*) FROM c`).Scan(&n)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a read whose context was cancelled: got %v, want context.Canceled", err)
	}
	err = d.direct.read(context.Background(), func(tx directTx) error {
		var n int
		return tx.QueryRowContext(context.Background(), `SELECT count(*) FROM settings`).Scan(&n)
	})
	if err != nil {
		t.Fatalf("read after a cancelled one: %v", err)
	}
}

// The task list's statements are planned once per connection: using one
// again binds its parameters anew without expiring it (see directConn).
// SQLite plans a statement again on its first step, for the values first
// bound; that once is not counted.
func TestDirectStatementsPlannedOnce(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	tls := libc.NewTLS()
	defer tls.Close()
	reprepares := func() map[string]int32 {
		c := <-d.direct.idle
		defer func() { d.direct.idle <- c }()
		counts := map[string]int32{}
		for query, s := range c.stmts {
			// zombiezen.com/go/sqlite does not expose a statement's counters.
			handle := uintptr(reflect.ValueOf(s).Elem().FieldByName("stmt").Uint())
			counts[query] = lib.Xsqlite3_stmt_status(tls, handle, lib.SQLITE_STMTSTATUS_REPREPARE, 0)
		}
		return counts
	}
	lists := func() {
		for _, req := range []PageRequest{{Limit: 10, Sort: "createdAt", Desc: true}, {Limit: 10, Sort: "title"}} {
			if _, err := d.ListTasks(ctx, NewID(), TaskFilter{WorkspaceID: NewID()}, req); err != nil {
				t.Fatalf("list tasks: %v", err)
			}
		}
	}
	lists()
	first := reprepares()
	for range 3 {
		lists()
	}
	if after := reprepares(); !maps.Equal(after, first) {
		t.Errorf("statements prepared again: after the first use %v, after three more %v", first, after)
	}
}

// A direct connection's page cache is directCacheKiB (docs/decisions.md,
// Memory).
func TestDirectCacheSize(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	var kib int
	err := d.direct.read(ctx, func(tx directTx) error {
		return tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&kib)
	})
	if err != nil || kib != -directCacheKiB {
		t.Fatalf("PRAGMA cache_size: got %d, %v, want %d", kib, err, -directCacheKiB)
	}
}
