// Package analysis reads the stored files in the background: the worker
// claims the jobs the store queued with each file, reads the file's bytes
// with the document readers, and records what they found, at least once
// and never after a reading ended; a bank statement is imported with its
// reading, from what the reading parsed.
package analysis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"time"

	"acctapi/db"
	"acctapi/docread"
	"acctapi/jobs"
	"acctapi/ocr"
	"acctapi/retry"
)

const (
	// DefaultPoll is how often Run looks for retries that came due when no
	// new file woke it.
	DefaultPoll = 5 * time.Second
	// recordTimeout bounds the recording of a result, which also runs while
	// Run is stopping.
	recordTimeout = 10 * time.Second
	// brokenDelay is the wait before a file whose reading broke off (a
	// panic in a reader) is read once more.
	brokenDelay = 30 * time.Second
)

// storeSchedule is the delay before each new try at a file whose bytes the
// file store could not give (a bucket out of reach): 1 min, 5 min, 30 min,
// 2 h, 6 h; then the file ends failed.
var storeSchedule = retry.Schedule{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}

// Files opens the stored bytes of a file: the local store or a bucket.
type Files interface {
	Open(ctx context.Context, id string) (io.ReadCloser, error)
}

// Options configures New.
type Options struct {
	Store  Store
	Files  Files
	Reader *docread.Reader
	// OCR reads images and PDF pages without text; nil when OCR is off
	// or not installed, and NoOCR then says why, in the words the skipped
	// files show.
	OCR   *ocr.Engine
	NoOCR string
	// Workers is how many files are read at once in the OCR lane (images,
	// PDF pages without text); 1 when 0.
	Workers int
	// FastWorkers is how many files are read at once in the fast lane,
	// where every file starts (XML, text, a PDF's text layer, an
	// e-invoice) and which hands a file that needs OCR to the OCR lane; 1
	// when 0.
	FastWorkers int
	// OCRBudget bounds the OCR of one document, all its pages together;
	// DefaultOCRBudget when 0.
	OCRBudget time.Duration
	// TempDir holds the copy of a file whose store gives no random access
	// (a bucket) while it is read; the system's when empty.
	TempDir string
	// Now is the clock; time.Now when nil. It MUST be the clock Store was
	// opened with: retries are timed by the store.
	Now func() time.Time
	// Logger gets each reading that failed and the store's errors; nothing
	// is logged when nil.
	Logger *slog.Logger
	// Poll is how often Run looks for retries that came due; DefaultPoll
	// when 0.
	Poll time.Duration
	// Rand draws the jitter of retry delays; the package's source when nil.
	Rand *rand.Rand
}

// Worker reads the files the store queued. One Worker serves a store.
type Worker struct {
	store     Store
	files     Files
	reader    *docread.Reader
	ocr       *ocr.Engine
	noOCR     string
	ocrBudget time.Duration
	tempDir   string
	now       func() time.Time
	log       *slog.Logger
	rng       *retry.Source
	// runner claims the jobs of the fast lane and the OCR lane, each
	// with its workers.
	runner *jobs.Runner[*db.AnalysisJob]
}

// Store is what the worker asks of the store: the queue of readings and
// what the firm learnt.
type Store interface {
	lessonsSource
	ReleaseAnalysisClaims(ctx context.Context) error
	ClaimAnalyses(ctx context.Context, lane string, n int) ([]*db.AnalysisJob, error)
	AnalysesQueued() <-chan struct{}
	ReleaseAnalysis(ctx context.Context, job *db.AnalysisJob, due time.Time, counted bool) error
	HandOffAnalysis(ctx context.Context, job *db.AnalysisJob, lane string) error
	DeferAnalysis(ctx context.Context, job *db.AnalysisJob, due time.Time) error
	FinishAnalysis(ctx context.Context, job *db.AnalysisJob, result db.AnalysisResult) (*db.File, bool, error)
	RecordFirstReading(ctx context.Context, job *db.AnalysisJob, result db.AnalysisResult, lane string) (*db.File, bool, error)
}

