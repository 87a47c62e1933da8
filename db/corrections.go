package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"acctapi/document"
)

// A person corrects what a reading found field by field; the reading keeps
// its own values beside, and a later reading replaces only those. The file
// shows the corrected values: the corrections over the reading.

// Confidence of the values whose reading did not say how sure it was.
const (
	// confidencePerson is a person's value.
	confidencePerson = 1.0
	// confidenceEInvoice is what an e-invoice's XML states.
	confidenceEInvoice = 1.0
	// confidenceUnknown is a value read before readings said how sure they
	// were: nothing is known of it.
	confidenceUnknown = 0.5
)

// readState is what the store keeps of a file's analysis beside what the
// file shows: the reading's own fields and confidence, and a person's
// corrections (a nil value: the person cleared the field).
type readState struct {
	fields     *DocumentFields
	confidence map[string]float64
	user       map[string]*string
}

// show sets a's Fields, Confidence and FieldSources from the reading and
// the corrections.
func (a *Analysis) show() {
	r := a.read
	a.Fields, a.Confidence, a.FieldSources = nil, map[string]float64{}, map[string]string{}
	if r.fields != nil || len(r.user) > 0 {
		a.Fields = &DocumentFields{Values: map[string]string{}}
		if r.fields != nil {
			a.Fields.EInvoice, a.Fields.Terms = r.fields.EInvoice, r.fields.Terms
			maps.Copy(a.Fields.Values, r.fields.Values)
		}
	}
	for _, name := range document.FieldNames {
		a.FieldSources[name] = SourceAnalysis
		if v, ok := r.user[name]; ok {
			a.FieldSources[name] = SourceUser
			delete(a.Fields.Values, name)
			if v != nil {
				a.Fields.Values[name] = *v
				a.Confidence[name] = confidencePerson
			}
			continue
		}
		if a.Fields.Value(name) == nil {
			continue
		}
		c, ok := r.confidence[name]
		switch {
		case ok:
		case a.Source != nil && *a.Source == TextFromEInvoice:
			c = confidenceEInvoice
		default:
			c = confidenceUnknown
		}
		a.Confidence[name] = c
	}
}

// scanReadState reads the JSON columns of a file's reading and corrections
// into a.
func (a *Analysis) scanReadState(fields, confidence, warnings, user sql.NullString) error {
	for _, c := range []struct {
		col sql.NullString
		v   any
	}{{confidence, &a.read.confidence}, {warnings, &a.Warnings}, {user, &a.read.user}} {
		if c.col.Valid {
			if err := json.Unmarshal([]byte(c.col.String), c.v); err != nil {
				return err
			}
		}
	}
	if fields.Valid {
		a.read.fields = new(DocumentFields)
		if err := json.Unmarshal([]byte(fields.String), a.read.fields); err != nil {
			return err
		}
	}
	if a.Warnings == nil {
		a.Warnings = []string{}
	}
	a.show()
	return nil
}

// encodeJSON is v as a JSON column; NULL for a nil map or pointer.
func encodeJSON(v any) (*string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return ptr(string(b)), nil
}

