package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"acctapi/document"
)

// The states of a file's analysis.
const (
	AnalysisPending = "pending" // queued, or being read
	AnalysisDone    = "done"
	AnalysisFailed  = "failed"  // the file could not be read; Reason says why
	AnalysisSkipped = "skipped" // nothing here reads this kind of file; Reason says why
)

// Who set a file's kind or document date.
const (
	SourceUser     = "user"
	SourceAnalysis = "analysis"
)

// Where an analysis read a file's text from.
const (
	TextFromEInvoice = "einvoice" // the structured XML of an e-invoice
	TextFromPDF      = "text"     // the PDF's own text, or a text file
	TextFromOCR      = "ocr"
)

// Analysis is what reading a file found.
type Analysis struct {
	Status     string
	Source     *string
	Reason     *string
	Language   *string
	AnalyzedAt *time.Time
	// Fields is nil until an analysis ended done or a person corrected
	// one: what the reading found, with a person's corrections over it.
	Fields *DocumentFields
	// FieldSources says, for every field name, who set its value:
	// SourceUser for a person's correction, SourceAnalysis for the others.
	FieldSources map[string]string
	// Confidence holds, for every field with a value, how likely it is
	// right, in [0, 1]; a person's values are 1.
	Confidence map[string]float64
	// Warnings say, in sentences, what the document states that cannot be
	// right; empty when nothing.
	Warnings []string
	// Kind is the kind the analysis found, which the file shows unless a
	// person set another.
	Kind *string

	read readState
}

// DocumentFields are what a document says of itself: Values holds the
// value of each field of package document's FieldNames that it says (dates
// YYYY-MM-DD, amounts decimal strings with a dot), and no entry for a field
// it does not say. Stored as JSON with every field name, null where there
// is no value.
type DocumentFields struct {
	Values   map[string]string
	EInvoice *EInvoice
	// Terms is what the document says of its payment beyond the fields:
	// nil when it says nothing of it.
	Terms *PaymentTerms
}

// PaymentTerms are the buyer a document names and the discount it allows,
// which tell whom a payment of it comes from and how much it may be.
// Each is "" when the document does not say it.
type PaymentTerms struct {
	BuyerName  string `json:"buyerName,omitempty"`
	BuyerVATID string `json:"buyerVatId,omitempty"`
	BuyerIBAN  string `json:"buyerIban,omitempty"`
	// DiscountPercent (of the total) or DiscountAmount, decimal strings
	// with a dot, may be taken off when it is paid by DiscountDueDate
	// (YYYY-MM-DD).
	DiscountPercent string `json:"discountPercent,omitempty"`
	DiscountAmount  string `json:"discountAmount,omitempty"`
	DiscountDueDate string `json:"discountDueDate,omitempty"`
}

// EInvoice says which e-invoice standard a document's XML follows.
type EInvoice struct {
	Syntax  string `json:"syntax"`  // CII or UBL
	Profile string `json:"profile"` // the guideline id the XML names
}

// Value is the named field's value; nil when the document does not say it.
func (f *DocumentFields) Value(name string) *string {
	if f == nil {
		return nil
	}
	if v, ok := f.Values[name]; ok {
		return &v
	}
	return nil
}

// MarshalJSON writes every field name in the order of document.FieldNames,
// then einvoice.
func (f DocumentFields) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for _, name := range document.FieldNames {
		b = append(strconv.AppendQuote(b, name), ':')
		v, err := json.Marshal(f.Value(name))
		if err != nil {
			return nil, err
		}
		b = append(append(b, v...), ',')
	}
	e, err := json.Marshal(f.EInvoice)
	if err != nil {
		return nil, err
	}
	b = append(append(append(b, `"einvoice":`...), e...), ',')
	t, err := json.Marshal(f.Terms)
	if err != nil {
		return nil, err
	}
	return append(append(append(b, `"terms":`...), t...), '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes; names that are not fields
// are ignored.
func (f *DocumentFields) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*f = DocumentFields{Values: map[string]string{}}
	for _, name := range document.FieldNames {
		var v *string
		if err := unmarshalPresent(raw[name], &v); err != nil {
			return fmt.Errorf("field %s: %w", name, err)
		}
		if v != nil {
			f.Values[name] = *v
		}
	}
	if err := unmarshalPresent(raw["einvoice"], &f.EInvoice); err != nil {
		return err
	}
	return unmarshalPresent(raw["terms"], &f.Terms)
}

// unmarshalPresent reads data into v; absent data leaves v alone.
func unmarshalPresent(data json.RawMessage, v any) error {
	if data == nil {
		return nil
	}
	return json.Unmarshal(data, v)
}

