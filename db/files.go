package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// File is the record of an uploaded file; its bytes are in the file store
// under its id.
type File struct {
	ID           string
	ClientID     string
	WorkspaceID  string
	TaskID       *string
	FolderID     *string
	CreatedByID  *string
	Name         string
	MimeType     string
	Size         int64
	SHA256       []byte
	DocumentDate time.Time
	// DocumentDateSource says who set DocumentDate: SourceUser,
	// SourceAnalysis, or nil while it is the upload time.
	DocumentDateSource *string
	// Kind is what the document is (KindInvoice, ...); nil while unknown.
	Kind *string
	// KindSource says who set Kind: SourceUser or SourceAnalysis.
	KindSource *string
	Analysis   Analysis
	// Payment is what the banking worker last decided of the document.
	Payment   Payment
	CreatedAt time.Time
	UpdatedAt time.Time
	LabelIDs  []string
	// Booking is how the document is booked; nil until an export booked it
	// or a person chose its booking.
	Booking *Booking
	// Exports are the exports that booked the file, the oldest first.
	Exports []FileExport
}

// Payment is a document's side and payment state, as the banking worker
// decides them from its reading, the client's identity and the payments
// confirmed for it; nil until it has.
type Payment struct {
	// Direction is DirectionReceived or DirectionIssued.
	Direction *string
	// Status is PaymentOpen, PaymentPartial or PaymentPaid; nil for a
	// document that is never paid or has no total.
	Status *string
	// OpenAmount is what is left to pay, in units of 10^-5; nil with
	// Status.
	OpenAmount *int64
}

// The directions and payment states of a document.
const (
	DirectionReceived = "received"
	DirectionIssued   = "issued"
	PaymentOpen       = "open"
	PaymentPartial    = "partial"
	PaymentPaid       = "paid"
)

// FileCreate holds the record of a file whose bytes are in place.
type FileCreate struct {
	ID           string
	WorkspaceID  string
	TaskID       *string
	FolderID     *string
	LabelIDs     []string
	Name         string
	MimeType     string
	Size         int64
	SHA256       []byte
	DocumentDate *time.Time // the upload time when nil
}

const fileColumns = `id, client_id, workspace_id, task_id, folder_id, created_by_id, name, mimetype, size,
	sha256, document_date, created_at, updated_at, document_date_source, kind, kind_source,
	analysis_status, analysis_source, analysis_reason, analysis_language, analyzed_at, analysis_fields, analysis_kind,
	analysis_confidence, analysis_warnings, user_fields, direction, payment_status, open_amount`

// CreateFile records a file in the client's workspace. The task, folder and
// labels must be of that workspace. Returns ENOTFOUND naming the first
// reference that is not, and the workspace as its place: an upload need not
// name a task.
func (db *DB) CreateFile(ctx context.Context, clientID string, in FileCreate) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
		return db.createFile(ctx, tx, clientID, in)
	})
}

