package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The export formats.
const ExportDATEV = "datev"

// The states of an export.
const (
	ExportQueued  = "queued"
	ExportRunning = "running"
	ExportDone    = "done"
	ExportFailed  = "failed"
)

// EventExportCompleted is the event of an export's end, done or failed.
const EventExportCompleted = "export.completed"

// MaxExportAttempts is how many times an export may break off before it
// ends failed.
const MaxExportAttempts = 3

// Export is an export of a client's period: its state, and when done what
// it holds. Its ZIP is kept in the file store under the export's id.
type Export struct {
	ID       string
	ClientID string
	Format   string
	// From and To are the period's first and last days, at midnight UTC.
	From, To           time.Time
	Status             string
	DocumentCount      int
	RowCount           int
	Skipped            []SkippedFile
	ChangedSinceExport []string
	// Reason says why a failed export failed.
	Reason     *string
	Size       *int64
	SHA256     []byte
	Attempts   int
	CreatedAt  time.Time
	FinishedAt *time.Time
}

// SkippedFile is a document of the period an export did not book, and why.
type SkippedFile struct {
	FileID string `json:"fileId"`
	Reason string `json:"reason"`
}

const exportColumns = `id, client_id, format, from_date, to_date, status, document_count, row_count, skipped,
	changed_since_export, reason, size, sha256, attempts, created_at, finished_at`

func scanExport(row scanner) (*Export, error) {
	var e Export
	var from, to, skipped, changed string
	var reason sql.NullString
	var size, finished sql.NullInt64
	var created int64
	if err := row.Scan(&e.ID, &e.ClientID, &e.Format, &from, &to, &e.Status, &e.DocumentCount, &e.RowCount, &skipped,
		&changed, &reason, &size, &e.SHA256, &e.Attempts, &created, &finished); err != nil {
		return nil, err
	}
	e.From, _ = time.Parse(time.DateOnly, from)
	e.To, _ = time.Parse(time.DateOnly, to)
	e.Reason, e.CreatedAt, e.FinishedAt = nullString(reason), fromUnix(created), nullTime(finished)
	if size.Valid {
		e.Size = &size.Int64
	}
	if err := errors.Join(json.Unmarshal([]byte(skipped), &e.Skipped), json.Unmarshal([]byte(changed), &e.ChangedSinceExport)); err != nil {
		return nil, fmt.Errorf("scan export %s: %w", e.ID, err)
	}
	return &e, nil
}

// ExportCreate asks for an export of a period, its first and last day.
type ExportCreate struct {
	Format   string
	From, To time.Time
}

// ledgerSettingNames are the settings Missing names, as a person reads them.
var ledgerSettingNames = map[string]string{"Chart": "chart", "ConsultantNumber": "consultant number", "ClientNumber": "client number"}

// CreateExport queues an export of the client's period. The client's
// ledger settings must be set and the period must lie in one fiscal year.
// Returns EINVALID naming the settings missing, or with field To for a
// period that ends before it starts or crosses the fiscal year's start.
func (db *DB) CreateExport(ctx context.Context, clientID string, c ExportCreate) (*Export, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Export, error) {
		s, err := findLedgerSettings(ctx, tx, clientID)
		if err != nil {
			return nil, err
		}
		if missing := s.Missing(); len(missing) > 0 {
			names := make([]string, len(missing))
			for i, m := range missing {
				names[i] = ledgerSettingNames[m]
			}
			return nil, &Error{Code: EINVALID, Field: []any{"LedgerSettings"},
				Message: "the client's ledger settings lack its " + strings.Join(names, ", ") + ": set them before an export"}
		}
		if c.To.Before(c.From) {
			return nil, &Error{Code: EINVALID, Field: []any{"To"}, Message: "the period ends before it starts"}
		}
		if _, next := s.FiscalYear(c.From); !c.To.Before(next) {
			return nil, &Error{Code: EINVALID, Field: []any{"To"}, Message: fmt.Sprintf(
				"the period crosses the start of the fiscal year on %s: export each fiscal year on its own", next.Format(time.DateOnly))}
		}
		now := db.now().UTC().Truncate(time.Second)
		e := &Export{ID: NewID(), ClientID: clientID, Format: c.Format, From: c.From, To: c.To, Status: ExportQueued,
			Skipped: []SkippedFile{}, ChangedSinceExport: []string{}, CreatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO exports (id, client_id, format, from_date, to_date, status, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, e.ID, clientID, e.Format, e.From.Format(time.DateOnly), e.To.Format(time.DateOnly),
			e.Status, unix(now)); err != nil {
			return nil, fmt.Errorf("create export: %w", err)
		}
		tx.exportQueued = true
		return e, nil
	})
}

