package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"sync"

	"github.com/julienschmidt/httprouter"

	"acctapi/db"
)

// Safe retries, as the large payment APIs define them: the first answer to a
// POST or PATCH sent with an Idempotency-Key is stored and replayed, status
// and body, to every retry with the same key for 24 hours; the same key with
// a different request is refused; retries that arrive while the first is
// running wait for its answer instead of running again.

const (
	idempotencyHeader   = "Idempotency-Key"
	maxIdempotencyKey   = 255
	replayedHeader      = "Idempotent-Replayed"
	idempotencyKeyField = "idempotency-key"
)

// idempotencyLocks holds the keys whose requests are running, so that a
// retry waits for the answer of the request it repeats. One process owns
// the database, so a lock in memory is the whole story.
type idempotencyLocks struct {
	mu      sync.Mutex
	running map[db.IdempotencyKey]chan struct{}
}

// acquire waits until no request with k runs and claims k; release gives it
// back.
func (l *idempotencyLocks) acquire(ctx context.Context, k db.IdempotencyKey) (release func(), err error) {
	for {
		l.mu.Lock()
		done, busy := l.running[k]
		if !busy {
			if l.running == nil {
				l.running = map[db.IdempotencyKey]chan struct{}{}
			}
			done = make(chan struct{})
			l.running[k] = done
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.running, k)
				l.mu.Unlock()
				close(done)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// idempotencyKeyOf returns the request's Idempotency-Key, whether it sent
// one, and an issue when the header is not one usable key.
func idempotencyKeyOf(r *http.Request) (string, bool, error) {
	values := r.Header.Values(idempotencyHeader)
	if len(values) == 0 {
		return "", false, nil
	}
	path := []any{"headers", idempotencyKeyField}
	var v validator
	key := values[0]
	switch {
	case len(values) > 1:
		v.add(severalHeaders("Idempotency-Key", path))
	case key == "":
		v.add(sizeIssue("too_small", path, "string", 1, "String must contain at least 1 character(s)"))
	case len(key) > maxIdempotencyKey:
		v.add(sizeIssue("too_big", path, "string", maxIdempotencyKey, "String must contain at most 255 character(s)"))
	case !printableASCII(key):
		v.add(issue{Code: "invalid_string", Path: path, Validation: "regex",
			Message: "an Idempotency-Key is printable ASCII without spaces; a UUID is a good one"})
	}
	return key, true, v.err()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

type idempotencyKeyInContext struct{}

// withIdempotencyKey returns a context whose writes record k in their own
// transaction (see IdempotencyKeyOf).
func withIdempotencyKey(ctx context.Context, k db.IdempotencyKey) context.Context {
	return context.WithValue(ctx, idempotencyKeyInContext{}, k)
}

// IdempotencyKeyOf returns the Idempotency-Key of the request whose context
// ctx is. cmd opens the store with it, so that a request's write records its
// key in the same transaction: a write that committed is then known to have
// happened even if the server stops before it recorded the answer.
func IdempotencyKeyOf(ctx context.Context) (db.IdempotencyKey, bool) {
	k, ok := ctx.Value(idempotencyKeyInContext{}).(db.IdempotencyKey)
	return k, ok
}

// serveIdempotent runs fn for a request that carries an Idempotency-Key:
// it replays the answer recorded for the key, or runs fn and records its
// answer before sending it.
func (h *Handler) serveIdempotent(w http.ResponseWriter, r *http.Request, p httprouter.Params, fn httprouter.Handle, key string) {
	st := stateOf(r)
	k := db.IdempotencyKey{APIKeyID: st.keyID, Key: key}
	release, err := h.idempotency.acquire(r.Context(), k)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer release()

	answer, err := h.store.IdempotentAnswer(r.Context(), k)
	switch {
	case err == nil:
		h.replay(w, r, answer)
		return
	case db.ErrorCode(err) != db.ENOTFOUND:
		h.fail(w, r, err)
		return
	}

	limit := h.bodyLimit(r)
	digest := make(chan []byte, 1)
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { digest <- fingerprint(r, st.clientID, pr, limit) }()
	tee := io.TeeReader(r.Body, &cappedWriter{w: pw, room: limit})
	body := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{tee, body}
	captured := &capturedAnswer{ResponseWriter: w}

	// The request runs to its end even if its caller hangs up, so that the
	// retry the caller will send gets the answer instead of running again.
	fn(captured, r.WithContext(withIdempotencyKey(context.WithoutCancel(r.Context()), k)), p)

	if captured.status == 0 {
		// Every handler answers; one that did not has nothing to record.
		return
	}
	if captured.status < 500 && captured.status != http.StatusRequestEntityTooLarge {
		// The digest covers the whole body, also what the handler left unread.
		_, drainErr := io.Copy(io.Discard, io.LimitReader(tee, limit))
		pw.Close()
		sum := <-digest
		answer := db.IdempotentAnswer{Fingerprint: sum, Status: captured.status,
			ContentType: w.Header().Get("Content-Type"), Body: captured.body.Bytes()}
		if st.shownOnce && captured.status < 300 {
			answer.Status, answer.ContentType, answer.Body = errShownOnce.Status, "application/json", errorJSON(errShownOnce)
		}
		if drainErr == nil {
			h.saveAnswer(r, k, answer)
		}
	} else {
		pw.Close()
		<-digest
	}
	w.WriteHeader(captured.status)
	w.Write(captured.body.Bytes())
}

// errShownOnce is what a retry gets in place of an answer that held a
// secret shown once: the first request made it, and nothing keeps it.
var errShownOnce = &apiError{http.StatusConflict, "conflict", "idempotency_secret_not_kept",
	"the request first sent with this Idempotency-Key was carried out, and its answer held a token that is shown once only: " +
		"list the sessions to find the link, revoke it if its token is lost, and make a new one"}

// errorJSON is the body fail writes for e.
func errorJSON(e *apiError) []byte {
	body, _ := json.Marshal(errorBody{e.Status, e.Type, e.Code, e.Message})
	return append(body, '\n')
}

// saveAnswer records an answer. A failure only costs retries their replay,
// so it is logged and the answer still goes out.
func (h *Handler) saveAnswer(r *http.Request, k db.IdempotencyKey, a db.IdempotentAnswer) {
	if err := h.store.SaveIdempotentAnswer(context.WithoutCancel(r.Context()), k, a); err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "record the answer of an idempotent request",
			slog.String("request_id", stateOf(r).id), slog.Any("error", err))
	}
}

// replay answers a retry with the recorded answer, after checking that it
// repeats the request that got it.
func (h *Handler) replay(w http.ResponseWriter, r *http.Request, a *db.IdempotentAnswer) {
	if a.Fingerprint == nil {
		h.fail(w, r, &apiError{http.StatusConflict, "conflict", "idempotency_answer_lost",
			"the request first sent with this Idempotency-Key was carried out, but the server stopped before it recorded the answer: read the resource to see its state"})
		return
	}
	if !bytes.Equal(fingerprint(r, stateOf(r).clientID, r.Body, h.bodyLimit(r)), a.Fingerprint) {
		h.fail(w, r, &validationError{issues: []issue{{Code: "custom", Path: []any{"headers", idempotencyKeyField},
			Message: "this Idempotency-Key was used for a different request in the last 24 hours: send a new key with a new request"}}})
		return
	}
	w.Header().Set("Content-Type", a.ContentType)
	w.Header().Set(replayedHeader, "true")
	w.WriteHeader(a.Status)
	w.Write(a.Body)
}

// bodyLimit is the most of a request's body that can matter to its answer:
// a longer body is refused with 413, and 413s are not recorded.
func (h *Handler) bodyLimit(r *http.Request) int64 {
	if mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType == "multipart/form-data" {
		return h.maxUpload + multipartSurplus
	}
	return maxJSONBody
}

// fingerprint digests what makes a request the request it is: method, path,
// client, media type and body, read from body up to limit bytes. Bodies are
// compared by meaning where clients may vary the bytes between retries: JSON
// with its keys in order, multipart by its parts, without the boundary,
// which curl and most clients draw at random per request.
func fingerprint(r *http.Request, clientID string, body io.Reader, limit int64) []byte {
	body = io.LimitReader(body, limit)
	defer io.Copy(io.Discard, body)
	d := sha256.New()
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	for _, s := range []string{r.Method, r.URL.Path, clientID, mediaType} {
		writeField(d, []byte(s))
	}
	switch {
	case mediaType == "application/json":
		raw, _ := io.ReadAll(body)
		writeField(d, canonicalJSON(raw))
	case mediaType == "multipart/form-data" && params["boundary"] != "":
		parts := multipart.NewReader(body, params["boundary"])
		for {
			part, err := parts.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				writeField(d, []byte("malformed"))
				break
			}
			content := sha256.New()
			io.Copy(content, part)
			for _, s := range []string{part.FormName(), part.FileName(), part.Header.Get("Content-Type")} {
				writeField(d, []byte(s))
			}
			writeField(d, content.Sum(nil))
		}
	default:
		raw, _ := io.ReadAll(body)
		writeField(d, raw)
	}
	return d.Sum(nil)
}

// writeField writes b with its length, so that no two lists of fields
// digest alike.
func writeField(d hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	d.Write(n[:])
	d.Write(b)
}

// canonicalJSON re-encodes a JSON document with its object keys sorted;
// anything else is returned as it is.
func canonicalJSON(raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return raw
	}
	canonical, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return canonical
}

// cappedWriter passes on at most room bytes and swallows the rest, so that
// a tee into the fingerprint never fails the handler's reads.
type cappedWriter struct {
	w    io.Writer
	room int64
}

func (c *cappedWriter) Write(b []byte) (int, error) {
	if c.room > 0 {
		n := min(int64(len(b)), c.room)
		c.room -= n
		if _, err := c.w.Write(b[:n]); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// capturedAnswer holds a handler's answer until it is recorded. Headers go
// straight to the real writer's map; they are sent with the status.
type capturedAnswer struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *capturedAnswer) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *capturedAnswer) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(b)
}

// Unwrap lets http.ResponseController reach the connection, for the
// deadlines of uploads.
func (c *capturedAnswer) Unwrap() http.ResponseWriter { return c.ResponseWriter }
