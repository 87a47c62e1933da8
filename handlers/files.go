package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/document"
	"acctapi/filestore"
)

// Limits on uploads besides the file size, documented in docs/decisions.md.
const (
	maxFileName = 255
	maxMimeType = 255
	// maxFormFields bounds the bytes of all form fields of an upload
	// together, so that one upload cannot make the server hold megabytes of
	// them. The fields the API reads (three ids, a date, at most 100 label
	// ids) take under 8 KiB.
	maxFormFields = 64 << 10
	// maxPartHeader bounds the header of each part, which mime/multipart
	// would read up to 10 MiB of. A file part's header with a name of 255
	// characters in both of its encodings takes under 4 KiB.
	maxPartHeader    = 16 << 10
	maxFormParts     = 200
	multipartSurplus = 1 << 20 // room for the form fields and part headers
)

// uploadFields are the form fields the upload reads; the others are read
// and dropped.
var uploadFields = map[string]bool{"workspaceId": true, "taskId": true, "folderId": true, "documentDate": true, "labelIds": true}

type fileResponse struct {
	ID                 string           `json:"id"`
	DocumentDate       timestamp        `json:"documentDate"`
	DocumentDateSource *string          `json:"documentDateSource"`
	CreatedAt          timestamp        `json:"createdAt"`
	UpdatedAt          timestamp        `json:"updatedAt"`
	Name               string           `json:"name"`
	MimeType           string           `json:"mimetype"`
	Size               int64            `json:"size"`
	WorkspaceID        string           `json:"workspaceId"`
	CreatedByID        *string          `json:"createdById"`
	TaskID             *string          `json:"taskId"`
	FolderID           *string          `json:"folderId"`
	LabelIDs           []string         `json:"labelIds"`
	Kind               *string          `json:"kind"`
	Analysis           analysisResponse `json:"analysis"`
	PaymentStatus      *string          `json:"paymentStatus"`
	OpenAmount         *string          `json:"openAmount"`
	// Exports are the exports that booked the file, the oldest first.
	Exports []fileExportResponse `json:"exports"`
}

func newFileResponse(f *db.File) fileResponse {
	r := fileResponse{
		ID: f.ID, DocumentDate: timestampOf(f.DocumentDate), DocumentDateSource: f.DocumentDateSource,
		CreatedAt: timestampOf(f.CreatedAt), UpdatedAt: timestampOf(f.UpdatedAt),
		Name: f.Name, MimeType: f.MimeType, Size: f.Size, WorkspaceID: f.WorkspaceID, CreatedByID: f.CreatedByID,
		TaskID: f.TaskID, FolderID: f.FolderID, LabelIDs: f.LabelIDs, Kind: f.Kind, Analysis: newAnalysisResponse(f.Analysis, f.Payment.Direction),
		PaymentStatus: f.Payment.Status, OpenAmount: amountPtr(f.Payment.OpenAmount, documentCurrency(f)),
		Exports: newFileExportsResponse(f.Exports),
	}
	r.Analysis.Booking = newBookingResponse(f.Booking)
	return r
}

// documentCurrency is the currency the file's document states, or "".
func documentCurrency(f *db.File) string {
	if c := f.Analysis.Fields.Value(document.Currency); c != nil {
		return *c
	}
	return ""
}

type fileLinkResponse struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expiresIn"`
}

// upload is what a multipart upload sent: its form fields, and its file,
// written to the store but not yet in place, or read into data.
type upload struct {
	fields   map[string][]string
	file     *filestore.Pending
	data     []byte
	name     string
	partType string
}

