// Package exports writes the exports a firm asks for in the background: it
// books each document of a client's period by the rules of package datev
// and the store's bookings, gives the counterparties their personal
// accounts, and streams the ZIP into the file store, where the export's
// download link finds it.
package exports

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"runtime/debug"
	"strings"
	"time"

	"acctapi/datev"
	"acctapi/db"
	"acctapi/filestore"
	"acctapi/jobs"
	"acctapi/matching"
)

const (
	// DefaultPoll is how often Run looks for exports no commit woke it for.
	DefaultPoll = 5 * time.Second
	// recordTimeout bounds the recording of an export's end, which also
	// runs while Run is stopping.
	recordTimeout = 10 * time.Second
	// maxZIP bounds an export's ZIP in the file store.
	maxZIP = 64 << 30
)

// Files holds the stored bytes: the documents' files, read, and the
// exports' ZIPs, written (the local store or a bucket).
type Files interface {
	Open(ctx context.Context, id string) (io.ReadCloser, error)
	Write(r io.Reader, max int64) (*filestore.Pending, error)
	Keep(p *filestore.Pending, id string, record func() error) error
	Discard(p *filestore.Pending)
}

// Store is what the worker asks of the store: the queue of exports, the
// documents and bookings of a period, and the client's identity.
type Store interface {
	ReleaseExportClaims(ctx context.Context) error
	ClaimExports(ctx context.Context, n int) ([]*db.Export, error)
	ExportsQueued() <-chan struct{}
	ReleaseExport(ctx context.Context, e *db.Export) error
	FailExport(ctx context.Context, e *db.Export, reason string) error
	FinishExport(ctx context.Context, e *db.Export, r db.ExportResult) error
	ExportDocuments(ctx context.Context, e *db.Export) (*db.ExportBatch, error)
	BookingLessons(ctx context.Context, clientID string) (map[string]db.BookingLesson, error)
	ClientIdentity(ctx context.Context, clientID string) (*db.Identity, error)
	ResolveCounterparties(ctx context.Context, clientID string, finds []db.CounterpartyFind) ([]*db.Counterparty, error)
}

// Options configures New.
type Options struct {
	Store Store
	Files Files
	// Now is the clock; time.Now when nil. It must be the store's.
	Now func() time.Time
	// Logger gets the exports that failed; nothing is logged when nil.
	Logger *slog.Logger
	// Poll is how often Run looks for exports; DefaultPoll when 0.
	Poll time.Duration
}

// Worker writes the queued exports. One Worker serves a store.
type Worker struct {
	store  Store
	files  Files
	now    func() time.Time
	log    *slog.Logger
	runner *jobs.Runner[*db.Export]
}

// New returns a Worker; Store and Files are required.
func New(opts Options) *Worker {
	w := &Worker{store: opts.Store, files: opts.Files, now: opts.Now, log: opts.Logger}
	if w.now == nil {
		w.now = time.Now
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.runner = jobs.New(jobs.Config[*db.Export]{Name: "exports",
		Release: opts.Store.ReleaseExportClaims, Wake: opts.Store.ExportsQueued(),
		Claim: func(ctx context.Context, _ string, n int) ([]*db.Export, error) {
			return opts.Store.ClaimExports(ctx, n)
		},
		// A recording that failed is logged and leaves the export running
		// until the next start gives it back.
		Work: func(ctx context.Context, e *db.Export) error { w.work(ctx, e); return nil },
		Poll: cmp.Or(opts.Poll, DefaultPoll), Now: w.now, Logger: w.log})
	return w
}

// Run writes exports until ctx ends: at once when a commit queues one, and
// every Poll. It first gives back the exports a stopped process was
// writing; one cut off by the stop is queued again. Run returns nil.
func (w *Worker) Run(ctx context.Context) error { return w.runner.Run(ctx) }

// RunDue writes the queued exports, one at a time, and says how many it
// wrote; for tests.
func (w *Worker) RunDue(ctx context.Context) (int, error) { return w.runner.RunDue(ctx) }

// work writes one export and records its end: done, failed, or back in
// the queue when the stop cut it off.
func (w *Worker) work(ctx context.Context, e *db.Export) {
	err := w.safely(ctx, e)
	if err == nil {
		return
	}
	record, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	var refused *refusal
	switch {
	case ctx.Err() != nil:
		err = w.store.ReleaseExport(record, e)
	case errors.As(err, &refused):
		err = w.store.FailExport(record, e, refused.reason)
	default:
		w.log.Error("export", "id", e.ID, "client_id", e.ClientID, "error", err)
		err = w.store.FailExport(record, e, "the export could not be written; ask again, and if it fails again, tell the operator")
	}
	if err != nil {
		w.log.Error("record export", "id", e.ID, "error", err)
	}
}

// refusal ends an export failed with a reason its reader can act on.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

// safely writes the export, turning a panic into an error.
func (w *Worker) safely(ctx context.Context, e *db.Export) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return w.export(ctx, e)
}

