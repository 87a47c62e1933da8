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
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LabelIDs     []string
}

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
	sha256, document_date, created_at, updated_at`

// CreateFile records a file in the client's workspace. The task, folder and
// labels must be of that workspace. Returns ENOTFOUND naming the first
// reference that is not, and the workspace as its place: an upload need not
// name a task.
func (db *DB) CreateFile(ctx context.Context, clientID string, in FileCreate) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
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
			CreatedAt: now, UpdatedAt: now, LabelIDs: append([]string{}, in.LabelIDs...),
		}
		// In the order FindFile reads them back, without duplicates.
		slices.Sort(f.LabelIDs)
		f.LabelIDs = slices.Compact(f.LabelIDs)
		if in.DocumentDate != nil {
			f.DocumentDate = in.DocumentDate.UTC().Truncate(time.Second)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO files (`+fileColumns+`) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, clientID, f.WorkspaceID, f.TaskID, f.FolderID, f.Name, f.MimeType, f.Size, f.SHA256,
			unix(f.DocumentDate), unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create file: %w", err)
		}
		for _, id := range f.LabelIDs {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO file_labels (file_id, label_id) VALUES (?, ?)`, f.ID, id); err != nil {
				return nil, fmt.Errorf("label file: %w", err)
			}
		}
		return f, db.emit(ctx, tx, event{typ: EventFileCreated, clientID: &clientID, record: f})
	})
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

	var f File
	var task, folder, createdBy sql.NullString
	var document, created, updated int64
	err = tx.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE `+where, args...).Scan(
		&f.ID, &f.ClientID, &f.WorkspaceID, &task, &folder, &createdBy, &f.Name, &f.MimeType, &f.Size,
		&f.SHA256, &document, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "file %s not found", args[len(args)-1])
	}
	if err != nil {
		return nil, fmt.Errorf("find file: %w", err)
	}
	f.TaskID, f.FolderID, f.CreatedByID = nullString(task), nullString(folder), nullString(createdBy)
	f.DocumentDate, f.CreatedAt, f.UpdatedAt = fromUnix(document), fromUnix(created), fromUnix(updated)
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
	return &f, rows.Err()
}

// KnownFileIDs reports which of ids have a file record; the file store's
// clean-up removes the bytes of the others.
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
		rows, err := db.read.QueryContext(ctx, `SELECT id FROM files WHERE id IN (`+placeholders(len(batch))+`)`, args...)
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

// Settings names of the link-signing secrets.
const (
	linkSecret         = "link_signing_secret"
	previousLinkSecret = "link_signing_secret_previous"
)

// LinkSigningSecrets returns the current secret that signs download links and
// the one it replaced (nil before the first rotation). Returns ENOTFOUND
// before InitLinkSigningSecret.
func (db *DB) LinkSigningSecrets(ctx context.Context) (current, previous []byte, err error) {
	rows, err := db.query(ctx, `SELECT name, value FROM settings WHERE name IN (?, ?)`, linkSecret, previousLinkSecret)
	if err != nil {
		return nil, nil, fmt.Errorf("link signing secrets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var value []byte
		if err := rows.Scan(&name, &value); err != nil {
			return nil, nil, fmt.Errorf("link signing secrets: %w", err)
		}
		if name == linkSecret {
			current = value
		} else {
			previous = value
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("link signing secrets: %w", err)
	}
	if current == nil {
		return nil, nil, Errorf(ENOTFOUND, "no link signing secret")
	}
	return current, previous, nil
}

// InitLinkSigningSecret stores secret as the link-signing secret unless one
// exists.
func (db *DB) InitLinkSigningSecret(ctx context.Context, secret []byte) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, linkSecret, secret, unix(db.now()))
		if err != nil {
			return fmt.Errorf("init link signing secret: %w", err)
		}
		return nil
	})
}

// RotateLinkSigningSecret makes secret the current link-signing secret and
// keeps the current one as the previous, so that links it signed keep working
// until they expire. Returns ENOTFOUND before InitLinkSigningSecret.
func (db *DB) RotateLinkSigningSecret(ctx context.Context, secret []byte) error {
	return db.update(ctx, func(ctx context.Context, tx *txn) error {
		now := unix(db.now())
		res, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at)
			SELECT ?, value, ? FROM settings WHERE name = ?
			ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			previousLinkSecret, now, linkSecret)
		if err != nil {
			return fmt.Errorf("rotate link signing secret: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return fmt.Errorf("rotate link signing secret: %w", err)
			}
			return Errorf(ENOTFOUND, "no link signing secret to rotate")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE settings SET value = ?, updated_at = ? WHERE name = ?`, secret, now, linkSecret); err != nil {
			return fmt.Errorf("rotate link signing secret: %w", err)
		}
		return nil
	})
}
