package handlers

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// Limits of the public download route per minute, documented in
// docs/security.md: a link needs no key, so the key's limit cannot meter it.
// A link (a file id and an expiry with a valid signature) may be fetched
// 120 times, and one address may send 600 requests to the route, valid or
// not.
const (
	downloadLinkLimit = 120
	downloadAddrLimit = 600
)

// checkLink verifies the signature and the expiry of a download link, then
// counts the request against the link's limit, writing the headers of the
// nearer of it and addr, the address's decision.
func (h *Handler) checkLink(w http.ResponseWriter, r *http.Request, id string, addr auth.Decision) error {
	q := r.URL.Query()
	err := auth.ErrInvalidSignature
	expires, parseErr := strconv.ParseInt(q.Get("expires"), 10, 64)
	if parseErr == nil {
		err = h.signer.Verify(r.Context(), id, expires, q.Get("signature"))
	}
	switch {
	case errors.Is(err, auth.ErrInvalidSignature):
		return &apiError{http.StatusForbidden, "auth_error", "invalid_signature", "the download link's signature is not valid"}
	case errors.Is(err, auth.ErrLinkExpired):
		return &apiError{http.StatusGone, "bad_request", "link_expired", "the download link has expired: ask for a new one"}
	case err != nil:
		return err
	}
	// Only genuine links are counted, so that forged ones can neither spend
	// a link's requests nor fill the limiter. The id and the parsed expiry
	// name the link however its query was spelt.
	link := h.limiter.Allow("download-link:"+id+"/"+strconv.FormatInt(expires, 10), downloadLinkLimit, time.Minute)
	return rateLimited(w, nearer(addr, link))
}

// nearer is the decision to report of two limits that a request counts
// against: the one that refuses it, else the one with fewer requests left.
func nearer(a, b auth.Decision) auth.Decision {
	if !b.Allowed || (a.Allowed && b.Remaining < a.Remaining) {
		return b
	}
	return a
}

// maxVerifiedFiles bounds the files verifiedFiles remembers, at a few
// hundred bytes each.
const maxVerifiedFiles = 4096

// verifiedFiles remembers the stored files whose bytes were hashed and
// matched their record, with what the file system said of each then, so
// that a download reads a file once instead of twice, and a range or a
// revalidation does not read it whole. A file is hashed again when its
// inode (device and number), size or modification time has changed.
type verifiedFiles struct {
	mu    sync.Mutex
	files map[string]verifiedFile
}

type verifiedFile struct {
	info   os.FileInfo
	sha256 []byte // the record's, which the bytes matched
}

// has says whether the file, as info describes it now, is the one that
// matched the record f.
func (v *verifiedFiles) has(f *db.File, info os.FileInfo) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	got, ok := v.files[f.ID]
	return ok && sameFile(got.info, info) && info.Size() == f.Size && bytes.Equal(got.sha256, f.SHA256)
}

// add remembers that the file as info describes it matched the record f.
// When full, it forgets another file, whichever the map gives first.
func (v *verifiedFiles) add(f *db.File, info os.FileInfo) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.files == nil {
		v.files = map[string]verifiedFile{}
	}
	if _, ok := v.files[f.ID]; !ok && len(v.files) >= maxVerifiedFiles {
		for id := range v.files {
			delete(v.files, id)
			break
		}
	}
	v.files[f.ID] = verifiedFile{info: info, sha256: f.SHA256}
}

// sameFile says whether two descriptions are of the same file, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// verifyFile checks that the bytes of the open file are the ones recorded,
// and leaves it at its start. It hashes them unless they were hashed
// before and the file is unchanged since; it remembers the verdict only
// when the file did not change while it was hashed.
func (h *Handler) verifyFile(r *http.Request, content *os.File, f *db.File) error {
	before, err := content.Stat()
	if err != nil {
		return fmt.Errorf("stat file %s: %w", f.ID, err)
	}
	if h.verified.has(f, before) {
		return nil
	}
	if err := verifyContent(r.Context(), content, f); err != nil {
		return err
	}
	if after, err := content.Stat(); err == nil && sameFile(before, after) {
		h.verified.add(f, after)
	}
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "file verified", slog.String("request_id", stateOf(r).id),
		slog.String("file_id", f.ID), slog.Int64("bytes", f.Size))
	return nil
}

// servedTypes are the media types a download is sent as, as uploaded:
// documents, images and archives that browsers do not run. Any other type
// (text/html, text/javascript, image/svg+xml...) is the uploader's choice of
// what a browser would do with the bytes, and is sent as
// application/octet-stream.
var servedTypes = func() map[string]bool {
	set := map[string]bool{}
	for _, t := range []string{
		"application/pdf",
		"image/png", "image/jpeg", "image/gif", "image/webp", "image/heic", "image/heif", "image/tiff", "image/bmp",
		"application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation",
		"application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet",
		"application/vnd.oasis.opendocument.presentation",
		"text/plain", "text/csv", "application/xml", "text/xml",
		"application/zip", "application/x-zip-compressed",
	} {
		set[t] = true
	}
	return set
}()

