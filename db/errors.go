package db

import (
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Error codes the store returns. The HTTP layer maps each to one status.
const (
	ENOTFOUND      = "not_found"      // the record does not exist for this tenant
	ECONFLICT      = "conflict"       // a unique record already exists
	EINVALID       = "invalid"        // the request breaks a rule only the store can check
	EINVALIDCURSOR = "invalid_cursor" // a page cursor names no record
	EEXPIRED       = "expired"        // a collect link expired, or its collect is closed or cancelled
	EQUOTA         = "quota"          // the firm's hourly mail quota is spent (a *QuotaError)
	ESPENT         = "spent"          // a collect link's or collect's upload budget is spent (a *BudgetError)
)

// QuotaError refuses a request that would mail past its firm's hourly
// quota; nothing of the request was written. It wraps an EQUOTA *Error.
type QuotaError struct {
	// RetryAfter is how long until the quota has room for a mail again.
	RetryAfter time.Duration
	err        *Error
}

func (e *QuotaError) Error() string { return e.err.Error() }

// Unwrap gives the EQUOTA error.
func (e *QuotaError) Unwrap() error { return e.err }

// Error is an error the caller may see: a code from the list above and a
// message written for API users. Anything else the store returns is internal.
type Error struct {
	Code    string
	Message string
	// Field names the input at fault as the store's own types name it: a
	// field of the method's argument ("WorkspaceID", "Cursor"), followed by
	// the index of the element for a list ("LabelIDs", 2). Nil when no one
	// input is at fault. Where the API takes each input is the HTTP layer's
	// business, not the store's.
	Field []any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is an *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// withField names the input an *Error is about; other errors pass.
func withField(err error, field ...any) error {
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Message: e.Message, Field: field}
	}
	return err
}

// IsStorageFull reports whether err is SQLite finding the disk full.
func IsStorageFull(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_FULL
}

// IsStorageUnavailable reports whether err says the database cannot be used
// right now for a reason a retry may outlive: a read-only or failing disk,
// a lock held beyond the busy timeout, or the store closing.
func IsStorageUnavailable(err error) bool {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return errors.Is(err, ErrClosed)
}

// sqliteCode returns the primary result code of a SQLite error in err, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}
