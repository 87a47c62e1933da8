package db

import (
	"cmp"
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"acctapi/document"
)

// Statuses of a collect.
const (
	CollectOpen      = "OPEN"
	CollectSubmitted = "SUBMITTED"
	CollectClosed    = "CLOSED"
	CollectCancelled = "CANCELLED"
)

// Statuses of a collect item.
const (
	ItemPending  = "PENDING"
	ItemReceived = "RECEIVED"
	ItemRejected = "REJECTED"
)

// MaxCollectItems is how many items a collect may hold.
const MaxCollectItems = 50

// lastUsedEvery is how often a session's LastUsedAt is written: opening a
// page every few seconds need not write every time.
const lastUsedEvery = time.Minute

// Collect is a request for documents in a workspace of a client.
type Collect struct {
	ID          string
	ClientID    string
	WorkspaceID string
	TaskID      *string
	Title       string
	Message     *string
	DueDate     *time.Time
	Status      string
	Locale      string // "en" or "de"
	// Items are in the order they were given.
	Items       []*CollectItem
	CreatedAt   time.Time
	UpdatedAt   time.Time
	SubmittedAt *time.Time
}

// CollectItem is one document a collect asks for.
type CollectItem struct {
	ID              string
	CollectID       string
	Title           string
	Description     *string
	Required        bool
	FolderID        *string
	Status          string
	RejectionReason *string
	// Kind is the kind of document the item asks for (one of ItemKinds),
	// or nil for any.
	Kind *string
	// TransactionID is the bank transaction whose document the item asks
	// for: a file uploaded to it is confirmed for the transaction.
	TransactionID *string
	// FileIDs are the files uploaded to the item, oldest first.
	FileIDs []string
}

// ItemKinds are the kinds an item may ask for: every kind but "other",
// which says only that a document is none of them.
var ItemKinds = slices.DeleteFunc(slices.Clone(document.Kinds), func(k string) bool { return k == document.Other })

// KindMismatch says whether f looks like another kind than the item asks
// for: the item names a kind, and f's is known and another. A file of kind
// "other" is not a mismatch, as nothing says what it is instead.
func (it *CollectItem) KindMismatch(f *File) bool {
	return it.Kind != nil && f.Kind != nil && *f.Kind != document.Other && *f.Kind != *it.Kind
}

// CollectItemCreate holds the fields of a new item.
type CollectItemCreate struct {
	Title       string
	Description *string
	Required    bool
	FolderID    *string
	Kind        *string
	// TransactionID asks for the document of the client's transaction.
	TransactionID *string
}

// CollectCreate holds the fields of a new collect.
type CollectCreate struct {
	WorkspaceID string
	TaskID      *string
	Title       string
	Message     *string
	DueDate     *time.Time
	Locale      string // the firm's when ""
	Items       []CollectItemCreate
}

// CollectUpdate holds the fields a collect update may change.
type CollectUpdate struct {
	Title   Update[string]
	Message Update[string]
	DueDate Update[time.Time]
	// Status may be CollectOpen (which reopens a submitted collect),
	// CollectClosed or CollectCancelled.
	Status Update[string]
	// Locale is "en" or "de": the language of the page and the mails.
	Locale Update[string]
}

// CollectItemUpdate holds the fields an item update may change.
type CollectItemUpdate struct {
	Title       Update[string]
	Description Update[string]
	Required    Update[bool]
	FolderID    Update[string]
	Kind        Update[string]
	// Status may only be set to ItemRejected: an item is received by an
	// upload, never by hand.
	Status          Update[string]
	RejectionReason Update[string]
}

// CollectFilter narrows a collect list; empty fields do not filter.
type CollectFilter struct {
	WorkspaceID string
	TaskID      string
	Status      string
}

// CollectSorts are the sorts a collect list accepts.
var CollectSorts = []string{"createdAt", "updatedAt", "dueDate", "title"}

var collectSortKeys = map[string]sortKey{
	"createdAt": column("created_at"),
	"updatedAt": column("updated_at"),
	"dueDate":   {asc: "due_asc", desc: "due_desc"},
	"title":     column("title"),
}

// CollectSession is a link through which someone uploads a collect's
// documents. Its token is kept only as a hash and is never read back.
type CollectSession struct {
	ID         string
	CollectID  string
	ClientID   string
	Label      *string
	ExpiresAt  time.Time
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	// Email is where the link was mailed, or nil; Reminders says whether
	// that address gets the reminders.
	Email     *string
	Reminders bool
	// Mail is the state of the mail that carried the link; nil when none
	// was queued (no address, or mail off).
	Mail *SessionMailState
}

// CollectSessionCreate holds the fields of a new session; TokenHash is the
// SHA-256 of its token.
type CollectSessionCreate struct {
	Label     *string
	ExpiresAt time.Time
	TokenHash []byte
	// Mail names the address the link goes to; nil for a link handed out
	// by hand.
	Mail *SessionMail
}

// CollectView is what a session's token reaches: its collect, with the
// names of the firm and client asking and the files uploaded so far.
type CollectView struct {
	FirmName   string
	ClientName string
	Session    *CollectSession
	Collect    *Collect
	// Files holds every file of every item, by id.
	Files map[string]*File
	// SessionFiles and SessionBytes are what came through this link.
	SessionFiles int
	SessionBytes int64
}

// CollectBudget bounds the files uploads through links may add: through
// one link, and to one collect through all of its links.
type CollectBudget struct {
	LinkFiles    int
	LinkBytes    int64
	CollectFiles int
	CollectBytes int64
}

