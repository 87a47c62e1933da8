package db

import (
	"context"
	"database/sql"
	"errors"
	"testing"
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
	if !c.AutocommitEnabled() {
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