// createFile is CreateFile in the caller's transaction: an upload through a
// collect session records its file so, with the item's link beside it.
func (db *DB) createFile(ctx context.Context, tx *txn, clientID string, in FileCreate) (*File, error) {
	if err := findWorkspace(ctx, tx, clientID, in.WorkspaceID); err != nil {
		return nil, withField(err, "WorkspaceID")
	}
	if in.TaskID != nil {
		if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, *in.TaskID,
			inWorkspace{"tasks", "task", "the workspace", []any{"TaskID"}}); err != nil {
			return nil, err
		}
	}
	if in.FolderID != nil {
		if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, *in.FolderID,
			inWorkspace{"folders", "folder", "the workspace", []any{"FolderID"}}); err != nil {
			return nil, err
		}
	}
	for i, id := range in.LabelIDs {
		if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, id,
			inWorkspace{"labels", "label", "the workspace", []any{"LabelIDs", i}}); err != nil {
			return nil, err
		}
	}
	now := db.now().UTC().Truncate(time.Second)
	f := &File{
		ID: in.ID, ClientID: clientID, WorkspaceID: in.WorkspaceID, TaskID: in.TaskID, FolderID: in.FolderID,
		Name: in.Name, MimeType: in.MimeType, Size: in.Size, SHA256: in.SHA256, DocumentDate: now,
		Analysis:  Analysis{Status: AnalysisPending, Warnings: []string{}},
		CreatedAt: now, UpdatedAt: now, LabelIDs: append([]string{}, in.LabelIDs...), Exports: []FileExport{},
	}
	f.Analysis.show()
	// In the order FindFile reads them back, without duplicates.
	slices.Sort(f.LabelIDs)
	f.LabelIDs = slices.Compact(f.LabelIDs)
	if in.DocumentDate != nil {
		f.DocumentDate = in.DocumentDate.UTC().Truncate(time.Second)
		f.DocumentDateSource = ptr(SourceUser)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO files (id, client_id, workspace_id, task_id, folder_id, created_by_id,
		name, mimetype, size, sha256, document_date, document_date_source, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, clientID, f.WorkspaceID, f.TaskID, f.FolderID, f.Name, f.MimeType, f.Size, f.SHA256,
		unix(f.DocumentDate), f.DocumentDateSource, unix(now), unix(now)); err != nil {
		return nil, fmt.Errorf("create file: %w", err)
	}
	if err := db.queueNewFile(ctx, tx, f); err != nil {
		return nil, err
	}
	for _, id := range f.LabelIDs {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO file_labels (file_id, label_id) VALUES (?, ?)`, f.ID, id); err != nil {
			return nil, fmt.Errorf("label file: %w", err)
		}
	}
	return f, db.emit(ctx, tx, event{typ: EventFileCreated, clientID: &clientID, record: f})
}

// FindFile returns the client's file. Returns ENOTFOUND.
func (db *DB) FindFile(ctx context.Context, clientID, id string) (*File, error) {
	return db.findFile(ctx, `client_id = ? AND id = ?`, clientID, id)
}

// FindFileForDownload returns the file with the id, whoever's it is: a
// download link is signed for one file id, and the signature, checked
// before, is the caller's credential. Returns ENOTFOUND.
func (db *DB) FindFileForDownload(ctx context.Context, id string) (*File, error) {
	return db.findFile(ctx, `id = ?`, id)
}

func (db *DB) findFile(ctx context.Context, where string, args ...any) (*File, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	f, err := scanFile(tx.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "file %s not found", args[len(args)-1])
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT label_id FROM file_labels
		WHERE file_id = (SELECT id FROM files WHERE client_id = ? AND id = ?) ORDER BY label_id`, f.ClientID, f.ID)
	if err != nil {
		return nil, fmt.Errorf("file labels: %w", err)
	}
	defer rows.Close()
	f.LabelIDs = []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("file labels: %w", err)
		}
		f.LabelIDs = append(f.LabelIDs, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("file labels: %w", err)
	}
	rows.Close()
	return f, loadFileLedger(ctx, tx, f.ClientID, []*File{f})
}

// scanFile reads a row of fileColumns; LabelIDs are left to the caller.
func scanFile(row scanner) (*File, error) {
	var f File
	var task, folder, createdBy, dateSource, kind, kindSource sql.NullString
	var source, reason, language, fields, analysisKind, confidence, warnings, user sql.NullString
	var document, created, updated int64
	var analyzed, open sql.NullInt64
	var direction, status sql.NullString
	if err := row.Scan(&f.ID, &f.ClientID, &f.WorkspaceID, &task, &folder, &createdBy, &f.Name, &f.MimeType, &f.Size,
		&f.SHA256, &document, &created, &updated, &dateSource, &kind, &kindSource,
		&f.Analysis.Status, &source, &reason, &language, &analyzed, &fields, &analysisKind,
		&confidence, &warnings, &user, &direction, &status, &open); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan file: %w", err)
	}
	f.TaskID, f.FolderID, f.CreatedByID = nullString(task), nullString(folder), nullString(createdBy)
	f.DocumentDate, f.CreatedAt, f.UpdatedAt = fromUnix(document), fromUnix(created), fromUnix(updated)
	f.DocumentDateSource, f.Kind, f.KindSource = nullString(dateSource), nullString(kind), nullString(kindSource)
	f.Analysis.Source, f.Analysis.Reason, f.Analysis.Language = nullString(source), nullString(reason), nullString(language)
	f.Analysis.AnalyzedAt, f.Analysis.Kind = nullTime(analyzed), nullString(analysisKind)
	f.Payment.Direction, f.Payment.Status = nullString(direction), nullString(status)
	if open.Valid {
		f.Payment.OpenAmount = &open.Int64
	}
	if err := f.Analysis.scanReadState(fields, confidence, warnings, user); err != nil {
		return nil, fmt.Errorf("scan file %s: its analysis: %w", f.ID, err)
	}
	f.Exports = []FileExport{}
	return &f, nil
}

// KnownFileIDs reports which of ids have a file record or are an export's
// ZIP; the file store's clean-up removes the bytes of the others.
func (db *DB) KnownFileIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	known := make(map[string]bool, len(ids))
	for start := 0; start < len(ids); start += 500 {
		batch := ids[start:min(start+500, len(ids))]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		// Not through the statement cache: one statement per batch length,
		// run once at start-up, would stay prepared for nothing.
		rows, err := db.read.QueryContext(ctx, `SELECT id FROM files WHERE id IN (`+placeholders(len(batch))+`)
			UNION ALL SELECT id FROM exports WHERE id IN (`+placeholders(len(batch))+`)`, append(args, args...)...)
		if err != nil {
			return nil, fmt.Errorf("known files: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("known files: %w", err)
			}
			known[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("known files: %w", err)
		}
	}
	return known, nil
}