// DefaultCollectBudget is the budget of every link and collect: a month's
// receipts and statements fit many times over, a script filling the disk
// through one link does not.
var DefaultCollectBudget = CollectBudget{LinkFiles: 200, LinkBytes: 2 << 30, CollectFiles: 500, CollectBytes: 5 << 30}

// BudgetError refuses an upload past a link's or a collect's budget. It
// wraps an ESPENT *Error.
type BudgetError struct {
	// Link says that the link's budget is spent, else the collect's.
	Link  bool
	Files int
	Bytes int64
	err   *Error
}

func (e *BudgetError) Error() string { return e.err.Error() }

// Unwrap gives the ESPENT error.
func (e *BudgetError) Unwrap() error { return e.err }

// Check returns a *BudgetError when one more file of size bytes would pass
// b, given what the link and the collect hold.
func (b CollectBudget) Check(linkFiles int, linkBytes int64, collectFiles int, collectBytes int64, size int64) error {
	switch {
	case linkFiles+1 > b.LinkFiles || linkBytes+size > b.LinkBytes:
		return &BudgetError{Link: true, Files: b.LinkFiles, Bytes: b.LinkBytes, err: &Error{Code: ESPENT, Message: fmt.Sprintf(
			"this link has taken its %d files or %d bytes: no more can be uploaded through it; ask the sender for a new link if something is missing", b.LinkFiles, b.LinkBytes)}}
	case collectFiles+1 > b.CollectFiles || collectBytes+size > b.CollectBytes:
		return &BudgetError{Files: b.CollectFiles, Bytes: b.CollectBytes, err: &Error{Code: ESPENT, Message: fmt.Sprintf(
			"this request has taken its %d files or %d bytes: no more can be uploaded to it; ask the sender if something is missing", b.CollectFiles, b.CollectBytes)}}
	}
	return nil
}

// Spent checks one more file of size bytes against b.
func (v *CollectView) Spent(b CollectBudget, size int64) error {
	var bytes int64
	for _, f := range v.Files {
		bytes += f.Size
	}
	return b.Check(v.SessionFiles, v.SessionBytes, len(v.Files), bytes, size)
}

// CollectItemReceived is the record of a collect.item_received event: the
// collect as the upload left it, the item and the new file.
type CollectItemReceived struct {
	Collect *Collect
	ItemID  string
	FileID  string
}

// CollectItemFileRemoved is the record of a collect.item_file_removed
// event: the collect as the removal left it, the item and the file taken
// back.
type CollectItemFileRemoved struct {
	Collect *Collect
	ItemID  string
	FileID  string
}

// MissingItemsError is SubmitCollect's refusal of a collect whose required
// items are not all received. It wraps an EINVALID *Error naming the first
// such item (Field "Items" and its position).
type MissingItemsError struct {
	ItemIDs []string
	// Positions are the items' indexes in Collect.Items.
	Positions []int
	Titles    []string
}

func (e *MissingItemsError) Error() string {
	quoted := make([]string, len(e.Titles))
	for i, t := range e.Titles {
		quoted[i] = strconv.Quote(t)
	}
	return "these required items have no file yet: " + strings.Join(quoted, ", ")
}

// Unwrap gives the EINVALID error, so that ErrorCode and the HTTP layer's
// error path see the refusal as invalid input.
func (e *MissingItemsError) Unwrap() error {
	return &Error{Code: EINVALID, Message: e.Error(), Field: []any{"Items", e.Positions[0]}}
}

const collectColumns = `id, client_id, workspace_id, task_id, title, message, due_date, status, locale,
	created_at, updated_at, submitted_at`

const collectItemColumns = `id, collect_id, title, description, required, folder_id, status, rejection_reason, kind, transaction_id`

const collectSessionColumns = `id, collect_id, client_id, label, expires_at, created_at, revoked_at, last_used_at,
	email, reminders`

// itemFolder is how an item's folder is looked for: in the collect's workspace.
func itemFolder(field ...any) inWorkspace {
	return inWorkspace{"folders", "folder", "the collect's workspace", field}
}