// correctFields writes a person's corrections of the file's fields, over
// those they made before, and gives the file the document date of a
// corrected issue date, the person's, where they did not set the date
// itself.
func correctFields(ctx context.Context, tx *txn, f *File, corrections map[string]*string) error {
	for name := range corrections {
		if !document.IsField(name) {
			return &Error{Code: EINVALID, Field: []any{"Fields", name}, Message: "there is no field " + name}
		}
	}
	byPerson := f.dateSetByPerson()
	user := maps.Clone(f.Analysis.read.user)
	if user == nil {
		user = map[string]*string{}
	}
	maps.Copy(user, corrections)
	f.Analysis.read.user = user
	f.Analysis.show()
	if !byPerson {
		f.followIssueDate()
	}
	encoded, err := encodeJSON(user)
	if err != nil {
		return fmt.Errorf("correct fields: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE files SET user_fields = ? WHERE client_id = ? AND id = ?`,
		encoded, f.ClientID, f.ID); err != nil {
		return fmt.Errorf("correct fields: %w", err)
	}
	return nil
}

// Teacher turns a person's corrections of a document into a lesson for the
// firm's later readings. The store cannot read documents; cmd gives it the
// analysis' (analysis.Teach).
type Teacher func(text string, fields map[string]string, corrected []string) Lesson

// Lesson is what one corrected document teaches.
type Lesson struct {
	// Suppliers are the keys of the document's supplier, hashed: its VAT
	// id, IBAN and normalised name, those it has.
	Suppliers []string
	// Anchors say, by field, where a corrected value stands in the
	// document, in the teacher's encoding; a value not found in the text
	// has none.
	Anchors map[string]string
	// KindFeatures are the document's words, hashed, for the firm's kind
	// classifier.
	KindFeatures []byte
}

// Lessons are what a firm's corrections taught, as a reading of one
// document uses them.
type Lessons struct {
	// Anchors are the supplier's, by field, in the teacher's encoding.
	Anchors map[string]string
	// KindExamples are the firm's documents whose kind a person set, the
	// newest first.
	KindExamples []KindExample
}

// KindExample is one document whose kind a person set.
type KindExample struct {
	Kind     string
	Features []byte
}

// maxKindExamples bounds the examples a reading weighs: the newest are the
// firm's habits.
const maxKindExamples = 500

// teach records what the person's corrections of the file teach its firm,
// when the file has text to learn from.
func (db *DB) teach(ctx context.Context, tx *txn, f *File, corrected []string, kindSet bool) error {
	if db.teacher == nil || len(corrected) == 0 && !kindSet {
		return nil
	}
	var text string
	err := tx.QueryRowContext(ctx, `SELECT text FROM file_texts WHERE client_id = ? AND file_id = ?`, f.ClientID, f.ID).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("learn: %w", err)
	}
	var values map[string]string
	if f.Analysis.Fields != nil {
		values = f.Analysis.Fields.Values
	}
	lesson := db.teacher(text, values, corrected)
	now := unix(db.now())
	for _, supplier := range lesson.Suppliers {
		for _, field := range slices.Sorted(maps.Keys(lesson.Anchors)) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO supplier_anchors (firm_id, supplier, field, anchor, updated_at)
				SELECT firm_id, ?, ?, ?, ? FROM clients WHERE id = ?
				ON CONFLICT (firm_id, supplier, field) DO UPDATE SET anchor = excluded.anchor, updated_at = excluded.updated_at`,
				supplier, field, lesson.Anchors[field], now, f.ClientID); err != nil {
				return fmt.Errorf("learn an anchor: %w", err)
			}
		}
	}
	if !kindSet {
		return nil
	}
	if f.KindSource == nil || *f.KindSource != SourceUser {
		_, err := tx.ExecContext(ctx, `DELETE FROM kind_examples WHERE file_id = ?
			AND firm_id = (SELECT firm_id FROM clients WHERE id = ?)`, f.ID, f.ClientID)
		if err != nil {
			return fmt.Errorf("unlearn a kind: %w", err)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kind_examples (file_id, firm_id, kind, features, updated_at)
		SELECT ?, firm_id, ?, ?, ? FROM clients WHERE id = ?
		ON CONFLICT (file_id) DO UPDATE SET kind = excluded.kind, features = excluded.features, updated_at = excluded.updated_at`,
		f.ID, *f.Kind, lesson.KindFeatures, now, f.ClientID); err != nil {
		return fmt.Errorf("learn a kind: %w", err)
	}
	return nil
}

// FindLessons returns what the firm of the client learnt: by field, the
// anchor of the first of the supplier keys that has one, and, with kinds,
// the kind examples.
func (db *DB) FindLessons(ctx context.Context, clientID string, suppliers []string, kinds bool) (*Lessons, error) {
	l := &Lessons{Anchors: map[string]string{}}
	for _, supplier := range suppliers {
		rows, err := db.read.QueryContext(ctx, `SELECT field, anchor FROM supplier_anchors
			WHERE firm_id = (SELECT firm_id FROM clients WHERE id = ?) AND supplier = ?`, clientID, supplier)
		if err != nil {
			return nil, fmt.Errorf("find anchors: %w", err)
		}
		for rows.Next() {
			var field, anchor string
			if err := rows.Scan(&field, &anchor); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find anchors: %w", err)
			}
			if _, ok := l.Anchors[field]; !ok {
				l.Anchors[field] = anchor
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("find anchors: %w", err)
		}
	}
	if !kinds {
		return l, nil
	}
	rows, err := db.read.QueryContext(ctx, `SELECT kind, features FROM kind_examples
		WHERE firm_id = (SELECT firm_id FROM clients WHERE id = ?) ORDER BY updated_at DESC LIMIT ?`, clientID, maxKindExamples)
	if err != nil {
		return nil, fmt.Errorf("find kind examples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e KindExample
		if err := rows.Scan(&e.Kind, &e.Features); err != nil {
			return nil, fmt.Errorf("find kind examples: %w", err)
		}
		l.KindExamples = append(l.KindExamples, e)
	}
	return l, rows.Err()
}
