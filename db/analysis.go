package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The analysis queue: a job per file to read, written in the transaction of
// the file's row (queueNewFile), claimed by the worker, and deleted in the
// transaction that records what the reading found. These queries run for
// every firm: the worker serves the whole store.

// The lanes of the analysis queue. Every job starts in LaneFast, whose
// reads are cheap and bounded (XML, text, a PDF's text layer); a document
// that needs OCR is handed to LaneOCR, so that cheap documents never wait
// behind photos.
const (
	LaneFast = "fast"
	LaneOCR  = "ocr"
)

// nextTurn is the turn of a job the client (the first parameter) queues in
// a lane (the second): one past the client's last job in the lane, and not
// before the lane's turn, the turn of the job last claimed there. Taking
// the jobs in turn order lets clients take turns.
const nextTurn = `max(coalesce((SELECT max(turn) FROM analysis_jobs WHERE client_id = ?1 AND lane = ?2) + 1, 0),
	(SELECT turn FROM analysis_lanes WHERE lane = ?2))`

// AnalysisJob is a file claimed for reading.
type AnalysisJob struct {
	FileID   string
	ClientID string
	// Lane is the lane the job was claimed in.
	Lane     string
	Name     string
	MimeType string
	Size     int64
	// Attempts counts the readings of the file begun and not ended, this
	// one included: more than MaxAnalysisAttempts means the file broke the
	// reader (a crash, a panic) that many times.
	Attempts int
	// Retries counts the times the file's bytes could not be fetched.
	Retries int
}

// MaxAnalysisAttempts is how many readings of a file may break off before
// the file ends failed.
const MaxAnalysisAttempts = 2

// ReleaseAnalysisClaims gives back the jobs a stopped worker had claimed,
// keeping their attempts: a reading a crash cut off counts as one.
func (db *DB) ReleaseAnalysisClaims(ctx context.Context) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE analysis_jobs SET claimed_at = NULL WHERE claimed_at IS NOT NULL`)
		if err != nil {
			return fmt.Errorf("release analyses: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			tx.analysisQueued = true
		}
		return nil
	})
}

// ClaimAnalyses claims up to n jobs of the lane that are due, in turn
// order (a client's oldest first, clients taking turns), and counts an
// attempt for each.
func (db *DB) ClaimAnalyses(ctx context.Context, lane string, n int) ([]*AnalysisJob, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) ([]*AnalysisJob, error) {
		now := unix(db.now())
		rows, err := tx.QueryContext(ctx, claimAnalyses, lane, now, n)
		if err != nil {
			return nil, fmt.Errorf("claim analyses: %w", err)
		}
		var jobs []*AnalysisJob
		var turn int64
		for rows.Next() {
			j := AnalysisJob{Lane: lane}
			if err := rows.Scan(&j.FileID, &j.ClientID, &j.Name, &j.MimeType, &j.Size, &j.Attempts, &j.Retries, &turn); err != nil {
				rows.Close()
				return nil, fmt.Errorf("claim analyses: %w", err)
			}
			j.Attempts++
			jobs = append(jobs, &j)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("claim analyses: %w", err)
		}
		rows.Close()
		for _, j := range jobs {
			if _, err := tx.ExecContext(ctx, `UPDATE analysis_jobs SET claimed_at = ?, attempts = ? WHERE file_id = ?`,
				now, j.Attempts, j.FileID); err != nil {
				return nil, fmt.Errorf("claim analyses: %w", err)
			}
		}
		if len(jobs) > 0 {
			// The rows come in turn order: the last has the highest.
			if _, err := tx.ExecContext(ctx, `UPDATE analysis_lanes SET turn = max(turn, ?) WHERE lane = ?`, turn, lane); err != nil {
				return nil, fmt.Errorf("claim analyses: %w", err)
			}
		}
		return jobs, nil
	})
}

// claimAnalyses selects the due jobs of a lane in turn order; a retry that
// is not due yet is passed over and keeps its turn.
const claimAnalyses = `SELECT j.file_id, j.client_id, f.name, f.mimetype, f.size, j.attempts, j.retries, j.turn
	FROM analysis_jobs j JOIN files f ON f.id = j.file_id AND f.client_id = j.client_id
	WHERE j.lane = ? AND j.claimed_at IS NULL AND j.next_attempt_at <= ?
	ORDER BY j.turn, j.next_attempt_at, j.file_id LIMIT ?`

// HandOffAnalysis moves a claimed job to another lane, unclaimed and due as
// it was, with its turn there: the fast lane found that the file needs OCR.
// The attempt is not counted, as the reading did not break. Nothing is
// written when the job was queued again or ended meanwhile.
func (db *DB) HandOffAnalysis(ctx context.Context, j *AnalysisJob, lane string) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error { return handOff(ctx, tx, j, lane) })
}

// handOff moves the claimed job to the lane's end, uncounted, unless it was
// queued again or ended meanwhile.
func handOff(ctx context.Context, tx *txn, j *AnalysisJob, lane string) error {
	res, err := tx.ExecContext(ctx, `UPDATE analysis_jobs SET claimed_at = NULL, attempts = attempts - 1, lane = ?2,
		turn = `+nextTurn+` WHERE file_id = ?3 AND client_id = ?1 AND claimed_at IS NOT NULL AND attempts = ?4 AND retries = ?5`,
		j.ClientID, lane, j.FileID, j.Attempts, j.Retries)
	if err != nil {
		return fmt.Errorf("hand off analysis: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		tx.analysisQueued = true
	}
	return nil
}

// stillClaimed says that the job is as its worker claimed it: not queued
// again by a person meanwhile (which resets it) nor ended.
func stillClaimed(ctx context.Context, tx *txn, j *AnalysisJob) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM analysis_jobs WHERE file_id = ? AND client_id = ?
		AND claimed_at IS NOT NULL AND attempts = ? AND retries = ?`, j.FileID, j.ClientID, j.Attempts, j.Retries).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find analysis job: %w", err)
	}
	return true, nil
}

