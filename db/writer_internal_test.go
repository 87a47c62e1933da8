package db

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func openWriterTestDB(t *testing.T) *DB {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	return d
}

func settingCount(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.queryRow(context.Background(), `SELECT count(*) FROM settings WHERE name LIKE 'w-%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// insertSetting is a write of two statements that fails after the first
// when fail is set: its savepoint must take the first back.
func insertSetting(d *DB, name string, fail bool) error {
	return d.update(context.Background(), func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES (?, x'00', 0)`, name); err != nil {
			return err
		}
		if fail {
			return fmt.Errorf("refused %s", name)
		}
		_, err := tx.ExecContext(ctx, `UPDATE settings SET updated_at = 1 WHERE name = ?`, name)
		return err
	})
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	d := openWriterTestDB(t)
	if err := insertSetting(d, "w-dup", false); err != nil {
		t.Fatal(err)
	}
	// Hold the writer busy so that the writes below queue up and run as
	// batches, then let them all go at once.
	release := make(chan struct{})
	started := make(chan struct{})
	go d.update(context.Background(), func(context.Context, *txn) error {
		close(started)
		<-release
		return nil
	})
	<-started

	const writes = 200
	errs := make([]error, writes)
	var wg sync.WaitGroup
	for i := range writes {
		wg.Go(func() { errs[i] = insertSetting(d, fmt.Sprintf("w-%03d", i), i%3 == 0) })
	}
	// A duplicate name fails in SQLite itself, inside a batch.
	wg.Go(func() {
		if err := insertSetting(d, "w-dup", false); err == nil {
			t.Errorf("duplicate insert: got nil, want a constraint error")
		}
	})
	close(release)
	wg.Wait()

	ok := 0
	for i, err := range errs {
		switch {
		case i%3 == 0 && (err == nil || err.Error() != fmt.Sprintf("refused w-%03d", i)):
			t.Errorf("write %d: got %v, want its own error", i, err)
		case i%3 != 0 && err != nil:
			t.Errorf("write %d: got %v, want nil", i, err)
		case err == nil:
			ok++
		}
	}
	if n := settingCount(t, d); n != ok+1 {
		t.Errorf("%d rows stored, want w-dup and the %d writes that succeeded", n, ok)
	}
	var partial int
	if err := d.queryRow(context.Background(), `SELECT count(*) FROM settings WHERE name LIKE 'w-%' AND updated_at = 0`).Scan(&partial); err != nil || partial != 0 {
		t.Errorf("%d half-done writes stored (%v), want none", partial, err)
	}
}

func TestGroupCommitPanicReachesItsCaller(t *testing.T) {
	d := openWriterTestDB(t)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the write's own panic", p)
			}
		}()
		d.update(context.Background(), func(ctx context.Context, tx *txn) error {
			tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ('w-panic', x'00', 0)`)
			panic("boom")
		})
	}()
	// The writer goes on, and the panicking write left nothing.
	if err := insertSetting(d, "w-after", false); err != nil {
		t.Fatalf("write after a panic: %v", err)
	}
	if n := settingCount(t, d); n != 1 {
		t.Errorf("%d rows, want only the write after the panic", n)
	}
}

func TestGroupCommitCancelledBeforeRunning(t *testing.T) {
	d := openWriterTestDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := d.update(ctx, func(context.Context, *txn) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Errorf("cancelled write: got %v, ran %v; want context.Canceled, not run", err, ran)
	}
}

func TestWriteAfterClose(t *testing.T) {
	d := openWriterTestDB(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := insertSetting(d, "w-closed", false); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: got %v, want ErrClosed", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCollectWaitsForTheLastBatchsWriters: the writer waits, up to its
// bound, for as many writes as the last batch answered or left waiting, and
// not at all when it has them.
func TestCollectWaitsForTheLastBatchsWriters(t *testing.T) {
	d := &DB{jobs: make(chan *writeJob)}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	first := []*writeJob{{}}
	send := func(after time.Duration) {
		go func() {
			time.Sleep(after)
			d.jobs <- &writeJob{}
		}()
	}

	send(5 * time.Millisecond)
	send(10 * time.Millisecond)
	start := time.Now()
	batch := d.collect(first, 3, time.Minute, timer)
	if len(batch) != 3 || time.Since(start) > 30*time.Second {
		t.Errorf("expecting 3 writes, two coming: got %d after %s, want all 3 without waiting out the bound", len(batch), time.Since(start))
	}

	start = time.Now()
	batch = d.collect(first[:1:1], 3, 20*time.Millisecond, timer)
	if len(batch) != 1 || time.Since(start) < 20*time.Millisecond {
		t.Errorf("expecting 3 writes, none coming: got %d after %s, want 1 after the 20ms bound", len(batch), time.Since(start))
	}

	start = time.Now()
	batch = d.collect(first[:1:1], 1, time.Minute, timer)
	if len(batch) != 1 || time.Since(start) > 30*time.Second {
		t.Errorf("expecting 1 write: got %d after %s, want it at once", len(batch), time.Since(start))
	}
}