// uploadFile answers POST /v1/files.
func (h *Handler) uploadFile(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	up, err := h.readUpload(w, r, "key:"+stateOf(r).keyID, h.uploadLimits.perKey, "under this API key")
	if up.file != nil {
		defer h.files.Discard(up.file)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var v validator
	body := v.body(up.fieldsJSON())
	workspaceID := body.id("workspaceId", required)
	taskID := body.id("taskId", optional)
	folderID := body.id("folderId", optional)
	documentDate := body.time("documentDate", optional)
	labelIDs := body.ids("labelIds", optional)
	name := up.checkFile(&v)
	if err := v.err(); err != nil {
		h.fail(w, r, err)
		return
	}

	var f *db.File
	err = h.keep(r, up, name, func(in db.FileCreate) (err error) {
		in.WorkspaceID, in.TaskID, in.FolderID = workspaceID.Value, valueOrNil(taskID), valueOrNil(folderID)
		in.LabelIDs, in.DocumentDate = labelIDs.Value, valueOrNil(documentDate)
		f, err = h.store.CreateFile(r.Context(), stateOf(r).clientID, in)
		return err
	})
	respond(h, w, r, http.StatusCreated, f, err, newFileResponse)
}

// checkFile adds an issue to v for an upload without a file part, or with a
// name the store does not take, and returns the name to record, without
// control and format characters: "upload" when the part gave none.
func (up *upload) checkFile(v *validator) string {
	if up.file == nil {
		v.add(typeIssue([]any{"file"}, "file", "undefined"))
	}
	return up.checkName(v)
}

// checkName adds an issue to v for a file name the store does not take,
// and returns the name to record (see checkFile).
func (up *upload) checkName(v *validator) string {
	name := up.name
	if utf8.ValidString(name) {
		// filename* can carry any byte, a NUL included.
		name = document.DropInvisible(name, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
	}
	if name == "" {
		name = "upload"
	}
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxFileName {
		v.add(sizeIssue("too_big", []any{"file", "name"}, "string", maxFileName,
			fmt.Sprintf("File names must be valid UTF-8 of at most %d characters", maxFileName)))
	}
	return name
}

// keep puts the upload's bytes in place under a new id and has record write
// their row, given what the bytes say of the file. Bytes whose row failed
// and that could not be removed either are logged, for an operator to find.
func (h *Handler) keep(r *http.Request, up *upload, name string, record func(db.FileCreate) error) error {
	id := db.NewID()
	err := h.files.Keep(up.file, id, func() error {
		return record(db.FileCreate{ID: id, Name: name, MimeType: mimeType(up.partType, up.file.Head),
			Size: up.file.Size, SHA256: up.file.SHA256})
	})
	if leftover := (*filestore.LeftoverError)(nil); errors.As(err, &leftover) {
		h.logFailure(r, "remove the bytes of an unrecorded upload", leftover)
	}
	return err
}

// readUpload reads a multipart/form-data body whose file part streams to
// the file store (never whole in memory), up to the store's limit. The
// upload counts as one of owner's, which may run max at once (what names
// owner in the answer past it).
func (h *Handler) readUpload(w http.ResponseWriter, r *http.Request, owner string, max int, what string) (*upload, error) {
	return h.readMultipart(w, r, owner, max, what, h.maxUpload, func(up *upload, part io.Reader) (err error) {
		up.file, err = h.files.Write(part, h.maxUpload)
		return err
	})
}

// readInMemory reads a multipart/form-data body whose file part, at most
// limit bytes, is read whole into the upload's data: for a file the
// handler parses before it keeps it (a bank statement). The upload counts
// as one of the key's.
func (h *Handler) readInMemory(w http.ResponseWriter, r *http.Request, limit int64) (*upload, error) {
	return h.readMultipart(w, r, "key:"+stateOf(r).keyID, h.uploadLimits.perKey, "under this API key", limit,
		func(up *upload, part io.Reader) (err error) {
			// An empty file part is a file all the same (data not nil):
			// the parser says why it is refused.
			if up.data, err = io.ReadAll(io.LimitReader(part, limit+1)); err == nil && int64(len(up.data)) > limit {
				err = filestore.ErrTooLarge
			}
			return err
		})
}

// readMultipart reads a multipart/form-data body: keep takes the file part,
// of at most limit bytes (filestore.ErrTooLarge past it), and the other
// parts are form fields. The upload counts as one of owner's, and must keep
// the minimum rate.
func (h *Handler) readMultipart(w http.ResponseWriter, r *http.Request, owner string, max int, what string, limit int64,
	keep func(up *upload, part io.Reader) error) (*upload, error) {
	up := &upload{fields: map[string][]string{}}
	mediaType, params, err := mime.ParseMediaType(contentType(r))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return up, errBadRequest("unsupported_media_type", "send the upload as Content-Type: multipart/form-data")
	}
	if r.ContentLength > limit+multipartSurplus {
		return up, errFileTooLarge(limit)
	}
	release, err := h.uploads.take(owner, max, h.uploadLimits.perServer, what)
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(uploadBusyRetryAfter))
		return up, err
	}
	defer release()
	rc := http.NewResponseController(w)
	stream := &progress{r: http.MaxBytesReader(w, r.Body, limit+multipartSurplus), extend: func(t time.Time) {
		// Where a connection has no deadlines, the server's timeouts stay.
		_ = rc.SetReadDeadline(t)
		_ = rc.SetWriteDeadline(t)
	}, start: time.Now(), grace: h.uploadLimits.grace, minRate: h.uploadLimits.minRate}
	stream.extend(stream.deadline(stream.start))
	body := &tailReader{r: stream, keep: len(params["boundary"]) + 1024}
	headers := &partHeaderLimit{r: body}
	parts := multipart.NewReader(headers, params["boundary"])
	fieldsLeft := int64(maxFormFields)
	for n := 0; ; n++ {
		headers.left = maxPartHeader
		part, err := parts.NextPart()
		headers.left = -1
		if errors.Is(err, io.EOF) {
			// NextPart also ends on a body cut short: only a body that
			// carried the closing delimiter is complete.
			if !bytes.Contains(body.tail, []byte("--"+params["boundary"]+"--")) {
				return up, errBadRequest("invalid_multipart", "the multipart body is malformed or ended early")
			}
			return up, nil
		}
		if err != nil {
			return up, requestBodyError(err, limit)
		}
		if n == maxFormParts {
			return up, errBadRequest("invalid_multipart", fmt.Sprintf("an upload has at most %d parts", maxFormParts))
		}
		name := part.FormName()
		if name != "file" {
			// Only the first value of a field counts, but every value of labelIds.
			keep := uploadFields[name] && (up.fields[name] == nil || name == "labelIds")
			var value bytes.Buffer
			dst := io.Discard
			if keep {
				dst = &value
			}
			size, err := io.Copy(dst, io.LimitReader(part, maxFormFields+1))
			switch {
			case err != nil:
				return up, requestBodyError(err, limit)
			case size > maxFormFields:
				return up, errBadRequest("invalid_multipart", fmt.Sprintf("the form field %q exceeds %d bytes", name, maxFormFields))
			case size > fieldsLeft:
				return up, errBadRequest("invalid_multipart", fmt.Sprintf("the form fields exceed %d bytes together", maxFormFields))
			}
			fieldsLeft -= size
			if keep {
				up.fields[name] = append(up.fields[name], value.String())
			}
			continue
		}
		if up.file != nil || up.data != nil {
			return up, errBadRequest("invalid_multipart", "an upload holds one file")
		}
		_, disposition, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		up.name, up.partType = disposition["filename"], part.Header.Get("Content-Type")
		content := &readErrors{r: part}
		err = keep(up, content)
		switch {
		case errors.Is(err, filestore.ErrTooLarge):
			return up, errFileTooLarge(limit)
		case content.err != nil:
			return up, requestBodyError(content.err, limit)
		case err != nil:
			return up, err
		}
	}
}

func errFileTooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large",
		fmt.Sprintf("the file exceeds %d bytes", limit)}
}

// fieldsJSON turns the form fields into the JSON object the validator reads:
// one value each (the first sent), labelIds a list of every value sent,
// each split at commas.
func (up *upload) fieldsJSON() json.RawMessage {
	object := map[string]any{}
	for name, values := range up.fields {
		if name != "labelIds" {
			object[name] = values[0]
			continue
		}
		labels := []string{}
		for _, v := range values {
			for _, id := range strings.Split(v, ",") {
				if id = strings.TrimSpace(id); id != "" {
					labels = append(labels, id)
				}
			}
		}
		object[name] = labels
	}
	raw, _ := json.Marshal(object)
	return raw
}

// mimeType is the part's Content-Type when it says something, else what the
// first bytes look like. ParseMediaType takes a lone token ("0") too, which
// is no media type: a download could not send it as its Content-Type.
func mimeType(partType string, head []byte) string {
	if t, _, err := mime.ParseMediaType(partType); err == nil && strings.Contains(t, "/") && t != "application/octet-stream" && len(partType) <= maxMimeType {
		return partType
	}
	return http.DetectContentType(head)
}

// getFile answers GET /v1/files/{id}.
func (h *Handler) getFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	serveOne(h, w, r, p, clientOf, h.store.FindFile, newFileResponse)
}