// FindExport returns the client's export. Returns ENOTFOUND.
func (db *DB) FindExport(ctx context.Context, clientID, id string) (*Export, error) {
	e, err := scanExport(db.queryRow(ctx, `SELECT `+exportColumns+` FROM exports WHERE client_id = ? AND id = ?`, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "export %s not found", id)
	}
	return e, err
}

// ExportSorts are the sorts the export list accepts.
var ExportSorts = []string{"createdAt"}

// ListExports returns a page of the client's exports. Returns
// EINVALIDCURSOR.
func (db *DB) ListExports(ctx context.Context, clientID string, req PageRequest) (*Page[*Export], error) {
	l := list{table: "exports", columns: exportColumns, tenant: condition{"client_id = ?", []any{clientID}},
		sorts: map[string]sortKey{"createdAt": column("created_at")}}
	return readPage(ctx, db, l, req, func(s scanner) (*Export, string, error) {
		e, err := scanExport(s)
		if err != nil {
			return nil, "", err
		}
		return e, e.ID, nil
	})
}

// ExportsQueued is signalled after a commit that queued an export, so
// that the export worker starts at once.
func (db *DB) ExportsQueued() <-chan struct{} { return db.exportsQueued }

// ReleaseExportClaims gives back the exports a stopped worker was writing.
// It runs for every firm, before the worker's first claim.
func (db *DB) ReleaseExportClaims(ctx context.Context) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE exports SET status = 'queued', claimed_at = NULL WHERE status = 'running'`); err != nil {
			return fmt.Errorf("release exports: %w", err)
		}
		return nil
	})
}

// ClaimExports claims up to n queued exports of any firm, the oldest
// first, counting an attempt for each. An export that broke off
// MaxExportAttempts times ends failed instead, with its event.
func (db *DB) ClaimExports(ctx context.Context, n int) ([]*Export, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) ([]*Export, error) {
		rows, err := tx.QueryContext(ctx, `SELECT `+exportColumns+` FROM exports WHERE status = 'queued'
			ORDER BY created_at, id LIMIT ?`, n)
		if err != nil {
			return nil, fmt.Errorf("claim exports: %w", err)
		}
		var claimed []*Export
		for rows.Next() {
			e, err := scanExport(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("claim exports: %w", err)
			}
			claimed = append(claimed, e)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("claim exports: %w", err)
		}
		now := db.now().UTC().Truncate(time.Second)
		var out []*Export
		for _, e := range claimed {
			if e.Attempts >= MaxExportAttempts {
				if err := db.failExport(ctx, tx, e, "the export broke off three times", now); err != nil {
					return nil, err
				}
				continue
			}
			e.Attempts++
			e.Status = ExportRunning
			if _, err := tx.ExecContext(ctx, `UPDATE exports SET status = 'running', claimed_at = ?, attempts = ?
				WHERE client_id = ? AND id = ?`, unix(now), e.Attempts, e.ClientID, e.ID); err != nil {
				return nil, fmt.Errorf("claim exports: %w", err)
			}
			out = append(out, e)
		}
		return out, nil
	})
}

// ReleaseExport puts a running export back in the queue, uncounted: a
// stop cut it off.
func (db *DB) ReleaseExport(ctx context.Context, e *Export) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE exports SET status = 'queued', claimed_at = NULL, attempts = attempts - 1
			WHERE client_id = ? AND id = ? AND status = 'running'`, e.ClientID, e.ID); err != nil {
			return fmt.Errorf("release export: %w", err)
		}
		return nil
	})
}

