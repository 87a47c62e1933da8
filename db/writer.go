package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrClosed is returned by writes to a closed store.
var ErrClosed = errors.New("the store is closed")

// maxBatch bounds how many writes share one transaction.
const maxBatch = 128

// maxLinger bounds how long the writer waits for the writers of its last
// batch to be back before it starts the next one.
const maxLinger = 5 * time.Millisecond

// writeJob is the work of one write transaction, queued for the writer.
type writeJob struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *txn) error
	err  error
	done chan struct{}
	// panicked holds what fn panicked with, to panic again in the caller.
	panicked any
}

// update runs fn in a write transaction: its writes commit together and
// only when fn returns nil. The writer runs the writes queued at the same
// time, and those it waits a moment for (see collect), in one transaction
// (group commit), each in a savepoint of its own,
// so that under load one commit, and with synchronous=FULL one fsync, serves
// many writes, and pages they share (the end of an index, a counter) are
// written once. A failed write rolls back its savepoint only; a failed
// commit fails every write of the batch. Once fn has started it runs to its
// end even if ctx is cancelled: an interrupted statement would roll back the
// whole batch.
func (db *DB) update(ctx context.Context, fn func(ctx context.Context, tx *txn) error) error {
	job := &writeJob{ctx: ctx, fn: fn, done: make(chan struct{})}
	db.pendingWrites.Add(1)
	defer db.pendingWrites.Add(-1)
	select {
	case db.jobs <- job:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.closing:
		return ErrClosed
	}
	<-job.done
	if job.panicked != nil {
		panic(job.panicked)
	}
	return job.err
}

// write is update for a transaction with a result.
func write[T any](ctx context.Context, db *DB, fn func(ctx context.Context, tx *txn) (T, error)) (T, error) {
	var result T
	err := db.update(ctx, func(ctx context.Context, tx *txn) error {
		var err error
		result, err = fn(ctx, tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return result, nil
}

// writeLoop is the writer: it takes the queued writes, up to maxBatch, runs
// them as one transaction and answers them. When the store closes it answers
// the writes already waiting, then stops.
func (db *DB) writeLoop() {
	defer close(db.writerDone)
	batch := make([]*writeJob, 0, maxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	// expect is how many writes the last batch answered or left waiting:
	// the writers that, under a steady load, are back for the next one.
	// commit is how long the last batch's commit took.
	var expect int
	var commit time.Duration
	for {
		select {
		case job := <-db.jobs:
			batch = append(batch[:0], job)
		case <-db.closing:
			return
		}
		batch = db.collect(batch, expect, min(commit/4, maxLinger), linger)
		start := time.Now()
		commit = db.runBatch(batch)
		expect = int(db.pendingWrites.Load())
		if db.observeBatch != nil {
			db.observeBatch(len(batch), time.Since(start))
		}
		for _, job := range batch {
			close(job.done)
		}
		clear(batch)
	}
}

// collect adds to batch the writes waiting now, up to maxBatch, and when
// that makes fewer than expect, waits up to wait for more, on timer.
//
// The wait is for the writers of the last batch: answered, they send their
// next write a moment later, and a batch started without them would commit
// while they queue behind it. Under a steady load the writers would split
// into two groups taking turns, each batch with half of them, and so twice
// the commits, each with its fsync under FULL, that one batch of all of
// them makes. The caller bounds the wait by a quarter of a commit, so that
// writers that do not come back cost little beside the commit it may save.
func (db *DB) collect(batch []*writeJob, expect int, wait time.Duration, timer *time.Timer) []*writeJob {
take:
	for len(batch) < maxBatch {
		select {
		case job := <-db.jobs:
			batch = append(batch, job)
		default:
			break take
		}
	}
	want := min(expect, maxBatch)
	if len(batch) >= want || wait <= 0 {
		return batch
	}
	timer.Reset(wait)
	defer timer.Stop()
	for len(batch) < want {
		select {
		case job := <-db.jobs:
			batch = append(batch, job)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

// runBatch runs the jobs in one transaction and sets each one's outcome. It
// returns how long the commit took, 0 when there was none.
func (db *DB) runBatch(batch []*writeJob) (commit time.Duration) {
	tx, err := db.write.BeginTx(context.Background(), nil)
	if err != nil {
		for _, job := range batch {
			job.err = err
		}
		return
	}
	t := &txn{Tx: tx, shared: db.writeStmts}
	single := len(batch) == 1
	for _, job := range batch {
		if job.err = job.ctx.Err(); job.err != nil {
			continue
		}
		if !single {
			if _, err := t.ExecContext(context.Background(), `SAVEPOINT job`); err != nil {
				failBatch(tx, batch, err)
				return
			}
		}
		job.err = db.runJob(t, job)
		if single {
			break
		}
		var err error
		if job.err == nil {
			_, err = t.ExecContext(context.Background(), `RELEASE job`)
		} else {
			_, err = tx.Exec(`ROLLBACK TO job; RELEASE job`)
		}
		if err != nil {
			// SQLite rolled the whole transaction back (an I/O error, a
			// full disk): the writes before this one are gone too.
			failBatch(tx, batch, fmt.Errorf("write batch: %w", err))
			return
		}
	}
	if single && batch[0].err != nil {
		tx.Rollback()
		return
	}
	start := time.Now()
	if err := tx.Commit(); err != nil {
		failBatch(tx, batch, fmt.Errorf("commit: %w", err))
		return
	}
	commit = time.Since(start)
	if t.deliveriesDue {
		select {
		case db.eventsWritten <- struct{}{}:
		default:
		}
	}
	if t.mailQueued {
		select {
		case db.mailsQueued <- struct{}{}:
		default:
		}
	}
	if t.analysisQueued {
		select {
		case db.analysesQueued <- struct{}{}:
		default:
		}
	}
	if t.bankJobsQueued {
		select {
		case db.bankJobsQueued <- struct{}{}:
		default:
		}
	}
	if t.exportQueued {
		select {
		case db.exportsQueued <- struct{}{}:
		default:
		}
	}
	return commit
}

// runJob runs one job's function, and records the idempotency key of its
// request in the same transaction; it turns a panic into an error for the
// batch and keeps the value for the job's caller.
func (db *DB) runJob(tx *txn, job *writeJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			job.panicked = p
			err = fmt.Errorf("panic in a write: %v", p)
		}
	}()
	ctx := context.WithoutCancel(job.ctx)
	if err := job.fn(ctx, tx); err != nil {
		return err
	}
	return db.recordIdempotencyKey(ctx, tx)
}

// failBatch rolls the transaction back and gives err to every job that has
// no error of its own.
func failBatch(tx *sql.Tx, batch []*writeJob, err error) {
	tx.Rollback()
	for _, job := range batch {
		if job.err == nil && job.panicked == nil {
			job.err = err
		}
	}
}