// CreateCollect creates a collect with its items in a workspace of the
// client. Returns ENOTFOUND for a workspace that is not the client's, or a
// task or item folder not in that workspace, and EINVALID for a locale other
// than "en" or "de", or no items or more than MaxCollectItems.
func (db *DB) CreateCollect(ctx context.Context, clientID string, in CollectCreate) (*Collect, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Collect, error) {
		if err := findWorkspace(ctx, tx, clientID, in.WorkspaceID); err != nil {
			return nil, withField(err, "WorkspaceID")
		}
		if in.TaskID != nil {
			if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, *in.TaskID,
				inWorkspace{"tasks", "task", "the workspace", []any{"TaskID"}}); err != nil {
				return nil, err
			}
		}
		locale := in.Locale
		if locale == "" {
			if err := tx.QueryRowContext(ctx, `SELECT f.locale FROM clients c JOIN firms f ON f.id = c.firm_id
				WHERE c.id = ?`, clientID).Scan(&locale); err != nil {
				return nil, fmt.Errorf("create collect: %w", err)
			}
		}
		if locale != "en" && locale != "de" {
			return nil, &Error{Code: EINVALID, Field: []any{"Locale"}, Message: "locale must be en or de, not " + strconv.Quote(locale)}
		}
		if len(in.Items) == 0 || len(in.Items) > MaxCollectItems {
			return nil, &Error{Code: EINVALID, Field: []any{"Items"},
				Message: fmt.Sprintf("a collect holds 1 to %d items, not %d", MaxCollectItems, len(in.Items))}
		}
		for i, it := range in.Items {
			if it.FolderID != nil {
				if err := findInWorkspace(ctx, tx, clientID, in.WorkspaceID, *it.FolderID, itemFolder("Items", i, "FolderID")); err != nil {
					return nil, err
				}
			}
			if it.TransactionID != nil {
				if err := findTransactionRow(ctx, tx, clientID, *it.TransactionID); err != nil {
					return nil, withField(err, "Items", i, "TransactionID")
				}
			}
		}
		now := db.now().UTC().Truncate(time.Second)
		c := &Collect{
			ID: NewID(), ClientID: clientID, WorkspaceID: in.WorkspaceID, TaskID: in.TaskID, Title: in.Title,
			Message: in.Message, DueDate: truncate(in.DueDate), Status: CollectOpen, Locale: locale,
			Items: []*CollectItem{}, CreatedAt: now, UpdatedAt: now,
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO collects (`+collectColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
			c.ID, clientID, c.WorkspaceID, c.TaskID, c.Title, c.Message, unixPtr(c.DueDate), c.Status, c.Locale,
			unix(now), unix(now)); err != nil {
			return nil, fmt.Errorf("create collect: %w", err)
		}
		for i, it := range in.Items {
			item, err := insertCollectItem(ctx, tx, c, i, it, now)
			if err != nil {
				return nil, err
			}
			c.Items = append(c.Items, item)
		}
		return c, db.emit(ctx, tx, event{typ: EventCollectCreated, clientID: &clientID, record: c})
	})
}

// insertCollectItem inserts an item of c at position.
func insertCollectItem(ctx context.Context, tx *txn, c *Collect, position int, in CollectItemCreate, now time.Time) (*CollectItem, error) {
	item := &CollectItem{
		ID: NewID(), CollectID: c.ID, Title: in.Title, Description: in.Description, Required: in.Required,
		FolderID: in.FolderID, Status: ItemPending, Kind: in.Kind, TransactionID: in.TransactionID, FileIDs: []string{},
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO collect_items (id, client_id, collect_id, position, title, description,
		required, folder_id, status, rejection_reason, kind, transaction_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
		item.ID, c.ClientID, c.ID, position, item.Title, item.Description, item.Required, item.FolderID, item.Status,
		item.Kind, item.TransactionID, unix(now), unix(now)); err != nil {
		return nil, fmt.Errorf("create collect item: %w", err)
	}
	return item, nil
}

// FindCollect returns the client's collect. Returns ENOTFOUND, for a deleted
// collect too.
func (db *DB) FindCollect(ctx context.Context, clientID, id string) (*Collect, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return findCollect(ctx, tx, clientID, id)
}

// findCollect returns the client's live collect with its items.
func findCollect(ctx context.Context, tx *txn, clientID, id string) (*Collect, error) {
	c, err := scanCollect(tx.QueryRowContext(ctx, `SELECT `+collectColumns+` FROM collects
		WHERE client_id = ? AND id = ? AND deleted_at IS NULL`, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "collect %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	if err := loadCollectItems(ctx, tx, clientID, []*Collect{c}); err != nil {
		return nil, err
	}
	return c, nil
}

// loadCollectItems fills the items, with their files, of the client's
// collects.
func loadCollectItems(ctx context.Context, tx *txn, clientID string, collects []*Collect) error {
	if len(collects) == 0 {
		return nil
	}
	byID := make(map[string]*Collect, len(collects))
	args := []any{clientID}
	for _, c := range collects {
		c.Items = []*CollectItem{}
		byID[c.ID] = c
		args = append(args, c.ID)
	}
	in := placeholders(len(collects))
	rows, err := tx.QueryContext(ctx, `SELECT `+collectItemColumns+` FROM collect_items
		WHERE client_id = ? AND collect_id IN (`+in+`) ORDER BY collect_id, position`, args...)
	if err != nil {
		return fmt.Errorf("collect items: %w", err)
	}
	defer rows.Close()
	items := map[string]*CollectItem{}
	for rows.Next() {
		var it CollectItem
		var description, folder, reason, kind, transaction sql.NullString
		if err := rows.Scan(&it.ID, &it.CollectID, &it.Title, &description, &it.Required, &folder, &it.Status, &reason, &kind,
			&transaction); err != nil {
			return fmt.Errorf("scan collect item: %w", err)
		}
		it.Description, it.FolderID, it.RejectionReason = nullString(description), nullString(folder), nullString(reason)
		it.Kind, it.TransactionID = nullString(kind), nullString(transaction)
		it.FileIDs = []string{}
		items[it.ID] = &it
		byID[it.CollectID].Items = append(byID[it.CollectID].Items, &it)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("collect items: %w", err)
	}

	files, err := tx.QueryContext(ctx, `SELECT item_id, file_id FROM collect_item_files
		WHERE client_id = ? AND collect_id IN (`+in+`) ORDER BY seq`, args...)
	if err != nil {
		return fmt.Errorf("collect item files: %w", err)
	}
	defer files.Close()
	for files.Next() {
		var itemID, fileID string
		if err := files.Scan(&itemID, &fileID); err != nil {
			return fmt.Errorf("scan collect item file: %w", err)
		}
		items[itemID].FileIDs = append(items[itemID].FileIDs, fileID)
	}
	if err := files.Err(); err != nil {
		return fmt.Errorf("collect item files: %w", err)
	}
	return nil
}

// scanCollect reads a row of collectColumns; Items are left to
// loadCollectItems.
func scanCollect(row scanner) (*Collect, error) {
	var c Collect
	var task, message sql.NullString
	var due, submitted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.ClientID, &c.WorkspaceID, &task, &c.Title, &message, &due, &c.Status, &c.Locale,
		&created, &updated, &submitted); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan collect: %w", err)
	}
	c.TaskID, c.Message = nullString(task), nullString(message)
	c.DueDate, c.SubmittedAt = nullTime(due), nullTime(submitted)
	c.CreatedAt, c.UpdatedAt = fromUnix(created), fromUnix(updated)
	return &c, nil
}

// ListCollects returns a page of the client's collects, each with its items.
func (db *DB) ListCollects(ctx context.Context, clientID string, f CollectFilter, req PageRequest) (*Page[*Collect], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	// The tenant holds deleted collects too, so that a cursor naming one
	// still finds its place; the filter leaves them out of the page.
	filters := []condition{{"deleted_at IS NULL", nil}}
	if f.WorkspaceID != "" {
		filters = append(filters, condition{"workspace_id = ?", []any{f.WorkspaceID}})
	}
	if f.TaskID != "" {
		filters = append(filters, condition{"task_id = ?", []any{f.TaskID}})
	}
	if f.Status != "" {
		filters = append(filters, condition{"status = ?", []any{f.Status}})
	}
	page, err := paginate(ctx, tx, list{
		table:   "collects",
		columns: collectColumns,
		tenant:  condition{"client_id = ?", []any{clientID}},
		filters: filters,
		sorts:   collectSortKeys,
	}, req, func(s scanner) (*Collect, string, error) {
		c, err := scanCollect(s)
		if err != nil {
			return nil, "", err
		}
		return c, c.ID, nil
	})
	if err != nil {
		return nil, err
	}
	if err := loadCollectItems(ctx, tx, clientID, page.Items); err != nil {
		return nil, err
	}
	return page, nil
}

// UpdateCollect changes the fields of the client's collect that u sets.
// Setting Status to CollectOpen clears SubmittedAt. Returns ENOTFOUND, and
// EINVALID for a null title, status or locale, a status other than
// CollectOpen, CollectClosed and CollectCancelled, or a locale other than en
// and de.
func (db *DB) UpdateCollect(ctx context.Context, clientID, id string, u CollectUpdate) (*Collect, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Collect, error) {
		c, err := findCollect(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("Title", "title", u.Title), notNull("Status", "status", u.Status), notNull("Locale", "locale", u.Locale)); err != nil {
			return nil, err
		}
		if u.Locale.Set && *u.Locale.Value != "en" && *u.Locale.Value != "de" {
			return nil, &Error{Code: EINVALID, Field: []any{"Locale"}, Message: "locale must be en or de, not " + strconv.Quote(*u.Locale.Value)}
		}
		if u.Status.Set {
			switch *u.Status.Value {
			case CollectOpen:
				c.SubmittedAt = nil
			case CollectClosed, CollectCancelled:
			default:
				return nil, &Error{Code: EINVALID, Field: []any{"Status"},
					Message: "status must be OPEN, CLOSED or CANCELLED, not " + strconv.Quote(*u.Status.Value)}
			}
		}
		apply(u.Title, func(v *string) { c.Title = *v })
		apply(u.Message, func(v *string) { c.Message = v })
		apply(u.DueDate, func(v *time.Time) { c.DueDate = truncate(v) })
		apply(u.Status, func(v *string) { c.Status = *v })
		apply(u.Locale, func(v *string) { c.Locale = *v })
		c.UpdatedAt = db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE collects SET title = ?, message = ?, due_date = ?, status = ?, locale = ?,
			submitted_at = ?, updated_at = ? WHERE client_id = ? AND id = ?`,
			c.Title, c.Message, unixPtr(c.DueDate), c.Status, c.Locale, unixPtr(c.SubmittedAt), unix(c.UpdatedAt), clientID, id); err != nil {
			return nil, fmt.Errorf("update collect: %w", err)
		}
		return c, db.emit(ctx, tx, event{typ: EventCollectUpdated, clientID: &clientID, record: c, changes: u.fields()})
	})
}