// FailExport ends a running export failed, with the reason a person reads.
func (db *DB) FailExport(ctx context.Context, e *Export, reason string) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		return db.failExport(ctx, tx, e, reason, db.now().UTC().Truncate(time.Second))
	})
}

func (db *DB) failExport(ctx context.Context, tx *txn, e *Export, reason string, now time.Time) error {
	e.Status, e.Reason, e.FinishedAt = ExportFailed, &reason, &now
	if _, err := tx.ExecContext(ctx, `UPDATE exports SET status = 'failed', reason = ?, claimed_at = NULL, finished_at = ?
		WHERE client_id = ? AND id = ?`, reason, unix(now), e.ClientID, e.ID); err != nil {
		return fmt.Errorf("fail export: %w", err)
	}
	return db.emit(ctx, tx, event{typ: EventExportCompleted, clientID: &e.ClientID, record: e})
}

// ExportDocument is a document of an export's period with what booking it
// needs: the file, its booking and exports, and the counterparties of
// the transactions confirmed for it.
type ExportDocument struct {
	File *File
	// Payments are the confirmed transactions' counterparties.
	Payments []ExportPayment
}

// ExportPayment is a transaction confirmed for a document, as the export
// reads who paid or was paid.
type ExportPayment struct {
	Name   *string
	IBAN   *string
	Amount int64
}

// ExportBatch is what an export reads of a client: its settings and the
// documents of the period.
type ExportBatch struct {
	Settings  *LedgerSettings
	Documents []*ExportDocument
}

