package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// timestamp is a time as the API writes it: YYYY-MM-DDTHH:MM:SSZ, UTC. It is
// formatted when the answer is built, so that encoding/json writes it as the
// plain string it is (a MarshalJSON method would cost an extra pass over
// its output for every timestamp of a page).
type timestamp string

// timestampOf formats with time.RFC3339, which for a UTC time writes
// exactly that (no fractions), on the time package's fast path.
func timestampOf(t time.Time) timestamp { return timestamp(t.UTC().Format(time.RFC3339)) }

func timestampPtr(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	ts := timestampOf(*t)
	return &ts
}

// bodyBuffers keeps the buffers answers are encoded into, so that a list
// page does not grow a new one each time; maxPooledBody keeps a rare huge
// answer's buffer out of the pool.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

// jsonAppender is an answer that writes its own JSON, byte for byte what
// encoding/json would write for it, where reflection costs most.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// writeJSON writes v as the JSON body with the status, ended by a newline
// as json.Encoder ends it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if body.Cap() <= maxPooledBody {
			body.Reset()
			bodyBuffers.Put(body)
		}
	}()
	if a, ok := v.(jsonAppender); ok {
		body.Write(append(a.appendJSON(body.AvailableBuffer()), '\n'))
	} else {
		enc := json.NewEncoder(body)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			// Only a programming error gets here: the values are our own types.
			panic("encode response: " + err.Error())
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(status)
	w.Write(body.Bytes())
}

// deletedResponse answers a removal that has no record left to show.
type deletedResponse struct {
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

// listResponse is the envelope of every paginated list.
type listResponse[T any] struct {
	Data       []T        `json:"data"`
	Pagination pagination `json:"pagination"`
}

type pagination struct {
	Limit          int     `json:"limit"`
	Total          int     `json:"total"`
	NextCursor     *string `json:"nextCursor"`
	PreviousCursor *string `json:"previousCursor"`
}

// respond answers convert(v) with the status, or err when it is set: the
// last step of every handler that calls the store.
func respond[T, R any](h *Handler, w http.ResponseWriter, r *http.Request, status int, v T, err error, convert func(T) R) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, status, convert(v))
}

// firmOf and clientOf name the tenant whose records a route reads: the
// key's firm, or the client the route's checks resolved from x-client-id.
func firmOf(st *requestState) string   { return st.principal.FirmID }
func clientOf(st *requestState) string { return st.clientID }

// serveList answers a list whose only input is its page query, of the
// tenant's records.
func serveList[T, R any](h *Handler, w http.ResponseWriter, r *http.Request, tenant func(*requestState) string,
	sorts []string, list func(ctx context.Context, tenantID string, req db.PageRequest) (*db.Page[T], error), convert func(T) R) {
	req, ok := h.pageQuery(w, r, sorts)
	if !ok {
		return
	}
	page, err := list(r.Context(), tenant(stateOf(r)), req)
	respond(h, w, r, http.StatusOK, page, err, listOf(convert))
}

// serveOne answers the tenant's record with the id in the path, as find
// returns it: found, or deleted.
func serveOne[T, R any](h *Handler, w http.ResponseWriter, r *http.Request, p httprouter.Params, tenant func(*requestState) string,
	find func(ctx context.Context, tenantID, id string) (T, error), convert func(T) R) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	v, err := find(r.Context(), tenant(stateOf(r)), id)
	respond(h, w, r, http.StatusOK, v, err, convert)
}

// listOf converts a page of items with convert, into the list envelope.
func listOf[T, R any](convert func(T) R) func(*db.Page[T]) listResponse[R] {
	return func(page *db.Page[T]) listResponse[R] { return newListResponse(page, convert) }
}

// newListResponse encodes a page with convert applied to each item.
func newListResponse[T, R any](page *db.Page[T], convert func(T) R) listResponse[R] {
	data := make([]R, len(page.Items))
	for i, item := range page.Items {
		data[i] = convert(item)
	}
	return listResponse[R]{Data: data, Pagination: pagination{
		Limit: page.Limit, Total: page.Total, NextCursor: page.NextCursor, PreviousCursor: page.PreviousCursor,
	}}
}

// Defaults and bounds of the list query parameters.
const (
	defaultLimit = 20
	maxLimit     = 100
)

var orders = []string{"asc", "desc"}

// pageRequest reads limit, cursor, sort and order from the query.
func pageRequest(q *query, sorts []string) db.PageRequest {
	return db.PageRequest{
		Limit:  q.int("limit", 1, maxLimit, defaultLimit),
		Cursor: q.id("cursor"),
		Sort:   q.enum("sort", sorts, "createdAt"),
		Desc:   q.enum("order", orders, "desc") == "desc",
	}
}

// update turns a decoded body field into a store update.
func update[T any](f field[T]) db.Update[T] {
	if !f.Set {
		return db.Update[T]{}
	}
	if f.Null {
		return db.Update[T]{Set: true}
	}
	v := f.Value
	return db.Update[T]{Set: true, Value: &v}
}

// valueOrNil returns a pointer to a set, non-null field's value, else nil.
func valueOrNil[T any](f field[T]) *T {
	if !f.Set || f.Null {
		return nil
	}
	v := f.Value
	return &v
}