// searchable is the fields as the search index holds them: every value,
// so that a number or a VAT id is found as written.
func (f *DocumentFields) searchable() string {
	var values []string
	for _, name := range document.FieldNames {
		if v := f.Value(name); v != nil {
			values = append(values, *v)
		}
	}
	return strings.Join(values, "\n")
}

func ptr[T any](v T) *T { return &v }

// queueNewFile gives a new file its row in the search index, by its name
// until it is read, and queues its analysis, in the transaction of its row.
func (db *DB) queueNewFile(ctx context.Context, tx *txn, f *File) error {
	var seq int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO file_search_rows (file_id, client_id) VALUES (?, ?) RETURNING seq`,
		f.ID, f.ClientID).Scan(&seq); err != nil {
		return fmt.Errorf("index file: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO file_search (rowid, name, text, fields) VALUES (?, ?, '', '')`,
		seq, f.Name); err != nil {
		return fmt.Errorf("index file: %w", err)
	}
	now := unix(f.CreatedAt)
	if _, err := tx.ExecContext(ctx, `INSERT INTO analysis_jobs (file_id, client_id, lane, turn, next_attempt_at, created_at)
		VALUES (?3, ?1, ?2, `+nextTurn+`, ?4, ?4)`, f.ClientID, LaneFast, f.ID, now); err != nil {
		return fmt.Errorf("queue analysis: %w", err)
	}
	tx.analysisQueued = true
	return nil
}

// AnalysesQueued is signalled after a commit that queued analyses, so that
// the worker reads them at once instead of at its next poll.
func (db *DB) AnalysesQueued() <-chan struct{} { return db.analysesQueued }

// FileFilter narrows a file list; empty fields do not filter.
type FileFilter struct {
	WorkspaceID, FolderID, TaskID, LabelID, Kind string
	// Direction is DirectionReceived or DirectionIssued: the documents the
	// banking worker found the client received, or issued.
	Direction string
	// DocumentDateFrom and DocumentDateTo bound the document date, both
	// inclusive.
	DocumentDateFrom, DocumentDateTo *time.Time
	// Query is a full-text search (see SearchQuery); files match when they
	// have every word of it.
	Query *SearchQuery
}

// FileSorts are the sorts a file list accepts; SortRelevance only with a
// Query.
var FileSorts = []string{"createdAt", "updatedAt", "documentDate", "name", "size", SortRelevance}

// SortRelevance sorts a searched list by how well each file matches, the
// best first in descending order.
const SortRelevance = "relevance"

var fileSortKeys = map[string]sortKey{
	"createdAt":    column("created_at"),
	"updatedAt":    column("updated_at"),
	"documentDate": column("document_date"),
	"name":         column("name"),
	"size":         column("size"),
}

// A search is run one of two ways. With few matches it starts from the
// full-text index and sorts what it found (fileMatches); with many it walks
// the sort's index and keeps the files that match (matchFilter), which
// stops after a page. Both count the matches in the narrow file_search_rows.
const (
	// fileMatches is the files a search matches, with their relevance
	// (higher is better) where rankedMatches is used: a match in the name
	// weighs most, then the fields, then the text.
	fileMatches = `(SELECT files.* FROM file_search CROSS JOIN file_search_rows r ON r.seq = file_search.rowid
	CROSS JOIN files ON files.id = r.file_id WHERE file_search MATCH ?)`
	rankedMatches = `(SELECT files.*, -bm25(file_search, 10.0, 1.0, 5.0) AS relevance FROM file_search
	CROSS JOIN file_search_rows r ON r.seq = file_search.rowid CROSS JOIN files ON files.id = r.file_id
	WHERE file_search MATCH ?)`
	matchFilter = `id IN (SELECT r.file_id FROM file_search_rows r WHERE r.seq IN
	(SELECT rowid FROM file_search WHERE file_search MATCH ?))`
	// manyMatches is where a search stops sorting its matches and walks the
	// sort's index instead: beyond it, a page of the index holds matches
	// soon enough.
	manyMatches = 2000
)

