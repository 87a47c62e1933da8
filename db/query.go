package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// These are the pieces the store's methods share: finding the records a
// request refers to within its tenant, partial updates, and the forms of
// stored values.

// querier is a transaction or the read pool: what a lookup runs on.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Update is one field of a partial update: the field changes only when Set,
// and a Set field with a nil Value is cleared.
type Update[T any] struct {
	Set   bool
	Value *T
}

// apply calls set with u's value when u is set.
func apply[T any](u Update[T], set func(*T)) {
	if u.Set {
		set(u.Value)
	}
}

// findWorkspace checks that the workspace is the client's.
func findWorkspace(ctx context.Context, q querier, clientID, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE client_id = ? AND id = ?`, clientID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(ENOTFOUND, "workspace %s not found", id)
	}
	if err != nil {
		return fmt.Errorf("find workspace: %w", err)
	}
	return nil
}

// inWorkspace names a record that a request refers to and that must be in
// a given workspace of the client: its table (a fixed name, never request
// text), and how a not-found error names it, where, and which input it is.
type inWorkspace struct {
	table string
	what  string
	place string
	field []any
}

// findInWorkspace checks that the record with the id is the client's and in
// the workspace. Returns ENOTFOUND naming it.
func findInWorkspace(ctx context.Context, q querier, clientID, workspaceID, id string, r inWorkspace) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM `+r.table+` WHERE client_id = ? AND workspace_id = ? AND id = ?`,
		clientID, workspaceID, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return &Error{Code: ENOTFOUND, Field: r.field, Message: r.what + " " + id + " not found in " + r.place}
	}
	if err != nil {
		return fmt.Errorf("find %s: %w", r.what, err)
	}
	return nil
}

// notNull refuses an update that clears a field that cannot be null; name
// is how the message calls it.
func notNull[T any](field, name string, u Update[T]) error {
	if u.Set && u.Value == nil {
		return &Error{Code: EINVALID, Field: []any{field}, Message: name + " cannot be null"}
	}
	return nil
}

// placeholders is the list of n ? placeholders of an IN (...).
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// truncate is a time as the store keeps it: UTC, whole seconds.
func truncate(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.UTC().Truncate(time.Second)
	return &v
}

// unixPtr is unix for a nullable time.
func unixPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := unix(*t)
	return &v
}

// unix converts a time to the stored form: unix seconds, UTC.
func unix(t time.Time) int64 { return t.Unix() }

// fromUnix converts a stored timestamp back.
func fromUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }

// nullTime converts a nullable stored timestamp.
func nullTime(s sql.NullInt64) *time.Time {
	if !s.Valid {
		return nil
	}
	t := fromUnix(s.Int64)
	return &t
}

// nullString converts a nullable column to a pointer.
func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}