// AnalysisResult is what reading a file found.
type AnalysisResult struct {
	Status   string // AnalysisDone, AnalysisFailed or AnalysisSkipped
	Source   *string
	Reason   *string
	Language *string
	Kind     *string
	Fields   *DocumentFields
	// Confidence holds, for the fields with a value, how likely each is
	// right, in [0, 1].
	Confidence map[string]float64
	// Warnings say what the document states that cannot be right.
	Warnings []string
	// Text is what the search reads; nil keeps none.
	Text *FileText
	// Statement is the bank statement the file is, imported with the
	// result unless one was imported from the file before; nil for any
	// other file.
	Statement *StatementImport
}

// FinishAnalysis records what reading the job's file found, ends the job
// and emits file.analyzed, in one transaction. The kind, the document date
// and the fields change only where no person set them. A file read to the
// end is queued for matching, and its statement, if any, is imported after
// it (see ImportStatementFile) when none was imported from the file before. ok is
// false, and nothing is written, when the job was queued again or ended
// meanwhile: the newer job reads the file again.
func (db *DB) FinishAnalysis(ctx context.Context, j *AnalysisJob, r AnalysisResult) (f *File, ok bool, err error) {
	return db.recordAnalysis(ctx, j, r, "")
}

// RecordFirstReading records a reading made without OCR of a file that has
// pages only OCR reads (a PDF with a text layer and scanned pages), as
// FinishAnalysis does, and hands the job to lane, which reads the whole file
// again and records it once more: the text layer's values are there at once,
// not after the client's photos, and OCR refines them. Both readings emit
// file.analyzed. ok is as FinishAnalysis says.
func (db *DB) RecordFirstReading(ctx context.Context, j *AnalysisJob, r AnalysisResult, lane string) (f *File, ok bool, err error) {
	return db.recordAnalysis(ctx, j, r, lane)
}