// fields names the fields u sets.
func (u CollectUpdate) fields() []string {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{{u.Title.Set, "Title"}, {u.Message.Set, "Message"}, {u.DueDate.Set, "DueDate"}, {u.Status.Set, "Status"}, {u.Locale.Set, "Locale"}} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// DeleteCollect deletes the client's collect and returns it as it was. Its
// sessions stop working; the files uploaded to it stay. Returns ENOTFOUND.
func (db *DB) DeleteCollect(ctx context.Context, clientID, id string) (*Collect, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Collect, error) {
		c, err := findCollect(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE collects SET deleted_at = ? WHERE client_id = ? AND id = ?`,
			unix(now), clientID, id); err != nil {
			return nil, fmt.Errorf("delete collect: %w", err)
		}
		return c, nil
	})
}

// AddCollectItem adds an item at the end of the client's collect. Returns
// ENOTFOUND for the collect, or a folder not in its workspace, and EINVALID
// (Field "Items") when the collect holds MaxCollectItems already.
func (db *DB) AddCollectItem(ctx context.Context, clientID, collectID string, in CollectItemCreate) (*Collect, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Collect, error) {
		c, err := findCollect(ctx, tx, clientID, collectID)
		if err != nil {
			return nil, err
		}
		if len(c.Items) >= MaxCollectItems {
			return nil, &Error{Code: EINVALID, Field: []any{"Items"},
				Message: fmt.Sprintf("the collect holds %d items already, the most it may", MaxCollectItems)}
		}
		if in.FolderID != nil {
			if err := findInWorkspace(ctx, tx, clientID, c.WorkspaceID, *in.FolderID, itemFolder("FolderID")); err != nil {
				return nil, err
			}
		}
		if in.TransactionID != nil {
			if err := findTransactionRow(ctx, tx, clientID, *in.TransactionID); err != nil {
				return nil, withField(err, "TransactionID")
			}
		}
		var position int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(position) + 1, 0) FROM collect_items
			WHERE client_id = ? AND collect_id = ?`, clientID, collectID).Scan(&position); err != nil {
			return nil, fmt.Errorf("add collect item: %w", err)
		}
		now := db.now().UTC().Truncate(time.Second)
		item, err := insertCollectItem(ctx, tx, c, position, in, now)
		if err != nil {
			return nil, err
		}
		c.Items = append(c.Items, item)
		if err := touchCollect(ctx, tx, c, now); err != nil {
			return nil, err
		}
		return c, db.emit(ctx, tx, event{typ: EventCollectUpdated, clientID: &clientID, record: c, changes: []string{"Items"}})
	})
}