// servedType is the Content-Type a file recorded with mimeType is sent
// with: its media type when servedTypes has it, with a text type's
// charset, else application/octet-stream.
func servedType(mimeType string) string {
	t, params, err := mime.ParseMediaType(mimeType)
	if err != nil || !servedTypes[t] {
		return "application/octet-stream"
	}
	if charset := params["charset"]; charset != "" && strings.HasPrefix(t, "text/") {
		if typ := mime.FormatMediaType(t, map[string]string{"charset": charset}); typ != "" {
			return typ
		}
	}
	return t
}

// serveContent sends the file's bytes with http.ServeContent, which answers
// Range, If-None-Match, If-Range and HEAD. Its own error answers (a 416, or
// a 500 when the bytes cannot be sized) would be plain text with Go's
// message; they go through fail instead.
func (h *Handler) serveContent(w http.ResponseWriter, r *http.Request, f *db.File, content io.ReadSeeker) {
	if ranges := r.Header.Get("Range"); ranges != "" {
		r.Header.Set("Range", satisfiable(ranges, f.Size))
	}
	header := w.Header()
	header.Set("Content-Type", servedType(f.MimeType))
	header.Set("Content-Disposition", contentDisposition(f.Name))
	header.Set("ETag", `"`+hex.EncodeToString(f.SHA256)+`"`)
	header.Set("Cache-Control", "private, no-cache")
	rc := http.NewResponseController(w)
	extend := func(t time.Time) { _ = rc.SetWriteDeadline(t) } // where a connection has no deadlines, the server's stay
	extend(time.Now().Add(transferIdle))
	sw := &serveErrors{ResponseWriter: w}
	http.ServeContent(sw, r, "", f.UpdatedAt, &progressSeeker{progress: progress{r: content, extend: extend}, seeker: content})
	if sw.status == 0 {
		return
	}
	// An error answer carries none of the download's headers but the
	// security headers every answer has.
	header.Del("Content-Disposition")
	header.Del("ETag")
	header.Del("Last-Modified")
	header["Cache-Control"] = securityHeaders["Cache-Control"]
	if sw.status == http.StatusRequestedRangeNotSatisfiable {
		header.Set("Content-Range", "bytes */"+strconv.FormatInt(f.Size, 10))
		h.fail(w, r, errRangeNotSatisfiable(f.Size))
		return
	}
	h.fail(w, r, fmt.Errorf("serve file %s: http.ServeContent answered %d", f.ID, sw.status))
}

// serveErrors stands between http.ServeContent and the client: it keeps
// the error answers ServeContent writes itself (416 and 5xx) from the
// client, recording their status and dropping their plain-text body, and
// passes the others on. A 412 has no body and passes too.
type serveErrors struct {
	http.ResponseWriter
	status int
}

func (s *serveErrors) WriteHeader(status int) {
	if status == http.StatusRequestedRangeNotSatisfiable || status >= 500 {
		s.status = status
		return
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *serveErrors) Write(b []byte) (int, error) {
	if s.status != 0 {
		return len(b), nil
	}
	return s.ResponseWriter.Write(b)
}

// satisfiable drops from a Range header the suffix ranges of length zero
// ("-0"), which RFC 9110 (section 14.1.1) calls unsatisfiable but
// http.ServeContent serves as an empty 206 ("bytes 12-11/12"). When no
// range is left it asks for the first byte past the end instead, which
// ServeContent answers 416 once If-Range and the other conditions allow a
// range at all (and 200 for an empty file, as it answers any range of one).
func satisfiable(ranges string, size int64) string {
	const unit = "bytes="
	if !strings.HasPrefix(ranges, unit) {
		return ranges
	}
	var kept []string
	dropped, left := false, false
	for _, spec := range strings.Split(ranges[len(unit):], ",") {
		start, end, ok := strings.Cut(spec, "-")
		n, err := strconv.ParseInt(textproto.TrimString(end), 10, 64)
		if ok && textproto.TrimString(start) == "" && err == nil && n == 0 {
			dropped = true
			continue
		}
		kept = append(kept, spec)
		left = left || textproto.TrimString(spec) != ""
	}
	switch {
	case !dropped:
		return ranges
	case !left:
		return unit + strconv.FormatInt(size, 10) + "-"
	}
	return unit + strings.Join(kept, ",")
}