// ExportDocuments reads the export's batch: the client's invoices, credit
// notes and receipts whose document date lies in the period, in date
// order, with their bookings, exports and payments. Returns ENOTFOUND.
func (db *DB) ExportDocuments(ctx context.Context, e *Export) (*ExportBatch, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	b := &ExportBatch{}
	if b.Settings, err = findLedgerSettings(ctx, tx, e.ClientID); err != nil {
		return nil, err
	}
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM clients WHERE id = ?`, e.ClientID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "client %s not found", e.ClientID)
	}
	if err != nil {
		return nil, fmt.Errorf("export documents: %w", err)
	}
	from, past := unix(e.From), unix(e.To.AddDate(0, 0, 1))
	rows, err := tx.QueryContext(ctx, `SELECT `+fileColumns+` FROM files WHERE client_id = ? AND document_date >= ?
		AND document_date < ? AND kind IN ('invoice', 'credit_note', 'receipt') ORDER BY document_date, id`, e.ClientID, from, past)
	if err != nil {
		return nil, fmt.Errorf("export documents: %w", err)
	}
	var files []*File
	byID := map[string]*ExportDocument{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		d := &ExportDocument{File: f}
		files = append(files, f)
		b.Documents = append(b.Documents, d)
		byID[f.ID] = d
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("export documents: %w", err)
	}
	for start := 0; start < len(files); start += 500 {
		if err := loadFileLedger(ctx, tx, e.ClientID, files[start:min(start+500, len(files))]); err != nil {
			return nil, err
		}
	}
	payments, err := tx.QueryContext(ctx, `SELECT m.file_id, t.counterparty_name, t.counterparty_iban, t.amount
		FROM bank_transaction_matches m JOIN bank_transactions t ON t.id = m.transaction_id
		JOIN files f ON f.id = m.file_id
		WHERE m.client_id = ? AND m.state = 'confirmed' AND f.client_id = ? AND f.document_date >= ? AND f.document_date < ?
		ORDER BY m.file_id, t.booking_date, t.id`, e.ClientID, e.ClientID, from, past)
	if err != nil {
		return nil, fmt.Errorf("export payments: %w", err)
	}
	defer payments.Close()
	for payments.Next() {
		var fileID string
		var p ExportPayment
		var name, iban sql.NullString
		if err := payments.Scan(&fileID, &name, &iban, &p.Amount); err != nil {
			return nil, fmt.Errorf("export payments: %w", err)
		}
		p.Name, p.IBAN = nullString(name), nullString(iban)
		if d := byID[fileID]; d != nil {
			d.Payments = append(d.Payments, p)
		}
	}
	return b, payments.Err()
}

// ExportResult is what an export wrote.
type ExportResult struct {
	DocumentCount      int
	RowCount           int
	Skipped            []SkippedFile
	ChangedSinceExport []string
	// Bookings are the booked documents' bookings; each one's file is
	// recorded as exported.
	Bookings []FileBooking
	Size     int64
	SHA256   []byte
}

// FileBooking is how an export booked one file, and the fingerprint of
// what it booked it from.
type FileBooking struct {
	FileID         string
	CounterpartyID *string
	Fingerprint    string
	Booking
}

// FinishExport records a running export done: the bookings (a person's
// stays theirs), each booked file's export, and the export's counts, in
// one transaction with the event export.completed.
func (db *DB) FinishExport(ctx context.Context, e *Export, r ExportResult) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := db.now().UTC().Truncate(time.Second)
		for _, b := range r.Bookings {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_bookings
				(file_id, client_id, counterparty_id, account, contra_account, tax_key, text, source, updated_at)
				SELECT id, client_id, ?, ?, ?, ?, ?, ?, ? FROM files WHERE client_id = ? AND id = ?
				ON CONFLICT (file_id) DO UPDATE SET counterparty_id = excluded.counterparty_id,
				contra_account = excluded.contra_account,
				account = iif(file_bookings.source = 'user', file_bookings.account, excluded.account),
				tax_key = iif(file_bookings.source = 'user', file_bookings.tax_key, excluded.tax_key),
				text = iif(file_bookings.source = 'user', file_bookings.text, excluded.text),
				source = iif(file_bookings.source = 'user', 'user', excluded.source), updated_at = excluded.updated_at`,
				b.CounterpartyID, b.Account, b.ContraAccount, b.TaxKey, b.Text, b.Source, unix(now), e.ClientID, b.FileID); err != nil {
				return fmt.Errorf("record booking: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO export_files (export_id, file_id, client_id, exported_at, fingerprint)
				SELECT ?, id, client_id, ?, ? FROM files WHERE client_id = ? AND id = ?`, e.ID, unix(now), b.Fingerprint, e.ClientID, b.FileID); err != nil {
				return fmt.Errorf("record exported file: %w", err)
			}
		}
		skipped, err := json.Marshal(r.Skipped)
		if err != nil {
			return err
		}
		changed, err := json.Marshal(r.ChangedSinceExport)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE exports SET status = 'done', document_count = ?, row_count = ?, skipped = ?,
			changed_since_export = ?, size = ?, sha256 = ?, claimed_at = NULL, finished_at = ? WHERE client_id = ? AND id = ?`,
			r.DocumentCount, r.RowCount, string(skipped), string(changed), r.Size, r.SHA256, unix(now), e.ClientID, e.ID); err != nil {
			return fmt.Errorf("finish export: %w", err)
		}
		e.Status, e.DocumentCount, e.RowCount, e.Skipped, e.ChangedSinceExport = ExportDone, r.DocumentCount, r.RowCount, r.Skipped, r.ChangedSinceExport
		e.Size, e.SHA256, e.FinishedAt = &r.Size, r.SHA256, &now
		return db.emit(ctx, tx, event{typ: EventExportCompleted, clientID: &e.ClientID, record: e})
	})
}

// FindExportForDownload returns the export with the id, whoever's it is:
// a download link is signed for one id, and the signature, checked before,
// is the caller's credential. Returns ENOTFOUND.
func (db *DB) FindExportForDownload(ctx context.Context, id string) (*Export, error) {
	e, err := scanExport(db.queryRow(ctx, `SELECT `+exportColumns+` FROM exports WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "export %s not found", id)
	}
	return e, err
}