// countMatches counts the client's files a search matches.
func countMatches(ctx context.Context, tx pageSource, clientID string, q *SearchQuery) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM file_search CROSS JOIN file_search_rows r ON r.seq = file_search.rowid
		WHERE file_search MATCH ? AND r.client_id = ?`, q.match, clientID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count matches: %w", err)
	}
	return n, nil
}

// ListFiles returns a page of the client's files. Returns EINVALIDCURSOR.
func (db *DB) ListFiles(ctx context.Context, clientID string, f FileFilter, req PageRequest) (*Page[*File], error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	l := fileList(clientID, f)
	if f.Query != nil {
		matches, err := countMatches(ctx, poolTx{tx}, clientID, f.Query)
		if err != nil {
			return nil, err
		}
		l = searchList(l, f, req, matches)
	}
	page, err := paginate(ctx, tx, l, req, func(s scanner) (*File, string, error) {
		file, err := scanFile(s)
		if err != nil {
			return nil, "", err
		}
		return file, file.ID, nil
	})
	if err != nil {
		return nil, err
	}
	if err := loadFileLabels(ctx, tx, clientID, page.Items); err != nil {
		return nil, err
	}
	return page, loadFileLedger(ctx, tx, clientID, page.Items)
}

// fileList is the list of the client's files that f selects, but for its
// search (see searchList).
func fileList(clientID string, f FileFilter) list {
	var filters []condition
	add := func(value, sql string) {
		if value != "" {
			filters = append(filters, condition{sql, []any{value}})
		}
	}
	add(f.WorkspaceID, "workspace_id = ?")
	add(f.FolderID, "folder_id = ?")
	add(f.TaskID, "task_id = ?")
	add(f.Kind, "kind = ?")
	add(f.Direction, "direction = ?")
	add(f.LabelID, "id IN (SELECT file_id FROM file_labels WHERE label_id = ?)")
	if f.DocumentDateFrom != nil {
		filters = append(filters, condition{"document_date >= ?", []any{unix(*f.DocumentDateFrom)}})
	}
	if f.DocumentDateTo != nil {
		filters = append(filters, condition{"document_date <= ?", []any{unix(*f.DocumentDateTo)}})
	}
	return list{
		table:   "files",
		columns: fileColumns,
		tenant:  condition{"client_id = ?", []any{clientID}},
		filters: filters,
		sorts:   fileSortKeys,
	}
}

// searchList is l narrowed to f's search, which matches the client's files
// the given number of times.
func searchList(l list, f FileFilter, req PageRequest, matches int) list {
	if len(l.filters) == 0 {
		// The count is the total: nothing else narrows the list.
		l.total = func(context.Context, pageSource) (int, error) { return matches, nil }
	}
	switch {
	case req.Sort == SortRelevance:
		l.table, l.tableArgs = rankedMatches, []any{f.Query.match}
	case matches <= manyMatches:
		l.table, l.tableArgs = fileMatches, []any{f.Query.match}
	default:
		l.filters = append(l.filters, condition{matchFilter, []any{f.Query.match}})
	}
	l.sorts = withKey(fileSortKeys, SortRelevance, column("relevance"))
	return l
}

// withKey returns a copy of m with one more key.
func withKey[V any](m map[string]V, key string, value V) map[string]V {
	out := maps.Clone(m)
	out[key] = value
	return out
}

// loadFileLabels fills the labels of the client's files, in one query.
func loadFileLabels(ctx context.Context, tx *txn, clientID string, files []*File) error {
	if len(files) == 0 {
		return nil
	}
	byID := make(map[string]*File, len(files))
	args := []any{clientID}
	for _, f := range files {
		f.LabelIDs = []string{}
		byID[f.ID] = f
		args = append(args, f.ID)
	}
	// The page's ids lead: the unary + keeps SQLite from walking the
	// client's files instead, which it would guess to be few.
	rows, err := tx.QueryContext(ctx, `SELECT fl.file_id, fl.label_id FROM files f CROSS JOIN file_labels fl ON fl.file_id = f.id
		WHERE +f.client_id = ? AND f.id IN (`+placeholders(len(files))+`) ORDER BY fl.file_id, fl.label_id`, args...)
	if err != nil {
		return fmt.Errorf("file labels: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var fileID, labelID string
		if err := rows.Scan(&fileID, &labelID); err != nil {
			return fmt.Errorf("file labels: %w", err)
		}
		byID[fileID].LabelIDs = append(byID[fileID].LabelIDs, labelID)
	}
	return rows.Err()
}

// FileUpdate is a partial update of a file by a person. What it sets is
// theirs: a later analysis leaves the kind and the document date alone.
type FileUpdate struct {
	Name         Update[string]
	DocumentDate Update[time.Time]
	Kind         Update[string]
	FolderID     Update[string]
	TaskID       Update[string]
	LabelIDs     Update[[]string]
	// Fields are corrections of the document's fields by field name; a nil
	// value clears the field. Absent fields stay.
	Fields map[string]*string
}

// fields names the fields u sets.
func (u FileUpdate) fields() []string {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{
		{u.Name.Set, "Name"}, {u.DocumentDate.Set, "DocumentDate"}, {u.Kind.Set, "Kind"},
		{u.FolderID.Set, "FolderID"}, {u.TaskID.Set, "TaskID"}, {u.LabelIDs.Set, "LabelIDs"}, {len(u.Fields) > 0, "Fields"},
	} {
		if f.set {
			names = append(names, f.name)
		}
	}
	return names
}

// UpdateFile changes what u sets of the client's file. The folder, task and
// labels must be of the file's workspace. A null document date gives the
// file back the document's own date when its analysis found one, else its
// upload time; a null kind, the kind its analysis found. Corrected fields
// and a kind a person set teach the firm's later readings; a file read to
// the end is queued for matching again. Returns
// ENOTFOUND, and EINVALID for a null name or label list or a field name
// that is none.
func (db *DB) UpdateFile(ctx context.Context, clientID, id string, u FileUpdate) (*File, error) {
	return write(ctx, db, func(ctx context.Context, tx *txn) (*File, error) {
		f, err := findFileTx(ctx, tx, clientID, id)
		if err != nil {
			return nil, err
		}
		if err := cmp.Or(notNull("Name", "name", u.Name), notNull("LabelIDs", "labelIds", u.LabelIDs)); err != nil {
			return nil, err
		}
		if u.FolderID.Set && u.FolderID.Value != nil {
			if err := findInWorkspace(ctx, tx, clientID, f.WorkspaceID, *u.FolderID.Value,
				inWorkspace{"folders", "folder", "the file's workspace", []any{"FolderID"}}); err != nil {
				return nil, err
			}
		}
		if u.TaskID.Set && u.TaskID.Value != nil {
			if err := findInWorkspace(ctx, tx, clientID, f.WorkspaceID, *u.TaskID.Value,
				inWorkspace{"tasks", "task", "the file's workspace", []any{"TaskID"}}); err != nil {
				return nil, err
			}
		}
		if u.LabelIDs.Set {
			labels := slices.Compact(slices.Sorted(slices.Values(*u.LabelIDs.Value)))
			if labels == nil {
				labels = []string{}
			}
			for i, label := range *u.LabelIDs.Value {
				if err := findInWorkspace(ctx, tx, clientID, f.WorkspaceID, label,
					inWorkspace{"labels", "label", "the file's workspace", []any{"LabelIDs", i}}); err != nil {
					return nil, err
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM file_labels
				WHERE file_id = (SELECT id FROM files WHERE client_id = ? AND id = ?)`, clientID, id); err != nil {
				return nil, fmt.Errorf("relabel file: %w", err)
			}
			for _, label := range labels {
				if _, err := tx.ExecContext(ctx, `INSERT INTO file_labels (file_id, label_id) VALUES (?, ?)`, id, label); err != nil {
					return nil, fmt.Errorf("relabel file: %w", err)
				}
			}
			f.LabelIDs = labels
		}

		apply(u.Name, func(v *string) { f.Name = *v })
		apply(u.FolderID, func(v *string) { f.FolderID = v })
		apply(u.TaskID, func(v *string) { f.TaskID = v })
		if len(u.Fields) > 0 {
			// Before the date: a date the request sets wins over the one a
			// corrected issue date gives.
			if err := correctFields(ctx, tx, f, u.Fields); err != nil {
				return nil, err
			}
		}
		apply(u.DocumentDate, func(v *time.Time) {
			if v != nil {
				f.DocumentDate, f.DocumentDateSource = v.UTC().Truncate(time.Second), ptr(SourceUser)
				return
			}
			f.followIssueDate()
		})
		apply(u.Kind, func(v *string) {
			if v != nil {
				f.Kind, f.KindSource = v, ptr(SourceUser)
				return
			}
			f.Kind, f.KindSource = nil, nil
			if f.Analysis.Kind != nil {
				f.Kind, f.KindSource = f.Analysis.Kind, ptr(SourceAnalysis)
			}
		})
		f.UpdatedAt = db.now().UTC().Truncate(time.Second)
		if _, err := tx.ExecContext(ctx, `UPDATE files SET name = ?, folder_id = ?, task_id = ?,
			document_date = ?, document_date_source = ?, kind = ?, kind_source = ?, updated_at = ?
			WHERE client_id = ? AND id = ?`,
			f.Name, f.FolderID, f.TaskID, unix(f.DocumentDate), f.DocumentDateSource, f.Kind, f.KindSource,
			unix(f.UpdatedAt), clientID, id); err != nil {
			return nil, fmt.Errorf("update file: %w", err)
		}
		if u.Name.Set || len(u.Fields) > 0 {
			if err := reindexFile(ctx, tx, clientID, id); err != nil {
				return nil, err
			}
		}
		corrected := slices.Sorted(maps.Keys(u.Fields))
		if err := db.teach(ctx, tx, f, corrected, u.Kind.Set); err != nil {
			return nil, err
		}
		// Matching weighs a document's kind, fields and date: a read one
		// is matched again.
		if f.Analysis.Status == AnalysisDone {
			if err := queueBankJob(ctx, tx, clientID, BankJobFile, id, f.UpdatedAt); err != nil {
				return nil, err
			}
		}
		return f, db.emit(ctx, tx, event{typ: EventFileUpdated, clientID: &clientID, record: f, changes: u.fields()})
	})
}

