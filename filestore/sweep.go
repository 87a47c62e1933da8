package filestore

import (
	"context"
	"log/slog"
	"time"
)

// Known reports which of the ids have a database row.
type Known func(ids []string) (map[string]bool, error)

// Cleaner is a file store that removes what a crash left behind: Store
// and Bucket.
type Cleaner interface {
	Clean(known func(ids []string) (map[string]bool, error)) (int, error)
}

// Sweep removes the bytes of uploads that have no row, as the store's Clean
// does (all of them on the local disk, those older than the sweep age in a
// bucket), and logs how many went.
func Sweep(c Cleaner, known Known, logger *slog.Logger) error {
	removed, err := c.Clean(known)
	if err != nil {
		return err
	}
	if removed > 0 {
		logger.Info("removed unrecorded upload files", "count", removed)
	}
	return nil
}

// SweepEvery sweeps the bucket every interval, a minute at least, until ctx
// is done: what a crash left there was too young to go at the start. A
// local store is swept at the start only, which a single server owns.
func (b *Bucket) SweepEvery(ctx context.Context, interval time.Duration, known Known, logger *slog.Logger) {
	ticker := time.NewTicker(max(interval, time.Minute))
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if err := Sweep(b, known, logger); err != nil {
				logger.Error("sweep the bucket", "error", err)
			}
		}
	}
}