// New returns a Worker; Store, Files and Reader are required.
func New(opts Options) *Worker {
	w := &Worker{store: opts.Store, files: opts.Files, reader: opts.Reader, ocr: opts.OCR, noOCR: opts.NoOCR,
		ocrBudget: cmp.Or(opts.OCRBudget, DefaultOCRBudget),
		tempDir:   opts.TempDir, now: opts.Now, log: opts.Logger, rng: retry.NewSource(opts.Rand)}
	if w.now == nil {
		w.now = time.Now
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.runner = jobs.New(jobs.Config[*db.AnalysisJob]{Name: "analysis",
		Lanes:   []jobs.Lane{{Name: db.LaneFast, Workers: opts.FastWorkers}, {Name: db.LaneOCR, Workers: opts.Workers}},
		Release: opts.Store.ReleaseAnalysisClaims, Claim: opts.Store.ClaimAnalyses, Wake: opts.Store.AnalysesQueued(),
		// A recording that failed is logged and leaves the job claimed
		// until the next start.
		Work: func(ctx context.Context, job *db.AnalysisJob) error { w.read(ctx, job); return nil },
		Poll: cmp.Or(opts.Poll, DefaultPoll), Logger: w.log})
	return w
}

// Run reads files until ctx ends: at once when the store queues one, and
// every Poll for retries that came due, each lane's workers at a time. It
// first releases the claims a stopped process left. When ctx ends, the
// readings under way are cut off and given back uncounted, to be read after
// the next start. The store's errors are logged and the work is taken up at
// the next poll. Run returns nil.
func (w *Worker) Run(ctx context.Context) error { return w.runner.Run(ctx) }

// RunDue reads every file that is due now, one at a time, the fast lane's
// first, and returns when none is left: for a command that reads the
// queue once, and for tests.
func (w *Worker) RunDue(ctx context.Context) error {
	_, err := w.runner.RunDue(ctx)
	return err
}

// read reads one claimed file and records the outcome.
func (w *Worker) read(ctx context.Context, job *db.AnalysisJob) {
	if job.Attempts > db.MaxAnalysisAttempts {
		w.finish(job, failed(fmt.Sprintf("reading this file stopped the reader %d times; it is not read again", db.MaxAnalysisAttempts)), w.store.FinishAnalysis)
		return
	}
	result, err := w.analyze(ctx, job)
	var storeErr *storeError
	var first *firstReading
	switch {
	case ctx.Err() != nil:
		// Stopping: the reading is given back uncounted.
		w.record(job, func(ctx context.Context) error { return w.store.ReleaseAnalysis(ctx, job, w.now(), false) })
	case errors.Is(err, errNeedsOCR):
		w.record(job, func(ctx context.Context) error { return w.store.HandOffAnalysis(ctx, job, db.LaneOCR) })
	case errors.As(err, &first):
		w.finish(job, first.result, func(ctx context.Context, job *db.AnalysisJob, result db.AnalysisResult) (*db.File, bool, error) {
			return w.store.RecordFirstReading(ctx, job, result, db.LaneOCR)
		})
	case errors.As(err, &storeErr):
		delay, ok := w.rng.Delay(storeSchedule, job.Retries+1)
		if !ok {
			w.finish(job, failed("the file store could not give the file's bytes"), w.store.FinishAnalysis)
			return
		}
		w.log.Warn("analysis: the file store could not give a file's bytes", "file_id", job.FileID, "error", err)
		w.record(job, func(ctx context.Context) error { return w.store.DeferAnalysis(ctx, job, w.now().Add(delay)) })
	case err != nil:
		w.log.Error("analysis: the reading broke off", "file_id", job.FileID, "attempt", job.Attempts, "error", err)
		w.record(job, func(ctx context.Context) error {
			return w.store.ReleaseAnalysis(ctx, job, w.now().Add(brokenDelay), true)
		})
	default:
		w.finish(job, result, w.store.FinishAnalysis)
	}
}

// errNeedsOCR is a file the fast lane hands to the OCR lane.
var errNeedsOCR = errors.New("the file needs OCR")

// firstReading is a PDF the fast lane read from its text layer, whose
// pages without text are left to the OCR lane: its reading is recorded at
// once, so it never waits behind the client's photos, and the OCR lane reads
// the whole file again.
type firstReading struct{ result db.AnalysisResult }

func (*firstReading) Error() string { return "the file's text layer is read; its other pages need OCR" }

// storeError is a file's bytes that could not be had from the store: the
// only error that is retried on storeSchedule. A reading that runs out of
// its time is the document's failure, a result.
type storeError struct{ err error }

func (e *storeError) Error() string { return "open the stored file: " + e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// brokenError is a reader that panicked.
type brokenError struct {
	value any
	stack []byte
}

func (e *brokenError) Error() string { return fmt.Sprintf("panic: %v\n%s", e.value, e.stack) }

// analyze reads the job's file. A document the readers refuse is a result
// (failed or skipped, with the reason), not an error; errors are the
// store's, errNeedsOCR from the fast lane, a reader that broke (a panic, an
// error of its own), or ctx's end.
func (w *Worker) analyze(ctx context.Context, job *db.AnalysisJob) (result db.AnalysisResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &brokenError{value: v, stack: debug.Stack()}
		}
	}()
	log := w.log.With("file_id", job.FileID, "client_id", job.ClientID)
	src, size, release, err := w.open(ctx, job)
	if errors.Is(err, fs.ErrNotExist) {
		return failed("the file's bytes are missing from the file store"), nil
	}
	if err != nil {
		return db.AnalysisResult{}, &storeError{err}
	}
	defer release()
	doc, err := w.reader.Read(ctx, src, size, job.Name, job.MimeType)
	mayOCR := job.Lane == db.LaneOCR
	var refused *docread.Error
	if errors.As(err, &refused) && errors.Is(err, docread.ErrUnsupported) && isImage(head(src, size)) {
		if off := w.ocrOff(); off != "" {
			return skipped("the file is an image, which is read with OCR, and " + off), nil
		}
		if !mayOCR {
			return db.AnalysisResult{}, errNeedsOCR
		}
		doc, err = w.readImage(ctx, src, size, job.MimeType)
		if err == nil {
			return ocrResult(resultOf(doc, src, size, "", log)), nil
		}
	}
	if ctx.Err() != nil {
		return db.AnalysisResult{}, ctx.Err()
	}
	var unread *ocr.Error
	switch {
	case errors.As(err, &refused) && errors.Is(err, docread.ErrUnsupported):
		return skipped(refused.Reason), nil
	case errors.As(err, &refused):
		return failed(refused.Reason), nil
	case errors.As(err, &unread):
		return failed(unread.Reason), nil
	case err != nil:
		return db.AnalysisResult{}, err
	}
	if doc.Format == docread.FormatPDF && !allText(doc) && w.ocrOff() == "" {
		// An e-invoice is read from its XML; the OCR of its pages would
		// only add to the text the search reads, not worth its wait.
		if !mayOCR && eInvoiceOf(doc, src, size) != nil {
			return resultOf(doc, src, size, "", log), nil
		}
		textLayer := hasText(doc)
		switch {
		case !mayOCR && textLayer:
			return db.AnalysisResult{}, &firstReading{resultOf(doc, src, size, "", log)}
		case !mayOCR:
			return db.AnalysisResult{}, errNeedsOCR
		}
		scanned, err := w.readScannedPages(ctx, doc, src, size)
		switch {
		case ctx.Err() != nil:
			return db.AnalysisResult{}, ctx.Err()
		case errors.As(err, &unread) && !scanned && !textLayer:
			return failed(unread.Reason), nil
		case errors.As(err, &refused) && !scanned && !textLayer:
			return failed(refused.Reason), nil
		}
		if scanned && !textLayer {
			return ocrResult(resultOf(doc, src, size, "", log)), nil
		}
	}
	return resultOf(doc, src, size, w.ocrOff(), log), nil
}

