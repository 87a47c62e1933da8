package db

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestBackupBesideABusyWriter checks that Backup does not queue behind the
// writer: a write held open must neither stop the copy nor be in it.
func TestBackupBesideABusyWriter(t *testing.T) {
	d := openWriterTestDB(t)
	if err := insertSetting(d, "w-before", false); err != nil {
		t.Fatal(err)
	}
	release, started, held := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		held <- d.update(context.Background(), func(ctx context.Context, tx *txn) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ('w-held', x'00', 0)`); err != nil {
				return err
			}
			close(started)
			<-release
			return nil
		})
	}()
	<-started

	// Bounded, so that a Backup waiting for the writer fails instead of
	// hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dest := filepath.Join(t.TempDir(), "copy.db")
	err := d.Backup(ctx, dest)
	close(release)
	if err != nil {
		t.Fatalf("Backup while a write is open: got %v, want nil", err)
	}
	if err := <-held; err != nil {
		t.Fatalf("the held write: %v", err)
	}
	copied, err := Open(dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	if got := settingCount(t, copied); got != 1 {
		t.Errorf("the copy holds %d of the test settings, want 1: the committed one, not the open write's", got)
	}
	if got := settingCount(t, d); got != 2 {
		t.Errorf("the store holds %d of the test settings after the held write, want 2", got)
	}
}