// export books the period's documents, gives the counterparties their
// accounts, writes the ZIP into the file store and records the export done
// with it.
func (w *Worker) export(ctx context.Context, e *db.Export) error {
	batch, err := w.store.ExportDocuments(ctx, e)
	if err != nil {
		return err
	}
	if missing := batch.Settings.Missing(); len(missing) > 0 {
		return &refusal{"the client's ledger settings are incomplete: set them and export again"}
	}
	lessons, err := w.store.BookingLessons(ctx, e.ClientID)
	if err != nil {
		return err
	}
	identity, err := w.store.ClientIdentity(ctx, e.ClientID)
	if err != nil {
		return err
	}
	plan := Plan(batch, matching.Identity{VATIDs: identity.VATIDs, Names: identity.Names, IBANs: identity.IBANs}, lessons)
	counterparties, err := w.store.ResolveCounterparties(ctx, e.ClientID, plan.Finds())
	if err != nil {
		return err
	}
	plan.Settle(counterparties, batch.Settings.AccountLength)

	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(w.writeZIP(ctx, e, batch.Settings, plan, pw)) }()
	hash := sha256.New()
	pending, err := w.files.Write(io.TeeReader(pr, hash), maxZIP)
	pr.CloseWithError(err)
	if err != nil {
		return fmt.Errorf("write export %s: %w", e.ID, err)
	}
	result := plan.Result()
	result.Size, result.SHA256 = pending.Size, hash.Sum(nil)
	return w.files.Keep(pending, e.ID, func() error {
		record, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		return w.store.FinishExport(record, e, result)
	})
}

// writeZIP streams the export's ZIP to out: the rows, document.xml, then
// each booked document's file, read one at a time.
func (w *Worker) writeZIP(ctx context.Context, e *db.Export, s *db.LedgerSettings, plan *Booked, out io.Writer) error {
	a := datev.NewArchive(out, w.now())
	start, _ := s.FiscalYear(e.From)
	if err := a.Begin(datev.Header{ConsultantNumber: *s.ConsultantNumber, ClientNumber: *s.ClientNumber,
		FiscalYearStart: start, AccountLength: s.AccountLength, From: e.From, To: e.To, Chart: *s.Chart,
		Label: "Belege " + e.From.Format("02.01.") + "-" + e.To.Format("02.01.2006")}); err != nil {
		return err
	}
	docs := make([]datev.Document, 0, len(plan.Documents))
	for _, d := range plan.Documents {
		for _, r := range d.Rows {
			if err := a.Book(r); err != nil {
				return fmt.Errorf("book file %s: %w", d.File.ID, err)
			}
		}
		docs = append(docs, datev.Document{GUID: d.GUID, Name: d.Name, Issued: d.Issued})
	}
	if err := a.Documents(docs); err != nil {
		return err
	}
	for _, d := range plan.Documents {
		if err := w.copyFile(ctx, a, d); err != nil {
			return err
		}
	}
	return a.Close()
}

func (w *Worker) copyFile(ctx context.Context, a *datev.Archive, d *Document) error {
	dst, err := a.File(d.Name)
	if err != nil {
		return err
	}
	src, err := w.files.Open(ctx, d.File.ID)
	if err != nil {
		return fmt.Errorf("open file %s: %w", d.File.ID, err)
	}
	defer src.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("copy file %s: %w", d.File.ID, err)
	}
	return nil
}

// archiveName is a document's file name in the ZIP: its GUID, with the
// extension of its name where that is a plain one.
func archiveName(guid, name string) string {
	ext := strings.ToLower(path.Ext(name))
	if len(ext) < 2 || len(ext) > 6 || strings.IndexFunc(ext[1:], func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) >= 0 {
		return guid
	}
	return guid + ext
}
