package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The bank jobs: the queue of what the banking worker matches, a job per
// statement whose transactions to match, or per file whose reading ended or
// that a person changed, written in the transaction of what queues it
// (ImportStatement, FinishAnalysis, UpdateFile, UpdateTransaction). Claims
// and releases run for every firm; a job's row names its client, which
// every later query of the job is scoped by. "Matching" is the rules'
// name (package matching), not the queue's.

// What a bank job is about.
const (
	BankJobStatement = "statement" // match the statement's new transactions
	BankJobFile      = "file"      // match the file's document
	BankJobClient    = "client"    // the client's identity changed: match all it holds again
)

// BankJob is a claimed bank job.
type BankJob struct {
	Target   string // BankJobStatement, BankJobFile or BankJobClient
	TargetID string
	ClientID string
	Attempts int
}

// MaxBankJobAttempts is how many times a job may break off before it is
// dropped.
const MaxBankJobAttempts = 3

// queueBankJob queues a job, or sets a queued one due again, in the
// caller's transaction.
func queueBankJob(ctx context.Context, tx *txn, clientID, target, id string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO bank_jobs (target, target_id, client_id, next_attempt_at, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (target, target_id) DO UPDATE SET attempts = 0, claimed_at = NULL,
		next_attempt_at = excluded.next_attempt_at`, target, id, clientID, unix(now), unix(now)); err != nil {
		return fmt.Errorf("queue bank job: %w", err)
	}
	tx.bankJobsQueued = true
	return nil
}

// BankJobsQueued is signalled after a commit that queued a bank job, so
// that the banking worker starts at once.
func (db *DB) BankJobsQueued() <-chan struct{} { return db.bankJobsQueued }

// ReleaseBankJobClaims gives back the jobs a stopped worker had claimed.
func (db *DB) ReleaseBankJobClaims(ctx context.Context) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE bank_jobs SET claimed_at = NULL WHERE claimed_at IS NOT NULL`); err != nil {
			return fmt.Errorf("release bank jobs: %w", err)
		}
		return nil
	})
}

// ClaimBankJobs claims up to n jobs that are due, the oldest first,
// counting an attempt for each; jobs that broke off MaxBankJobAttempts
// times are dropped.
func (db *DB) ClaimBankJobs(ctx context.Context, n int) ([]*BankJob, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) ([]*BankJob, error) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM bank_jobs WHERE claimed_at IS NULL AND attempts >= ?`,
			MaxBankJobAttempts); err != nil {
			return nil, fmt.Errorf("claim bank jobs: %w", err)
		}
		now := unix(db.now())
		rows, err := tx.QueryContext(ctx, `SELECT target, target_id, client_id, attempts FROM bank_jobs
			WHERE claimed_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, target, target_id LIMIT ?`, now, n)
		if err != nil {
			return nil, fmt.Errorf("claim bank jobs: %w", err)
		}
		var jobs []*BankJob
		for rows.Next() {
			var j BankJob
			if err := rows.Scan(&j.Target, &j.TargetID, &j.ClientID, &j.Attempts); err != nil {
				rows.Close()
				return nil, fmt.Errorf("claim bank jobs: %w", err)
			}
			j.Attempts++
			jobs = append(jobs, &j)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("claim bank jobs: %w", err)
		}
		for _, j := range jobs {
			if _, err := tx.ExecContext(ctx, `UPDATE bank_jobs SET claimed_at = ?, attempts = ?
				WHERE target = ? AND target_id = ?`, now, j.Attempts, j.Target, j.TargetID); err != nil {
				return nil, fmt.Errorf("claim bank jobs: %w", err)
			}
		}
		return jobs, nil
	})
}

// FinishBankJob ends the job, unless it was queued again meanwhile
// (then the newer job runs).
func (db *DB) FinishBankJob(ctx context.Context, j *BankJob) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM bank_jobs WHERE target = ? AND target_id = ? AND client_id = ?
			AND claimed_at IS NOT NULL AND attempts = ?`, j.Target, j.TargetID, j.ClientID, j.Attempts); err != nil {
			return fmt.Errorf("finish bank job: %w", err)
		}
		return nil
	})
}

// ReleaseBankJob puts the job back for another attempt at the given
// time, counted when it broke off, uncounted when a stop cut it off.
func (db *DB) ReleaseBankJob(ctx context.Context, j *BankJob, at time.Time, counted bool) error {
	attempts := j.Attempts
	if !counted {
		attempts--
	}
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE bank_jobs SET claimed_at = NULL, attempts = ?, next_attempt_at = ?
			WHERE target = ? AND target_id = ? AND client_id = ? AND claimed_at IS NOT NULL AND attempts = ?`,
			attempts, unix(at), j.Target, j.TargetID, j.ClientID, j.Attempts); err != nil {
			return fmt.Errorf("release bank jobs: %w", err)
		}
		return nil
	})
}