// item returns c's item itemID, or ENOTFOUND (Field "ItemID") naming
// where it was looked for.
func (c *Collect) item(itemID, where string) (*CollectItem, error) {
	for _, it := range c.Items {
		if it.ID == itemID {
			return it, nil
		}
	}
	return nil, &Error{Code: ENOTFOUND, Field: []any{"ItemID"}, Message: "item " + itemID + " not found in " + where}
}

// touchCollect records that c changed at now.
func touchCollect(ctx context.Context, tx *txn, c *Collect, now time.Time) error {
	c.UpdatedAt = now
	if _, err := tx.ExecContext(ctx, `UPDATE collects SET updated_at = ? WHERE client_id = ? AND id = ?`,
		unix(now), c.ClientID, c.ID); err != nil {
		return fmt.Errorf("update collect: %w", err)
	}
	return nil
}

// UpdateCollectItem changes the fields of an item of the client's collect
// that u sets. Returns ENOTFOUND for the collect, the item (Field "ItemID")
// or a folder not in the collect's workspace, and EINVALID for a null title
// or required, a status other than ItemRejected, or a rejection reason on an
// item that is not rejected.
func (db *DB) UpdateCollectItem(ctx context.Context, clientID, collectID, itemID string, u CollectItemUpdate) (*Collect, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*Collect, error) {
		c, err := findCollect(ctx, tx, clientID, collectID)
		if err != nil {
			return nil, err
		}
		it, err := c.item(itemID, "the collect")
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("Title", "title", u.Title), notNull("Required", "required", u.Required),
			notNull("Status", "status", u.Status)); err != nil {
			return nil, err
		}
		if u.Status.Set && *u.Status.Value != ItemRejected {
			return nil, &Error{Code: EINVALID, Field: []any{"Status"},
				Message: "an item's status may only be set to REJECTED, not " + strconv.Quote(*u.Status.Value)}
		}
		if u.RejectionReason.Set && u.RejectionReason.Value != nil && !u.Status.Set && it.Status != ItemRejected {
			return nil, &Error{Code: EINVALID, Field: []any{"RejectionReason"},
				Message: "only a rejected item has a rejection reason: set status REJECTED with it"}
		}
		if u.FolderID.Set && u.FolderID.Value != nil {
			if err := findInWorkspace(ctx, tx, clientID, c.WorkspaceID, *u.FolderID.Value, itemFolder("FolderID")); err != nil {
				return nil, err
			}
		}
		apply(u.Title, func(v *string) { it.Title = *v })
		apply(u.Description, func(v *string) { it.Description = v })
		apply(u.Required, func(v *bool) { it.Required = *v })
		apply(u.FolderID, func(v *string) { it.FolderID = v })
		apply(u.Kind, func(v *string) { it.Kind = v })
		apply(u.Status, func(v *string) { it.Status = *v })
		apply(u.RejectionReason, func(v *string) { it.RejectionReason = v })
		now := db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE collect_items SET title = ?, description = ?, required = ?, folder_id = ?,
			kind = ?, status = ?, rejection_reason = ?, updated_at = ? WHERE client_id = ? AND collect_id = ? AND id = ?`,
			it.Title, it.Description, it.Required, it.FolderID, it.Kind, it.Status, it.RejectionReason, unix(now),
			clientID, collectID, itemID); err != nil {
			return nil, fmt.Errorf("update collect item: %w", err)
		}
		if err := touchCollect(ctx, tx, c, now); err != nil {
			return nil, err
		}
		return c, db.emit(ctx, tx, event{typ: EventCollectUpdated, clientID: &clientID, record: c, changes: []string{"Items"}})
	})
}

// CreateCollectSession creates a link to the client's collect. Returns
// ENOTFOUND.
func (db *DB) CreateCollectSession(ctx context.Context, clientID, collectID string, in CollectSessionCreate) (*CollectSession, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*CollectSession, error) {
		if err := findCollectRow(ctx, tx, clientID, collectID); err != nil {
			return nil, err
		}
		if len(in.TokenHash) != 32 {
			return nil, fmt.Errorf("create collect session: a token hash has 32 bytes, not %d", len(in.TokenHash))
		}
		now := db.now().UTC().Truncate(time.Second)
		s := &CollectSession{ID: NewID(), CollectID: collectID, ClientID: clientID, Label: in.Label,
			ExpiresAt: in.ExpiresAt.UTC().Truncate(time.Second), CreatedAt: now}
		if _, err := tx.ExecContext(ctx, `INSERT INTO collect_sessions (id, client_id, collect_id, token_hash, label,
			expires_at, revoked_at, last_used_at, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
			s.ID, clientID, collectID, in.TokenHash, s.Label, unix(s.ExpiresAt), unix(now)); err != nil {
			return nil, fmt.Errorf("create collect session: %w", err)
		}
		return s, db.queueSessionMail(ctx, tx, s, in.Mail)
	})
}

