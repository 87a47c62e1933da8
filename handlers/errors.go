package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
)

// apiError is an error answered with the standard four-field body. Handlers
// return one of the constructors below, or an error of the store, and fail
// turns it into the answer.
type apiError struct {
	Status  int
	Type    string
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// errorBody is the error body of every answer but a 422: all four fields,
// always, so that callers parse one shape.
type errorBody struct {
	StatusCode int    `json:"status_code"`
	Type       string `json:"type"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

var (
	errMissingClientID = &apiError{http.StatusBadRequest, "bad_request", "missing_client_id",
		"the x-client-id header is required: name the client this call acts for"}
	errUnauthorized = &apiError{http.StatusUnauthorized, "auth_error", "unauthorized",
		"missing or invalid API key: send Authorization: Bearer <API_KEY>"}
	errInternal = &apiError{http.StatusInternalServerError, "internal_error", "internal_error",
		"internal server error; the request id identifies it in the server log"}
)

// storageRetryAfter is the Retry-After of a 503, in seconds.
const storageRetryAfter = 5

var (
	errStorageFull = &apiError{http.StatusInsufficientStorage, "storage_error", "insufficient_storage",
		"the server's disk is full: nothing was written; retry once space is freed"}
	errStorageUnavailable = &apiError{http.StatusServiceUnavailable, "storage_error", "service_unavailable",
		"the server's storage is unavailable right now (read-only, failing or busy): the request was not carried out; retry later"}
)

// logFailure tells the operator what the caller sees only as a generic
// 500, 503 or 507.
func (h *Handler) logFailure(r *http.Request, msg string, err error) {
	st := stateOf(r)
	h.log.LogAttrs(r.Context(), slog.LevelError, msg,
		slog.String("request_id", st.id), slog.String("route", st.route), slog.Any("error", err))
}

func errBadRequest(code, message string) *apiError {
	return &apiError{http.StatusBadRequest, "bad_request", code, message}
}

func errMissingScope(perm auth.Permission) *apiError {
	return &apiError{http.StatusForbidden, "auth_error", "missing_scope",
		fmt.Sprintf("this API key lacks the permission %s", perm)}
}

func errNotFound(message string) *apiError {
	return &apiError{http.StatusNotFound, "not_found", "not_found", message}
}

func errRateLimited(retryAfter int) *apiError {
	return &apiError{http.StatusTooManyRequests, "rate_limit", "too_many_requests",
		fmt.Sprintf("rate limit exceeded: retry in %d s", retryAfter)}
}

// errRangeNotSatisfiable answers a Range header none of whose ranges lies
// within the file (or that does not parse).
func errRangeNotSatisfiable(size int64) *apiError {
	return &apiError{http.StatusRequestedRangeNotSatisfiable, "bad_request", "range_not_satisfiable",
		fmt.Sprintf("no range of the Range header lies within the file's %d bytes", size)}
}

func errPayloadTooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large",
		fmt.Sprintf("request body exceeds %d bytes", limit)}
}

// fail writes the answer for err: the one place that turns errors into
// response bodies. Errors it does not know are logged with the request id
// and answered with a generic 500, never with their text.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	st := stateOf(r)
	apiErr, valErr := h.classify(w, r, err)
	switch {
	case valErr != nil:
		printableIssues(valErr.issues)
		writeJSON(w, http.StatusUnprocessableEntity, validationBody{
			Success: false,
			Error:   validationDetail{Name: st.validationName(), Issues: valErr.issues},
		})
	case apiErr != nil:
		writeJSON(w, apiErr.Status, errorBody{apiErr.Status, apiErr.Type, apiErr.Code, printable(apiErr.Message)})
	default:
		// The caller hung up: nobody reads the answer.
		st.canceled = true
	}
}

// classify says what err answers: an API error, or a validation failure
// (422), or neither when the caller hung up. It logs the faults that are
// the server's, and sets the headers their answer carries. fail writes the
// API's answer from it, and the upload page its own.
func (h *Handler) classify(w http.ResponseWriter, r *http.Request, err error) (*apiError, *validationError) {
	var apiErr *apiError
	var valErr *validationError
	var storeErr *db.Error
	var tooLarge *http.MaxBytesError
	var missing *db.MissingItemsError
	var quota *db.QuotaError
	switch {
	case errors.As(err, &apiErr):
		return apiErr, nil
	case errors.As(err, &missing):
		return nil, &validationError{issues: missingItemsIssues(missing)}
	case errors.As(err, &valErr):
		return nil, valErr
	case errors.As(err, &quota):
		retry := int((quota.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		return &apiError{http.StatusTooManyRequests, "rate_limit", "mail_quota_exceeded", quota.Unwrap().(*db.Error).Message}, nil
	case errors.As(err, &storeErr):
		if apiErr := storeError(storeErr); apiErr != nil {
			return apiErr, nil
		}
		return nil, &validationError{issues: []issue{{Code: "custom", Path: apiPath(storeErr.Field), Message: storeErr.Message}}}
	case errors.As(err, &tooLarge):
		return errPayloadTooLarge(tooLarge.Limit), nil
	case db.IsStorageFull(err) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		h.logFailure(r, "storage fault", err)
		return errStorageFull, nil
	case db.IsStorageUnavailable(err) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EIO) || errors.Is(err, filestore.ErrUnavailable):
		h.logFailure(r, "storage fault", err)
		w.Header().Set("Retry-After", strconv.Itoa(storageRetryAfter))
		return errStorageUnavailable, nil
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return nil, nil
	}
	h.logFailure(r, "internal error", err)
	return errInternal, nil
}

// printable escapes the control characters of a message as \u0000 and its
// bytes that are not UTF-8 as \xff. A message may quote what the request
// sent (a path, a value that is not one of the options), and an answer must
// never carry a NUL, a line break or a terminal escape back to where it is
// logged or shown.
func printable(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || unicode.IsControl(r) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// printableIssues makes the text of issues printable, the issues of their
// unions included: an enum issue quotes the value received.
func printableIssues(issues []issue) {
	for i := range issues {
		issues[i].Message = printable(issues[i].Message)
		issues[i].Received = printable(issues[i].Received)
		for _, u := range issues[i].UnionErrors {
			printableIssues(u.Issues)
		}
	}
}

// storeError maps a store error to its answer; nil for EINVALID, which is
// answered as a validation failure.
func storeError(e *db.Error) *apiError {
	switch e.Code {
	case db.ENOTFOUND:
		return errNotFound(e.Message)
	case db.ECONFLICT:
		return &apiError{http.StatusConflict, "conflict", "conflict", e.Message}
	case db.EINVALIDCURSOR:
		return errBadRequest("invalid_cursor", e.Message)
	case db.EINVALID:
		return nil
	case db.EEXPIRED:
		return errCollectTokenExpired
	case db.ESPENT:
		return &apiError{http.StatusConflict, "conflict", "upload_budget_spent", e.Message}
	}
	return errInternal
}

// apiPath is where the API takes the store input that field names. The
// store names inputs as its Go types do (WorkspaceID, LabelIDs), the API as
// its JSON does (workspaceId, labelIds); a page cursor is a query parameter.
// List indices pass through. An error that names no input is about the
// whole request: the empty path.
func apiPath(field []any) []any {
	if len(field) == 0 {
		return []any{}
	}
	name, _ := field[0].(string)
	if name == "Cursor" {
		return append([]any{"query", "cursor"}, field[1:]...)
	}
	return append([]any{jsonName(name)}, field[1:]...)
}

// jsonName turns a Go field name into the API's: the leading initialism or
// word in lower case (URL: url, Name: name), and an ID or IDs at the end
// written Id or Ids (WorkspaceID: workspaceId, LabelIDs: labelIds).
func jsonName(goName string) string {
	switch {
	case strings.HasSuffix(goName, "IDs") && goName != "IDs":
		goName = strings.TrimSuffix(goName, "IDs") + "Ids"
	case strings.HasSuffix(goName, "ID") && goName != "ID":
		goName = strings.TrimSuffix(goName, "ID") + "Id"
	}
	upper := 0
	for upper < len(goName) && 'A' <= goName[upper] && goName[upper] <= 'Z' {
		upper++
	}
	if upper > 1 && upper < len(goName) {
		upper-- // the last capital starts the next word: URLPath is urlPath
	}
	return strings.ToLower(goName[:upper]) + goName[upper:]
}
