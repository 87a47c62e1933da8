package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"syscall"

	"acctapi/auth"
	"acctapi/db"
)

// Error is an error answered with the standard four-field body. Handlers
// return one of the constructors below, or an error of the store, and fail
// turns it into the answer.
type Error struct {
	Status  int
	Type    string
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorBody is the standard error body of SPEC.md: all four fields, always.
type errorBody struct {
	StatusCode int    `json:"status_code"`
	Type       string `json:"type"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

var (
	errMissingClientID = &Error{http.StatusBadRequest, "bad_request", "missing_client_id",
		"the x-client-id header is required: name the client this call acts for"}
	errUnauthorized = &Error{http.StatusUnauthorized, "auth_error", "unauthorized",
		"missing or invalid API key: send Authorization: Bearer <API_KEY>"}
	errInternal = &Error{http.StatusInternalServerError, "internal_error", "internal_error",
		"internal server error; the request id identifies it in the server log"}
)

// storageRetryAfter is the Retry-After of a 503, in seconds.
const storageRetryAfter = 5

var (
	errStorageFull = &Error{http.StatusInsufficientStorage, "storage_error", "insufficient_storage",
		"the server's disk is full: nothing was written; retry once space is freed"}
	errStorageUnavailable = &Error{http.StatusServiceUnavailable, "storage_error", "service_unavailable",
		"the server's storage is unavailable right now (read-only, failing or busy): the request was not carried out; retry later"}
)

// logFailure tells the operator what the caller sees only as a generic
// 500, 503 or 507.
func (h *Handler) logFailure(r *http.Request, msg string, err error) {
	st := stateOf(r)
	h.log.LogAttrs(r.Context(), slog.LevelError, msg,
		slog.String("request_id", st.id), slog.String("route", st.route), slog.Any("error", err))
}

func errBadRequest(code, message string) *Error {
	return &Error{http.StatusBadRequest, "bad_request", code, message}
}

func errMissingScope(perm auth.Permission) *Error {
	return &Error{http.StatusForbidden, "auth_error", "missing_scope",
		fmt.Sprintf("this API key lacks the permission %s", perm)}
}

func errNotFound(message string) *Error {
	return &Error{http.StatusNotFound, "not_found", "not_found", message}
}

func errRateLimited(retryAfter int) *Error {
	return &Error{http.StatusTooManyRequests, "rate_limit", "too_many_requests",
		fmt.Sprintf("rate limit exceeded: retry in %d s", retryAfter)}
}

func errPayloadTooLarge(limit int64) *Error {
	return &Error{http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large",
		fmt.Sprintf("request body exceeds %d bytes", limit)}
}

// fail writes the answer for err: the one place that turns errors into
// response bodies. Errors it does not know are logged with the request id
// and answered with a generic 500, never with their text.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	st := stateOf(r)
	var apiErr *Error
	var valErr *validationError
	var storeErr *db.Error
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &valErr):
		writeJSON(w, http.StatusUnprocessableEntity, validationBody{
			Success: false,
			Error:   validationDetail{Name: st.validationName(), Issues: valErr.issues},
		})
		return
	case errors.As(err, &storeErr):
		apiErr = storeError(storeErr)
		if apiErr == nil {
			h.fail(w, r, &validationError{issues: []issue{{Code: "custom", Path: pathOrRoot(storeErr.Path), Message: storeErr.Message}}})
			return
		}
	case errors.As(err, &tooLarge):
		apiErr = errPayloadTooLarge(tooLarge.Limit)
	case db.IsStorageFull(err) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		h.logFailure(r, "storage fault", err)
		apiErr = errStorageFull
	case db.IsStorageUnavailable(err) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EIO):
		h.logFailure(r, "storage fault", err)
		w.Header().Set("Retry-After", strconv.Itoa(storageRetryAfter))
		apiErr = errStorageUnavailable
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The caller hung up: nobody reads the answer.
		st.canceled = true
		return
	default:
		h.logFailure(r, "internal error", err)
		apiErr = errInternal
	}
	writeJSON(w, apiErr.Status, errorBody{apiErr.Status, apiErr.Type, apiErr.Code, apiErr.Message})
}

// storeError maps a store error to its answer; nil for EINVALID, which is
// answered as a validation failure.
func storeError(e *db.Error) *Error {
	switch e.Code {
	case db.ENOTFOUND:
		return errNotFound(e.Message)
	case db.ECONFLICT:
		return &Error{http.StatusConflict, "conflict", "conflict", e.Message}
	case db.EINVALIDCURSOR:
		return errBadRequest("invalid_cursor", e.Message)
	case db.EINVALID:
		return nil
	}
	return errInternal
}

func pathOrRoot(p []any) []any {
	if p == nil {
		return []any{}
	}
	return p
}