// fileLink answers GET /v1/files/{id}/content with a signed download link:
// the bucket's own pre-signed GET when the files are in one, else a link to
// the download route.
func (h *Handler) fileLink(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.pathID(w, r, p)
	if !ok {
		return
	}
	f, err := h.store.FindFile(r.Context(), stateOf(r).clientID, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var link string
	if h.presigned != nil {
		link, err = h.presigned.SignedURL(r.Context(), f.ID, auth.LinkLifetime, servedType(f.MimeType), contentDisposition(f.Name))
	} else {
		link, err = h.localLink(r.Context(), f.ID)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, fileLinkResponse{URL: link, ExpiresIn: int(auth.LinkLifetime.Seconds())})
}

// localLink is a link to the download route, signed by acctapi.
func (h *Handler) localLink(ctx context.Context, id string) (string, error) {
	expires, signature, err := h.signer.Sign(ctx, id)
	if err != nil {
		return "", err
	}
	return h.baseURL + "/files/" + id + "/download?" + url.Values{
		"expires": {strconv.FormatInt(expires, 10)}, "signature": {signature},
	}.Encode(), nil
}

// downloadFile answers GET and HEAD /v1/files/{id}/download: no key, the
// signature is the credential, and the route has limits per address and per
// link of its own. It streams the bytes, with Range and ETag support, once
// they are known to match the recorded size and SHA-256.
func (h *Handler) downloadFile(w http.ResponseWriter, r *http.Request, p httprouter.Params) {
	id, ok := h.linkedID(w, r, p)
	if !ok {
		return
	}
	f, err := h.store.FindFileForDownload(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.served == nil {
		// The files are in a bucket, which serves them: a link acctapi
		// signed before the store moved there names no bytes here.
		h.fail(w, r, db.Errorf(db.ENOTFOUND, "file %s not found", f.ID))
		return
	}
	h.serveStored(w, r, f)
}

// linkedID checks a download route's limits and its link's signature, and
// gives the id the link is signed for; false when it answered.
func (h *Handler) linkedID(w http.ResponseWriter, r *http.Request, p httprouter.Params) (string, bool) {
	addr := h.limiter.Allow("download-addr:"+h.clientHost(r), downloadAddrLimit, time.Minute)
	if err := rateLimited(w, addr); err != nil {
		h.fail(w, r, err)
		return "", false
	}
	id, ok := h.pathID(w, r, p)
	if !ok {
		return "", false
	}
	if err := h.checkLink(w, r, id, addr); err != nil {
		h.fail(w, r, err)
		return "", false
	}
	return id, true
}

// serveStored streams the bytes acctapi keeps for f, once they are known
// to match its recorded size and SHA-256.
func (h *Handler) serveStored(w http.ResponseWriter, r *http.Request, f *db.File) {
	content, err := h.served.OpenFile(f.ID)
	if err != nil {
		h.fail(w, r, fmt.Errorf("open the bytes of file %s: %w", f.ID, err))
		return
	}
	defer content.Close()
	if err := h.verifyFile(r, content, f); err != nil {
		h.log.LogAttrs(r.Context(), slog.LevelError, "file integrity", slog.String("request_id", stateOf(r).id),
			slog.String("file_id", f.ID), slog.Any("error", err))
		h.fail(w, r, err)
		return
	}
	h.serveContent(w, r, f, content)
}

// verifyContent checks that the bytes on disk are the ones recorded, and
// rewinds them: corrupt data is never served.
func verifyContent(ctx context.Context, content io.ReadSeeker, f *db.File) error {
	hash := sha256.New()
	n, err := io.Copy(hash, content)
	if err != nil {
		return fmt.Errorf("read file %s: %w", f.ID, err)
	}
	if n != f.Size || !bytes.Equal(hash.Sum(nil), f.SHA256) {
		return fmt.Errorf("file %s: %d bytes on disk with another SHA-256 than the %d recorded", f.ID, n, f.Size)
	}
	if _, err := content.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind file %s: %w", f.ID, err)
	}
	return ctx.Err()
}

// contentDisposition makes a file name safe for the header: an ASCII
// fallback without quotes, backslashes, path separators, control
// characters, percent signs or RFC 2047 encoded words, and the name as RFC
// 6266 filename* when they differ. Both forms drop control and format
// characters: a right-to-left override or another bidi control could make
// "invoice\u202Efdp.exe" show as "invoiceexe.pdf".
func contentDisposition(name string) string {
	var ascii, exact strings.Builder
	for _, c := range name {
		switch {
		case unicode.IsControl(c) || unicode.Is(unicode.Cf, c):
			continue
		case c == '/' || c == '\\':
			c = '_'
		}
		exact.WriteRune(c)
		// Some clients percent-decode the plain filename, or decode an
		// encoded word (=?utf-8?b?...?=) in it, which would let the
		// fallback name another file than the one shown.
		if c < utf8.RuneSelf && c != '"' && c != ';' && c != '%' {
			ascii.WriteRune(c)
		} else {
			ascii.WriteByte('_')
		}
	}
	fallback := strings.Trim(strings.ReplaceAll(ascii.String(), "=?", "_"), " .")
	if fallback == "" {
		fallback = "download"
	}
	header := `attachment; filename="` + fallback + `"`
	if exact.String() != fallback {
		header += "; filename*=UTF-8''" + rfc5987(exact.String())
	}
	return header
}

// rfc5987 percent-encodes every byte but the attr-chars of RFC 5987.
func rfc5987(s string) string {
	const attrChars = "!#$&+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(attrChars, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