// head is the start of src, which tells its format.
func head(src io.ReaderAt, size int64) []byte {
	b := make([]byte, min(size, 16))
	n, _ := src.ReadAt(b, 0)
	return b[:n]
}

// open gives random access to the job's bytes: the local file itself, or a
// temporary copy of a bucket's object. release closes and removes what
// open made.
func (w *Worker) open(ctx context.Context, job *db.AnalysisJob) (io.ReaderAt, int64, func(), error) {
	rc, err := w.files.Open(ctx, job.FileID)
	if err != nil {
		return nil, 0, nil, err
	}
	if f, ok := rc.(*os.File); ok {
		return f, job.Size, func() { f.Close() }, nil
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(w.tempDir, "analysis-*")
	if err != nil {
		return nil, 0, nil, err
	}
	release := func() { tmp.Close(); os.Remove(tmp.Name()) }
	n, err := io.Copy(tmp, io.LimitReader(rc, job.Size+1))
	if err == nil && n != job.Size {
		err = fmt.Errorf("the stored object has %d bytes, its record %d", n, job.Size)
	}
	if err != nil {
		release()
		return nil, 0, nil, err
	}
	return tmp, n, release, nil
}

// finish records the outcome of a reading with put (the store's
// FinishAnalysis, or RecordFirstReading for a first reading).
func (w *Worker) finish(job *db.AnalysisJob, result db.AnalysisResult,
	put func(context.Context, *db.AnalysisJob, db.AnalysisResult) (*db.File, bool, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if learnt, err := withLessons(ctx, w.store, job.ClientID, result); err != nil {
		w.log.Error("find what the firm learnt", "file_id", job.FileID, "error", err)
	} else {
		result = learnt
	}
	f, ok, err := put(ctx, job, result)
	if err != nil {
		// The job stays claimed: the next start reads the file again.
		w.log.Error("record an analysis", "file_id", job.FileID, "error", err)
		return
	}
	if ok && result.Status != db.AnalysisDone {
		w.log.Info("analysis: file not read", "file_id", job.FileID, "status", result.Status, "reason", *f.Analysis.Reason)
	}
}

// record puts the job back for another attempt through put, which runs
// even while Run stops. A job it could not put back stays claimed until the
// next start.
func (w *Worker) record(job *db.AnalysisJob, put func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := put(ctx); err != nil {
		w.log.Error("give back an analysis", "file_id", job.FileID, "error", err)
	}
}

func failed(reason string) db.AnalysisResult {
	return db.AnalysisResult{Status: db.AnalysisFailed, Reason: &reason}
}

func skipped(reason string) db.AnalysisResult {
	return db.AnalysisResult{Status: db.AnalysisSkipped, Reason: &reason}
}