// documentDate is the date the document gives itself, at midnight UTC.
// followIssueDate gives f the date its issue date says, the upload time
// when there is none; the date is the person's (SourceUser) when the issue
// date is a person's correction.
func (f *File) followIssueDate() {
	f.DocumentDate, f.DocumentDateSource = f.CreatedAt, nil
	if date, ok := f.Analysis.documentDate(); ok {
		source := SourceAnalysis
		if f.Analysis.FieldSources[document.IssueDate] == SourceUser {
			source = SourceUser
		}
		f.DocumentDate, f.DocumentDateSource = date, ptr(source)
	}
}

// dateSetByPerson says whether a person set f's document date itself (an
// upload's or an update's documentDate), which no reading or correction
// of the issue date changes, rather than through their correction of the
// issue date, which the date follows. The store keeps only the date and
// "user", so a date equal to the person's corrected issue date is taken
// for the correction's.
func (f *File) dateSetByPerson() bool {
	if f.DocumentDateSource == nil || *f.DocumentDateSource != SourceUser {
		return false
	}
	corrected, ok := f.Analysis.read.user[document.IssueDate]
	if !ok || corrected == nil {
		return true
	}
	return *corrected != f.DocumentDate.Format(time.DateOnly)
}

func (a Analysis) documentDate() (time.Time, bool) {
	issued := a.Fields.Value(document.IssueDate)
	if issued == nil {
		return time.Time{}, false
	}
	date, err := time.Parse(time.DateOnly, *issued)
	return date, err == nil
}

