package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The figures an operator watches the store by. They belong to no tenant:
// the outbox query counts every firm's deliveries, and nothing in them
// names a firm, a client or a record.

// PendingWrites returns how many writes are queued for the writer or in the
// batch it is running: under load, how far the single writer is behind.
func (db *DB) PendingWrites() int { return int(db.pendingWrites.Load()) }

// OutboxStats describes the webhook deliveries not yet made.
type OutboxStats struct {
	// Pending counts the deliveries still to be made or retried, of every
	// firm and subscription (a disabled subscription's included: they wait
	// for it to be enabled again).
	Pending int
	// OldestPending is when the oldest of them was written; zero when
	// there are none.
	OldestPending time.Time
}

// Outbox returns the state of the webhook outbox. It reads the pending
// deliveries through their partial index, so its cost grows with the
// deliveries waiting, not with those delivered.
func (db *DB) Outbox(ctx context.Context) (OutboxStats, error) {
	var stats OutboxStats
	var oldest sql.NullInt64
	if err := db.queryRow(ctx, `SELECT count(*), min(created_at) FROM webhook_deliveries
		WHERE status = 'pending'`).Scan(&stats.Pending, &oldest); err != nil {
		return OutboxStats{}, fmt.Errorf("outbox: %w", err)
	}
	if oldest.Valid {
		stats.OldestPending = fromUnix(oldest.Int64)
	}
	return stats, nil
}

// FileSizes returns the sizes in bytes of the database file and of its
// write-ahead log, which is 0 when SQLite has none at the moment.
func (db *DB) FileSizes() (database, wal int64, err error) {
	info, err := os.Stat(db.path)
	if err != nil {
		return 0, 0, fmt.Errorf("database size: %w", err)
	}
	database = info.Size()
	info, err = os.Stat(db.path + "-wal")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return database, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("WAL size: %w", err)
	}
	return database, info.Size(), nil
}
