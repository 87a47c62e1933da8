package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"unicode/utf16"
	"unicode/utf8"

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
	// shownOnce says that the answer holds a secret the server keeps no
	// copy of (a collect link's token): its Idempotency-Key records a
	// refusal to show it again instead.
	shownOnce bool
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
	if mediaType, _, err := mime.ParseMediaType(contentType(r)); err != nil || mediaType != "application/json" {
		return nil, errBadRequest("unsupported_media_type", "send the body as Content-Type: application/json")
	}
	if !json.Valid(body) {
		return nil, errBadRequest("invalid_json", "the request body is not valid JSON")
	}
	// encoding/json would turn bytes that are not UTF-8, and lone surrogate
	// escapes, into U+FFFD without a word; an upload's file name that is not
	// UTF-8 is refused, and so is a JSON string. Outside its strings a valid
	// JSON text is ASCII, so the whole body can be checked at once.
	if !utf8.Valid(body) || loneSurrogate(body) {
		return nil, errBadRequest("invalid_json",
			`the request body is not valid JSON: its strings must be UTF-8, without lone surrogate escapes such as \ud800`)
	}
	return v.body(body), nil
}

// loneSurrogate reports whether a valid JSON text escapes one half of a
// UTF-16 surrogate pair without the other (\ud800 alone). In valid JSON
// every backslash starts an escape within a string, and \u is followed by
// four hex digits.
func loneSurrogate(body []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if body[i+1] != 'u' {
			i += 2
			continue
		}
		r := hexRune(body[i+2 : i+6])
		i += 6
		if !utf16.IsSurrogate(r) {
			continue
		}
		// Only a high half followed by an escaped low half makes a pair.
		if len(body) < i+6 || body[i] != '\\' || body[i+1] != 'u' ||
			utf16.DecodeRune(r, hexRune(body[i+2:i+6])) == utf8.RuneError {
			return true
		}
		i += 6
	}
}

// hexRune is the value of the hex digits of a \u escape.
func hexRune(digits []byte) rune {
	var r rune
	for _, c := range digits {
		switch {
		case c <= '9':
			r = r<<4 | rune(c-'0')
		case c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			r = r<<4 | rune(c-'a'+10)
		}
	}
	return r
}

// severalHeaders is the issue of a header sent more than once. Servers and
// proxies differ in which one they pass on, so none of them is used.
func severalHeaders(name string, path []any) issue {
	return issue{Code: "custom", Path: path, Message: "send one " + name + " header, not several"}
}

// contentType is the request's one Content-Type, or "" when it sent none or
// several: a body whose type is in doubt is not read as any of them.
func contentType(r *http.Request) string {
	if values := r.Header.Values("Content-Type"); len(values) == 1 {
		return values[0]
	}
	return ""
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
