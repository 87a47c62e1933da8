package handlers

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
)

// requestState is what the middleware and the route checks learn about a
// request, for the handler, the error path and the request log.
type requestState struct {
	id          string
	route       string
	zod         bool
	keyID       string
	principal   *auth.Principal
	clientID    string
	status      int
	wroteHeader bool
	canceled    bool
}

// stateKey is the context key of a request's requestState.
type stateKey struct{}

// stateOf returns the state ServeHTTP gave the request, or an empty one for
// a request that did not come through it, so that callers need no check.
func stateOf(r *http.Request) *requestState {
	if st, ok := r.Context().Value(stateKey{}).(*requestState); ok {
		return st
	}
	return &requestState{}
}

// validationName is the name a validation failure carries on the route.
func (st *requestState) validationName() string {
	if st.zod {
		return "ZodError"
	}
	return "ValidationError"
}

// maxJSONBody is the largest JSON request body accepted.
const maxJSONBody = 1 << 20

// decodeBody reads the JSON body under the size limit and returns its object
// for validation. A body that is not JSON, or not sent as JSON, is a 400; a
// JSON value that is not an object is an issue in v.
func decodeBody(w http.ResponseWriter, r *http.Request, v *validator) (*object, error) {
	if r.ContentLength > maxJSONBody {
		return nil, errPayloadTooLarge(maxJSONBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, errBadRequest("invalid_json", "the request body is empty: send a JSON object")
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return nil, errBadRequest("unsupported_media_type", "send the body as Content-Type: application/json")
	}
	if !json.Valid(body) {
		return nil, errBadRequest("invalid_json", "the request body is not valid JSON")
	}
	return v.body(body), nil
}

// pathID reads and checks the id path parameter;
// on a malformed one it answers the validation failure and returns false.
func (h *Handler) pathID(w http.ResponseWriter, r *http.Request, p httprouter.Params) (string, bool) {
	var v validator
	id := v.pathID(p, "id")
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return "", false
	}
	return id, true
}

// pageQuery reads the query of a list whose only input it is; on a bad one
// it answers the validation failure and returns false.
func (h *Handler) pageQuery(w http.ResponseWriter, r *http.Request, sorts []string) (db.PageRequest, bool) {
	var v validator
	req := pageRequest(v.query(r.URL.Query()), sorts)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return db.PageRequest{}, false
	}
	return req, true
}

// readBody decodes the JSON body and reads its fields with read, then
// answers the first failure: a body that cannot be read (400, 413), or every
// issue of its fields at once (422). It returns false once it has answered.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, read func(body *object)) bool {
	_, ok := h.readInput(w, r, nil, read)
	return ok
}

// readIDAndBody is readBody for a route with an id in its path: a malformed
// id is one more issue beside the body's.
func (h *Handler) readIDAndBody(w http.ResponseWriter, r *http.Request, p httprouter.Params, read func(body *object)) (string, bool) {
	return h.readInput(w, r, p, read)
}

func (h *Handler) readInput(w http.ResponseWriter, r *http.Request, p httprouter.Params, read func(body *object)) (string, bool) {
	var v validator
	var id string
	if p != nil {
		id = v.pathID(p, "id")
	}
	body, err := decodeBody(w, r, &v)
	if err != nil {
		h.fail(w, r, err)
		return "", false
	}
	read(body)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return "", false
	}
	return id, true
}