// recordAnalysis records a reading, and ends the job or, with a lane, hands
// it to that lane to be read again.
func (db *DB) recordAnalysis(ctx context.Context, j *AnalysisJob, r AnalysisResult, lane string) (f *File, ok bool, err error) {
	err = db.update(ctx, func(ctx context.Context, tx *txn) error {
		if ok, err = stillClaimed(ctx, tx, j); err != nil || !ok {
			return err
		}
		if f, err = findFileTx(ctx, tx, j.ClientID, j.FileID); err != nil {
			return err
		}
		if lane != "" {
			if err := handOff(ctx, tx, j, lane); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `DELETE FROM analysis_jobs WHERE file_id = ?`, j.FileID); err != nil {
			return fmt.Errorf("end analysis: %w", err)
		}
		now := db.now().UTC().Truncate(time.Second)
		read := readState{fields: r.Fields, confidence: r.Confidence, user: f.Analysis.read.user}
		if r.Status == AnalysisDone && read.fields == nil {
			read.fields = &DocumentFields{}
		}
		warnings := r.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		f.Analysis = Analysis{Status: r.Status, Source: r.Source, Reason: r.Reason, Language: r.Language,
			AnalyzedAt: &now, Kind: r.Kind, Warnings: warnings, read: read}
		f.Analysis.show()
		if f.KindSource == nil || *f.KindSource != SourceUser {
			f.Kind, f.KindSource = r.Kind, nil
			if r.Kind != nil {
				f.KindSource = ptr(SourceAnalysis)
			}
		}
		if !f.dateSetByPerson() {
			f.followIssueDate()
		}
		f.UpdatedAt = now
		var encoded [3]*string
		for i, v := range []any{read.fields, read.confidence, r.Warnings} {
			if encoded[i], err = encodeJSON(v); err != nil {
				return fmt.Errorf("end analysis: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE files SET analysis_status = ?, analysis_source = ?, analysis_reason = ?,
			analysis_language = ?, analyzed_at = ?, analysis_fields = ?, analysis_confidence = ?, analysis_warnings = ?,
			analysis_kind = ?, kind = ?, kind_source = ?, document_date = ?, document_date_source = ?, updated_at = ?
			WHERE client_id = ? AND id = ?`,
			r.Status, r.Source, r.Reason, r.Language, unix(now), encoded[0], encoded[1], encoded[2], r.Kind, f.Kind,
			f.KindSource, unix(f.DocumentDate), f.DocumentDateSource, unix(now), j.ClientID, j.FileID); err != nil {
			return fmt.Errorf("end analysis: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM file_texts WHERE client_id = ? AND file_id = ?`, j.ClientID, j.FileID); err != nil {
			return fmt.Errorf("end analysis: %w", err)
		}
		if t := r.Text; t != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_texts (file_id, client_id, source, pages, text) VALUES (?, ?, ?, ?, ?)`,
				j.FileID, j.ClientID, t.Source, t.Pages, t.Text); err != nil {
				return fmt.Errorf("end analysis: %w", err)
			}
		}
		if err := reindexFile(ctx, tx, j.ClientID, j.FileID); err != nil {
			return err
		}
		if err := db.emit(ctx, tx, event{typ: EventFileAnalyzed, clientID: &j.ClientID, record: f}); err != nil {
			return err
		}
		if r.Status != AnalysisDone {
			return nil
		}
		return queueBankJob(ctx, tx, j.ClientID, BankJobFile, j.FileID, now)
	})
	if err != nil || !ok || r.Status != AnalysisDone || r.Statement == nil {
		return f, ok, err
	}
	// The statement is imported after the reading, in the import's own
	// writes (a large one in many): a file imported before, gone, or
	// refused (its currency or entries disagree with its account's) stays
	// an ordinary file.
	_, err = db.ImportStatementFile(ctx, j.ClientID, j.FileID, *r.Statement)
	if code := ErrorCode(err); code == ECONFLICT || code == ENOTFOUND || code == EINVALID {
		err = nil
	}
	return f, ok, err
}

// DeferAnalysis puts the job back for a later attempt at the given time,
// after its file's bytes could not be fetched: the attempt did not reach
// the reader, so it counts as a retry instead.
func (db *DB) DeferAnalysis(ctx context.Context, j *AnalysisJob, at time.Time) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE analysis_jobs SET claimed_at = NULL, attempts = attempts - 1,
			retries = retries + 1, next_attempt_at = ? WHERE file_id = ? AND client_id = ? AND claimed_at IS NOT NULL
			AND attempts = ? AND retries = ?`, unix(at), j.FileID, j.ClientID, j.Attempts, j.Retries)
		if err != nil {
			return fmt.Errorf("defer analysis: %w", err)
		}
		return nil
	})
}

// ReleaseAnalysis puts the job back for another attempt at the given time:
// counted when the reading broke off (a panic in a reader), uncounted when
// it was cut off by a stop.
func (db *DB) ReleaseAnalysis(ctx context.Context, j *AnalysisJob, at time.Time, counted bool) error {
	attempts := j.Attempts
	if !counted {
		attempts--
	}
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE analysis_jobs SET claimed_at = NULL, attempts = ?, next_attempt_at = ?
			WHERE file_id = ? AND client_id = ? AND claimed_at IS NOT NULL AND attempts = ? AND retries = ?`,
			attempts, unix(at), j.FileID, j.ClientID, j.Attempts, j.Retries)
		if err != nil {
			return fmt.Errorf("release analysis: %w", err)
		}
		return nil
	})
}

// requeue is the upsert that queues a file's analysis afresh: a job being
// read is reset, so that its reading is not recorded and the file is read
// again.
const requeue = `ON CONFLICT (file_id) DO UPDATE SET attempts = 0, retries = 0, claimed_at = NULL,
	next_attempt_at = excluded.next_attempt_at, lane = excluded.lane, turn = excluded.turn`

// QueueAnalysis queues the client's file to be read again; it shows as
// pending, with what the last reading found, until the new one ends.
// Returns ENOTFOUND.
func (db *DB) QueueAnalysis(ctx context.Context, clientID, id string) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
		f, err := findFileTx(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		now := unix(db.now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO analysis_jobs (file_id, client_id, lane, turn, next_attempt_at, created_at)
			VALUES (?3, ?1, ?2, `+nextTurn+`, ?4, ?4) `+requeue, clientID, LaneFast, id, now); err != nil {
			return nil, fmt.Errorf("queue analysis: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE files SET analysis_status = 'pending', analysis_reason = NULL
			WHERE client_id = ? AND id = ?`, clientID, id); err != nil {
			return nil, fmt.Errorf("queue analysis: %w", err)
		}
		f.Analysis.Status, f.Analysis.Reason = AnalysisPending, nil
		tx.analysisQueued = true
		return f, nil
	})
}

// QueueAnalyses queues every file of every firm whose analysis ended in
// one of statuses to be read again, and returns how many it queued.
func (db *DB) QueueAnalyses(ctx context.Context, statuses []string) (int, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (int, error) {
		args := make([]any, 0, len(statuses)+3)
		now := unix(db.now())
		args = append(args, LaneFast, now, now)
		for _, s := range statuses {
			args = append(args, s)
		}
		in := placeholders(len(statuses))
		// Each client's files take their turns from the lane's, oldest
		// first, so that a firm's thousand files do not go before another
		// client's next upload.
		if _, err := tx.ExecContext(ctx, `INSERT INTO analysis_jobs (file_id, client_id, lane, turn, next_attempt_at, created_at)
			SELECT id, client_id, ?1, (SELECT turn FROM analysis_lanes WHERE lane = ?1)
				+ row_number() OVER (PARTITION BY client_id ORDER BY created_at, id) - 1, ?, ?
			FROM files WHERE analysis_status IN (`+in+`) `+requeue, args...); err != nil {
			return 0, fmt.Errorf("queue analyses: %w", err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE files SET analysis_status = 'pending', analysis_reason = NULL
			WHERE analysis_status IN (`+in+`)`, args[3:]...)
		if err != nil {
			return 0, fmt.Errorf("queue analyses: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("queue analyses: %w", err)
		}
		tx.analysisQueued = n > 0
		return int(n), nil
	})
}

// AnalysisQueue returns the state of the analysis queue, every firm's:
// the files waiting to be read or being read, and when the oldest was
// queued.
func (db *DB) AnalysisQueue(ctx context.Context) (OutboxStats, error) {
	var stats OutboxStats
	var oldest sql.NullInt64
	if err := db.queryRow(ctx, `SELECT count(*), min(created_at) FROM analysis_jobs`).Scan(&stats.Pending, &oldest); err != nil {
		return OutboxStats{}, fmt.Errorf("analysis queue: %w", err)
	}
	if oldest.Valid {
		stats.OldestPending = fromUnix(oldest.Int64)
	}
	return stats, nil
}