// findFileTx is FindFile in the caller's transaction, with the file's labels
// and the kind its analysis found.
func findFileTx(ctx context.Context, tx *txn, clientID, id string) (*File, error) {
	f, err := scanFile(tx.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE client_id = ? AND id = ?`, clientID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "file %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	if err := loadFileLabels(ctx, tx, clientID, []*File{f}); err != nil {
		return nil, err
	}
	return f, loadFileLedger(ctx, tx, clientID, []*File{f})
}

// reindexFile writes the file's row of the search index again from its
// name, text and fields.
func reindexFile(ctx context.Context, tx *txn, clientID, id string) error {
	var seq int64
	var name, text string
	var fields, user sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT r.seq, f.name, coalesce(t.text, ''), f.analysis_fields, f.user_fields FROM files f
		JOIN file_search_rows r ON r.file_id = f.id LEFT JOIN file_texts t ON t.file_id = f.id
		WHERE f.client_id = ? AND f.id = ?`, clientID, id).Scan(&seq, &name, &text, &fields, &user)
	if err != nil {
		return fmt.Errorf("reindex file: %w", err)
	}
	var a Analysis
	if err := a.scanReadState(fields, sql.NullString{}, sql.NullString{}, user); err != nil {
		return fmt.Errorf("reindex file: its fields: %w", err)
	}
	parsed := a.Fields
	if _, err := tx.ExecContext(ctx, `DELETE FROM file_search WHERE rowid = ?`, seq); err != nil {
		return fmt.Errorf("reindex file: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO file_search (rowid, name, text, fields) VALUES (?, ?, ?, ?)`,
		seq, name, text, parsed.searchable()); err != nil {
		return fmt.Errorf("reindex file: %w", err)
	}
	return nil
}

// FileText is the text a file's analysis read: what the search reads.
type FileText struct {
	Text   string
	Pages  int
	Source string
}

// FindFileText returns the text of the client's file. Returns ENOTFOUND
// when there is no such file, or it has no text (yet).
func (db *DB) FindFileText(ctx context.Context, clientID, id string) (*FileText, error) {
	var t FileText
	err := db.read.QueryRowContext(ctx, `SELECT text, pages, source FROM file_texts WHERE client_id = ? AND file_id = ?`,
		clientID, id).Scan(&t.Text, &t.Pages, &t.Source)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "file %s not found, or it has no text", id)
	}
	if err != nil {
		return nil, fmt.Errorf("file text: %w", err)
	}
	return &t, nil
}
