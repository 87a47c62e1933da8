package db

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestWriterFigures(t *testing.T) {
	var mu sync.Mutex
	var batches []int
	d, err := Open(t.TempDir()+"/w.db", Options{ObserveBatch: func(writes int, took time.Duration) {
		if took <= 0 {
			t.Errorf("a batch of %d writes took %v, want a positive time", writes, took)
		}
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, writes)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	batches = nil
	mu.Unlock()
	if got := d.PendingWrites(); got != 0 {
		t.Fatalf("PendingWrites of an idle store: got %d, want 0", got)
	}

	// Hold the writer busy: the writes sent meanwhile wait, and then run
	// together in one batch.
	release, started := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		d.update(context.Background(), func(context.Context, *txn) error {
			close(started)
			<-release
			return nil
		})
	})
	<-started
	const waiting = 20
	for i := range waiting {
		wg.Go(func() {
			if err := insertSetting(d, fmt.Sprintf("w-%02d", i), false); err != nil {
				t.Error(err)
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.PendingWrites() != waiting+1 {
		if time.Now().After(deadline) {
			t.Fatalf("PendingWrites: got %d, want %d (the running write and those waiting)", d.PendingWrites(), waiting+1)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if got := d.PendingWrites(); got != 0 {
		t.Errorf("PendingWrites after every write was answered: got %d, want 0", got)
	}
	mu.Lock()
	defer mu.Unlock()
	// The held write is a batch of its own; the waiting ones share
	// batches (all of them one, unless one was scheduled late).
	total := 0
	for _, n := range batches {
		total += n
	}
	if len(batches) < 2 || batches[0] != 1 || total != waiting+1 || len(batches) > waiting/2 {
		t.Errorf("batches observed: got %v, want [1 %d] or the %d waiting writes in a few batches", batches, waiting, waiting)
	}
}