// findCollectRow checks that the live collect is the client's.
func findCollectRow(ctx context.Context, q querier, clientID, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM collects WHERE client_id = ? AND id = ? AND deleted_at IS NULL`,
		clientID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "collect %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("find collect: %w", err)
	}
	return nil
}

// ListCollectSessions returns a page of the sessions of the client's
// collect, revoked and expired ones included. Returns ENOTFOUND.
func (db *DB) ListCollectSessions(ctx context.Context, clientID, collectID string, req PageRequest) (*Page[*CollectSession], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := findCollectRow(ctx, tx, clientID, collectID); err != nil {
		return nil, err
	}
	page, err := paginate(ctx, tx, list{
		table:   "collect_sessions",
		columns: collectSessionColumns,
		tenant:  condition{"client_id = ? AND collect_id = ?", []any{clientID, collectID}},
		sorts:   map[string]sortKey{"createdAt": column("created_at")},
	}, req, func(s scanner) (*CollectSession, string, error) {
		cs, err := scanCollectSession(s)
		if err != nil {
			return nil, "", err
		}
		return cs, cs.ID, nil
	})
	if err != nil {
		return nil, err
	}
	return page, addSessionMail(ctx, tx, clientID, page.Items)
}

// RevokeCollectSession revokes a session of the client's collect and
// returns it; revoking it again changes nothing. Returns ENOTFOUND.
func (db *DB) RevokeCollectSession(ctx context.Context, clientID, collectID, sessionID string) (*CollectSession, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*CollectSession, error) {
		if err := findCollectRow(ctx, tx, clientID, collectID); err != nil {
			return nil, err
		}
		now := db.now().UTC().Truncate(time.Second)
		s, err := scanCollectSession(tx.QueryRowContext(ctx, `UPDATE collect_sessions SET revoked_at = coalesce(revoked_at, ?)
			WHERE client_id = ? AND collect_id = ? AND id = ? RETURNING `+collectSessionColumns,
			unix(now), clientID, collectID, sessionID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &Error{Code: ENOTFOUND, Field: []any{"SessionID"}, Message: "collect session " + sessionID + " not found"}
		}
		return s, err
	})
}

func scanCollectSession(row scanner) (*CollectSession, error) {
	var s CollectSession
	var label, email sql.NullString
	var expires, created int64
	var revoked, used sql.NullInt64
	if err := row.Scan(&s.ID, &s.CollectID, &s.ClientID, &label, &expires, &created, &revoked, &used,
		&email, &s.Reminders); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("scan collect session: %w", err)
	}
	s.Label, s.Email = nullString(label), nullString(email)
	s.ExpiresAt, s.CreatedAt = fromUnix(expires), fromUnix(created)
	s.RevokedAt, s.LastUsedAt = nullTime(revoked), nullTime(used)
	return &s, nil
}

// errNoSession answers every token that reaches nothing, in the same words
// whether or not it ever did.
var errNoSession = &Error{Code: ENOTFOUND, Message: "this collect link does not exist or no longer works"}

// openSession finds the live session of a token hash and its collect, in the
// caller's transaction. Returns ENOTFOUND for an unknown hash, a revoked
// session or a deleted collect, and EEXPIRED for an expired session or a
// closed or cancelled collect.
func openSession(ctx context.Context, tx *txn, tokenHash []byte, now time.Time) (*CollectSession, *Collect, error) {
	if len(tokenHash) != 32 {
		return nil, nil, errNoSession
	}
	// The token's hash is the only key: no tenant is known before it.
	var stored []byte
	row := tx.QueryRowContext(ctx, `SELECT `+collectSessionColumns+`, token_hash FROM collect_sessions WHERE token_hash = ?`, tokenHash)
	s, err := scanCollectSession(scanFunc(func(dest ...any) error { return row.Scan(append(dest, &stored)...) }))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, errNoSession
	}
	if err != nil {
		return nil, nil, err
	}
	if subtle.ConstantTimeCompare(stored, tokenHash) != 1 || s.RevokedAt != nil {
		return nil, nil, errNoSession
	}
	c, err := findCollect(ctx, tx, s.ClientID, s.CollectID)
	if ErrorCode(err) == ENOTFOUND {
		return nil, nil, errNoSession
	}
	if err != nil {
		return nil, nil, err
	}
	var expired *Error
	switch {
	case !s.ExpiresAt.After(now):
		expired = &Error{Code: EEXPIRED, Message: "this collect link has expired: ask the firm for a new one"}
	case c.Status == CollectClosed || c.Status == CollectCancelled:
		expired = &Error{Code: EEXPIRED, Message: "this request for documents is closed: ask the firm for a new link if something is missing"}
	default:
		return s, c, nil
	}
	e := &ExpiredError{Locale: c.Locale, err: expired}
	if err := tx.QueryRowContext(ctx, `SELECT f.name FROM clients c JOIN firms f ON f.id = c.firm_id
		WHERE c.id = ?`, s.ClientID).Scan(&e.FirmName); err != nil {
		return nil, nil, fmt.Errorf("expired link's firm: %w", err)
	}
	return nil, nil, e
}

// ExpiredError refuses a link that expired, or whose collect is closed or
// cancelled. It names the firm and the collect's language, both shown to the
// link's holder before, so that the page can say whom to ask for a new link.
// It wraps an EEXPIRED *Error.
type ExpiredError struct {
	FirmName, Locale string
	err              *Error
}

func (e *ExpiredError) Error() string { return e.err.Error() }

// Unwrap gives the EEXPIRED error, which ErrorCode and the HTTP layer see.
func (e *ExpiredError) Unwrap() error { return e.err }

// scanFunc is a function as a scanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// collectViewFilesSQL reads the files of a collect's items. The unary plus
// keeps the planner from walking all the client's files by one of their
// client_id indexes: the collect's few are found by id.
const collectViewFilesSQL = `SELECT ` + fileColumns + ` FROM files WHERE +client_id = ? AND id IN
	(SELECT file_id FROM collect_item_files WHERE client_id = ? AND collect_id = ?)`

// collectView reads what a session reaches, in the caller's transaction.
func collectView(ctx context.Context, tx *txn, s *CollectSession, c *Collect) (*CollectView, error) {
	v := &CollectView{Session: s, Collect: c, Files: map[string]*File{}}
	if err := tx.QueryRowContext(ctx, `SELECT f.name, c.name FROM clients c JOIN firms f ON f.id = c.firm_id
		WHERE c.id = ?`, c.ClientID).Scan(&v.FirmName, &v.ClientName); err != nil {
		return nil, fmt.Errorf("collect view names: %w", err)
	}
	rows, err := tx.QueryContext(ctx, collectViewFilesSQL, c.ClientID, c.ClientID, c.ID)
	if err != nil {
		return nil, fmt.Errorf("collect view files: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		f.LabelIDs = []string{}
		v.Files[f.ID] = f
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("collect view files: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(f.size), 0) FROM collect_item_files i
		JOIN files f ON f.id = i.file_id WHERE i.client_id = ? AND i.session_id = ?`, c.ClientID, s.ID).
		Scan(&v.SessionFiles, &v.SessionBytes); err != nil {
		return nil, fmt.Errorf("collect view session files: %w", err)
	}
	labels, err := tx.QueryContext(ctx, `SELECT l.file_id, l.label_id FROM file_labels l
		JOIN collect_item_files i ON i.file_id = l.file_id WHERE i.client_id = ? AND i.collect_id = ?
		ORDER BY l.label_id`, c.ClientID, c.ID)
	if err != nil {
		return nil, fmt.Errorf("collect view labels: %w", err)
	}
	defer labels.Close()
	for labels.Next() {
		var fileID, labelID string
		if err := labels.Scan(&fileID, &labelID); err != nil {
			return nil, fmt.Errorf("collect view labels: %w", err)
		}
		if f := v.Files[fileID]; f != nil {
			f.LabelIDs = append(f.LabelIDs, labelID)
		}
	}
	if err := labels.Err(); err != nil {
		return nil, fmt.Errorf("collect view labels: %w", err)
	}
	return v, nil
}

// OpenCollectSession returns what the session of a token hash reaches, and
// records its use (at most once a minute). Returns ENOTFOUND for an unknown
// hash, a revoked session or a deleted collect, and EEXPIRED for an expired
// session or a closed or cancelled collect.
func (db *DB) OpenCollectSession(ctx context.Context, tokenHash []byte) (*CollectView, error) {
	view, err := db.readCollectView(ctx, tokenHash)
	if err != nil {
		return nil, err
	}
	now := db.now().UTC().Truncate(time.Second)
	if used := view.Session.LastUsedAt; used != nil && now.Sub(*used) < lastUsedEvery {
		return view, nil
	}
	// The use is recorded only while the link still works; the view read
	// above serves as it is, so its files are not read a second time.
	err = db.update(ctx, func(ctx context.Context, tx *txn) error {
		s, _, err := openSession(ctx, tx, tokenHash, now)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE collect_sessions SET last_used_at = ? WHERE client_id = ? AND id = ?`,
			unix(now), s.ClientID, s.ID); err != nil {
			return fmt.Errorf("record collect session use: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	view.Session.LastUsedAt = &now
	return view, nil
}

// readCollectView is what the session of a token hash reaches, read from
// one snapshot.
func (db *DB) readCollectView(ctx context.Context, tokenHash []byte) (*CollectView, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	s, c, err := openSession(ctx, tx, tokenHash, db.now().UTC().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	return collectView(ctx, tx, s, c)
}

// ReceiveCollectFile records a file uploaded through the session of a token
// hash to one item, its bytes already in place: an ordinary file of the
// collect's workspace, with the collect's task and the item's folder and no
// creator. The item becomes RECEIVED, its rejection reason cleared. Emits
// file.created, then collect.item_received. in's ID, Name, MimeType, Size,
// SHA256 and DocumentDate are used; the file's place comes from the collect.
// Returns what openSession does, ECONFLICT for a submitted collect, a
// *BudgetError (ESPENT) past budget, and ENOTFOUND (Field "ItemID") for an
// item not of the collect.
func (db *DB) ReceiveCollectFile(ctx context.Context, tokenHash []byte, itemID string, in FileCreate, budget CollectBudget) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
		now := db.now().UTC().Truncate(time.Second)
		s, c, err := openSession(ctx, tx, tokenHash, now)
		if err != nil {
			return nil, err
		}
		if c.Status == CollectSubmitted {
			return nil, errSubmitted
		}
		var linkFiles, collectFiles int
		var linkBytes, collectBytes int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(f.size), 0),
			count(*) FILTER (WHERE i.session_id = ?3), coalesce(sum(f.size) FILTER (WHERE i.session_id = ?3), 0)
			FROM collect_item_files i JOIN files f ON f.id = i.file_id WHERE i.client_id = ?1 AND i.collect_id = ?2`,
			c.ClientID, c.ID, s.ID).Scan(&collectFiles, &collectBytes, &linkFiles, &linkBytes); err != nil {
			return nil, fmt.Errorf("collect budget: %w", err)
		}
		if err := budget.Check(linkFiles, linkBytes, collectFiles, collectBytes, in.Size); err != nil {
			return nil, err
		}
		it, err := c.item(itemID, "this request")
		if err != nil {
			return nil, err
		}
		f, err := db.createFile(ctx, tx, c.ClientID, FileCreate{
			ID: in.ID, WorkspaceID: c.WorkspaceID, TaskID: c.TaskID, FolderID: it.FolderID, Name: in.Name,
			MimeType: in.MimeType, Size: in.Size, SHA256: in.SHA256, DocumentDate: in.DocumentDate,
		})
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO collect_item_files (client_id, collect_id, item_id, file_id, session_id)
			VALUES (?, ?, ?, ?, ?)`, c.ClientID, c.ID, it.ID, f.ID, s.ID); err != nil {
			return nil, fmt.Errorf("link collect file: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE collect_items SET status = ?, rejection_reason = NULL, updated_at = ?
			WHERE client_id = ? AND collect_id = ? AND id = ?`, ItemReceived, unix(now), c.ClientID, c.ID, it.ID); err != nil {
			return nil, fmt.Errorf("receive collect item: %w", err)
		}
		it.Status, it.RejectionReason, it.FileIDs = ItemReceived, nil, append(it.FileIDs, f.ID)
		if err := touchCollect(ctx, tx, c, now); err != nil {
			return nil, err
		}
		if it.TransactionID != nil {
			if err := db.confirmCollected(ctx, tx, c.ClientID, *it.TransactionID, f.ID, now); err != nil {
				return nil, err
			}
		}
		return f, db.emit(ctx, tx, event{typ: EventCollectItemReceived, clientID: &c.ClientID,
			record: &CollectItemReceived{Collect: c, ItemID: it.ID, FileID: f.ID}})
	})
}

// RemoveCollectFile takes a file back from an item of the collect of a
// token hash's session, for the uploader: the file loses its link to the
// item and stays a file of the workspace, for the firm. An item left
// without files goes back to PENDING (one asked again stays REJECTED).
// Emits collect.item_file_removed and returns the view. Returns what
// openSession does, ECONFLICT for a submitted collect, and ENOTFOUND for an
// item not of the collect (Field "ItemID") or a file not uploaded for it
// (Field "FileID").
func (db *DB) RemoveCollectFile(ctx context.Context, tokenHash []byte, itemID, fileID string) (*CollectView, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*CollectView, error) {
		now := db.now().UTC().Truncate(time.Second)
		s, c, err := openSession(ctx, tx, tokenHash, now)
		if err != nil {
			return nil, err
		}
		if c.Status == CollectSubmitted {
			return nil, errSubmitted
		}
		it, err := c.item(itemID, "this request")
		if err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM collect_item_files WHERE client_id = ? AND collect_id = ? AND item_id = ? AND file_id = ?`,
			c.ClientID, c.ID, it.ID, fileID)
		if err != nil {
			return nil, fmt.Errorf("remove collect file: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("remove collect file: %w", err)
		}
		if n == 0 {
			return nil, &Error{Code: ENOTFOUND, Field: []any{"FileID"}, Message: "file " + fileID + " was not uploaded for this item"}
		}
		it.FileIDs = slices.DeleteFunc(it.FileIDs, func(id string) bool { return id == fileID })
		if len(it.FileIDs) == 0 && it.Status == ItemReceived {
			it.Status = ItemPending
			if _, err := tx.ExecContext(ctx, `UPDATE collect_items SET status = ?, updated_at = ?
				WHERE client_id = ? AND collect_id = ? AND id = ?`, ItemPending, unix(now), c.ClientID, c.ID, it.ID); err != nil {
				return nil, fmt.Errorf("remove collect file: %w", err)
			}
		}
		if err := touchCollect(ctx, tx, c, now); err != nil {
			return nil, err
		}
		if it.TransactionID != nil {
			if err := db.dropCollected(ctx, tx, c.ClientID, *it.TransactionID, fileID, now); err != nil {
				return nil, err
			}
		}
		if err := db.emit(ctx, tx, event{typ: EventCollectItemFileRemoved, clientID: &c.ClientID,
			record: &CollectItemFileRemoved{Collect: c, ItemID: it.ID, FileID: fileID}}); err != nil {
			return nil, err
		}
		return collectView(ctx, tx, s, c)
	})
}

var errSubmitted = &Error{Code: ECONFLICT,
	Message: "this request for documents was submitted already: ask the firm to reopen it to add more"}

// SubmitCollect marks the collect of a token hash's session submitted and
// returns its view. Emits collect.submitted. Returns what openSession does,
// ECONFLICT for a collect submitted already, and a *MissingItemsError
// (EINVALID) when a required item is not received.
func (db *DB) SubmitCollect(ctx context.Context, tokenHash []byte) (*CollectView, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*CollectView, error) {
		now := db.now().UTC().Truncate(time.Second)
		s, c, err := openSession(ctx, tx, tokenHash, now)
		if err != nil {
			return nil, err
		}
		if c.Status == CollectSubmitted {
			return nil, errSubmitted
		}
		var missing MissingItemsError
		for i, it := range c.Items {
			if it.Required && it.Status != ItemReceived {
				missing.ItemIDs = append(missing.ItemIDs, it.ID)
				missing.Positions = append(missing.Positions, i)
				missing.Titles = append(missing.Titles, it.Title)
			}
		}
		if len(missing.ItemIDs) > 0 {
			return nil, &missing
		}
		c.Status, c.SubmittedAt, c.UpdatedAt = CollectSubmitted, &now, now
		if _, err := tx.ExecContext(ctx, `UPDATE collects SET status = ?, submitted_at = ?, updated_at = ?
			WHERE client_id = ? AND id = ?`, c.Status, unix(now), unix(now), c.ClientID, c.ID); err != nil {
			return nil, fmt.Errorf("submit collect: %w", err)
		}
		if err := db.emit(ctx, tx, event{typ: EventCollectSubmitted, clientID: &c.ClientID, record: c}); err != nil {
			return nil, err
		}
		return collectView(ctx, tx, s, c)
	})
}
