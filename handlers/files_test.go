package handlers

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"acctapi/auth"
	"acctapi/document"
)

// ---- helpers ---------------------------------------------------------------

// flFileFields are the eighteen fields of a file in the API, every one always present.
var flFileFields = []string{"analysis", "createdAt", "createdById", "documentDate", "documentDateSource", "exports", "folderId", "id",
	"kind", "labelIds", "mimetype", "name", "openAmount", "paymentStatus", "size", "taskId", "updatedAt", "workspaceId"}

// flFile is a File as the API answers it.
type flFile struct {
	ID           string   `json:"id"`
	DocumentDate string   `json:"documentDate"`
	CreatedAt    string   `json:"createdAt"`
	UpdatedAt    string   `json:"updatedAt"`
	Name         string   `json:"name"`
	MimeType     string   `json:"mimetype"`
	Size         int64    `json:"size"`
	WorkspaceID  string   `json:"workspaceId"`
	CreatedByID  *string  `json:"createdById"`
	TaskID       *string  `json:"taskId"`
	FolderID     *string  `json:"folderId"`
	LabelIDs     []string `json:"labelIds"`

	DocumentDateSource *string        `json:"documentDateSource"`
	Kind               *string        `json:"kind"`
	Analysis           flAnalysis     `json:"analysis"`
	PaymentStatus      *string        `json:"paymentStatus"`
	OpenAmount         *string        `json:"openAmount"`
	Exports            []flFileExport `json:"exports"`
}

// flFileExport is an export that booked the file.
type flFileExport struct {
	ID string `json:"id"`
	At string `json:"at"`
}

// flAnalysis is a File's analysis as the API answers it.
type flAnalysis struct {
	Status     string          `json:"status"`
	Source     *string         `json:"source"`
	Reason     *string         `json:"reason"`
	Language   *string         `json:"language"`
	AnalyzedAt *string         `json:"analyzedAt"`
	Fields     json.RawMessage `json:"fields"`
	Direction  *string         `json:"direction"`
	// FieldSources, Confidence and Warnings: by field name.
	FieldSources map[string]string  `json:"fieldSources"`
	Confidence   map[string]float64 `json:"confidence"`
	Warnings     []string           `json:"warnings"`
	// Booking is how the document is booked; null until exported.
	Booking json.RawMessage `json:"booking"`
}

// flPending is the analysis of a file not yet read: every field the
// reading's, none with a value.
func flPending() flAnalysis {
	sources := map[string]string{}
	for _, name := range document.FieldNames {
		sources[name] = "analysis"
	}
	return flAnalysis{Status: "pending", FieldSources: sources, Confidence: map[string]float64{}, Warnings: []string{}}
}

// flLinkBody is a File download link.
type flLinkBody struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expiresIn"`
}

// flStrict decodes raw into v, refusing fields v does not know, and checks
// that raw holds exactly the fields want.
func flStrict(t *testing.T, raw []byte, v any, want []string) {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("fields of %s: got %v, want %v", raw, keys, want)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// flDecodeFile checks the status and the fields of a File answer and decodes it.
func flDecodeFile(t *testing.T, res *response, status int) flFile {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var f flFile
	flStrict(t, res.body, &f, flFileFields)
	var raw map[string]json.RawMessage
	json.Unmarshal(res.body, &raw)
	if !bytes.HasPrefix(raw["labelIds"], []byte("[")) {
		t.Errorf("labelIds: got %s, want an array", raw["labelIds"])
	}
	return f
}

// flPart is one part of a multipart body.
type flPart struct {
	header  textproto.MIMEHeader
	content io.Reader
}

// flField is a form field.
func flField(name, value string) flPart {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": name}))
	return flPart{h, strings.NewReader(value)}
}

// flFilePart is the file part, with the file name (RFC 2231-encoded when it
// needs to be) and the part's Content-Type when contentType is not "".
func flFilePart(filename, contentType string, content []byte) flPart {
	return flFileStream(filename, contentType, bytes.NewReader(content))
}

func flFileStream(filename, contentType string, content io.Reader) flPart {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": filename}))
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return flPart{h, content}
}

// flBoundary is the boundary of the multipart bodies the tests build.
const flBoundary = "acctapi-test-boundary-4f1c2b"

// flMultipart is the Content-Type of the multipart bodies the tests build.
const flMultipart = "multipart/form-data; boundary=" + flBoundary

// flWriteParts writes the parts as a multipart body to w.
func flWriteParts(w io.Writer, parts ...flPart) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(flBoundary); err != nil {
		return err
	}
	for _, p := range parts {
		pw, err := mw.CreatePart(p.header)
		if err != nil {
			return err
		}
		if _, err := io.Copy(pw, p.content); err != nil {
			return err
		}
	}
	return mw.Close()
}

// flBody is the multipart body of the parts.
func flBody(t testing.TB, parts ...flPart) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := flWriteParts(&buf, parts...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// flSend sends the request (no key unless the caller set one), reads the
// answer and checks it against the OpenAPI document, as api.do does.
func (api *testAPI) flSend(t *testing.T, req *http.Request) *response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	out := &response{status: res.StatusCode, header: res.Header}
	if out.body, err = io.ReadAll(res.Body); err != nil {
		t.Fatal(err)
	}
	if !api.ours(req.URL.String()) {
		return out // the bucket's pre-signed GET
	}
	if res.Header.Get("X-Request-Id") == "" {
		t.Errorf("%s %s: no X-Request-Id header", req.Method, req.URL.Path)
	}
	api.checkOpenAPI(req, out)
	return out
}

// flPost sends POST /v1/files with the body as is.
func (api *testAPI) flPost(t *testing.T, key, clientID, contentType string, body io.Reader) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, api.server.URL+"/v1/files", body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if clientID != "" {
		req.Header.Set("x-client-id", clientID)
	}
	return api.flSend(t, req)
}

// flUpload sends the parts as a multipart upload.
func (api *testAPI) flUpload(t *testing.T, key, clientID string, parts ...flPart) *response {
	t.Helper()
	return api.flPost(t, key, clientID, flMultipart, bytes.NewReader(flBody(t, parts...)))
}

// flMustUpload uploads and requires 201.
func (api *testAPI) flMustUpload(t *testing.T, key, clientID string, parts ...flPart) flFile {
	t.Helper()
	return flDecodeFile(t, api.flUpload(t, key, clientID, parts...), http.StatusCreated)
}

// flUploadBytes uploads content to the workspace of the client as name with
// the accountant key.
func (api *testAPI) flUploadBytes(t *testing.T, clientID, workspaceID, name string, content []byte) flFile {
	t.Helper()
	return api.flMustUpload(t, api.accountantKey, clientID,
		flField("workspaceId", workspaceID), flFilePart(name, "application/pdf", content))
}

// flGetFile is GET /v1/files/{id}.
func (api *testAPI) flGetFile(key, clientID, id string) *response {
	return api.do(request{method: "GET", path: "/v1/files/" + id, key: key, clientID: clientID})
}

// flLink asks for a download link and checks its shape.
func (api *testAPI) flLink(t *testing.T, key, clientID, id string) flLinkBody {
	t.Helper()
	res := api.do(request{method: "GET", path: "/v1/files/" + id + "/content", key: key, clientID: clientID})
	if res.status != http.StatusOK {
		t.Fatalf("GET /v1/files/%s/content: got %d %s, want 200", id, res.status, res.body)
	}
	var link flLinkBody
	flStrict(t, res.body, &link, []string{"expiresIn", "url"})
	if link.ExpiresIn != 600 {
		t.Errorf("expiresIn: got %d, want 600", link.ExpiresIn)
	}
	return link
}

// flLinkParts returns the expiry and signature of a link.
func flLinkParts(t *testing.T, link string) (expires, signature string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	return u.Query().Get("expires"), u.Query().Get("signature")
}

// flDownloadURL is the download address of the file with the query as given.
func (api *testAPI) flDownloadURL(id, rawQuery string) string {
	return api.server.URL + "/v1/files/" + id + "/download?" + rawQuery
}

// flSignedURL is the download address of the file with the expiry and signature.
func (api *testAPI) flSignedURL(id, expires, signature string) string {
	return api.flDownloadURL(id, url.Values{"expires": {expires}, "signature": {signature}}.Encode())
}

// flDownload GETs a download address without a key, with the headers.
func (api *testAPI) flDownload(t *testing.T, rawURL string, header http.Header) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range header {
		req.Header[name] = values
	}
	return api.flSend(t, req)
}

// flMustDownload downloads the link and requires 200 with the content.
func (api *testAPI) flMustDownload(t *testing.T, link string, want []byte) *response {
	t.Helper()
	res := api.flDownload(t, link, nil)
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", link, res.status, res.body)
	}
	if !bytes.Equal(res.body, want) {
		t.Fatalf("downloaded %d bytes that differ from the %d uploaded", len(res.body), len(want))
	}
	return res
}

// flStoreDir is the directory of the harness's file store, as the store
// itself names it in the error for a file that does not exist.
func (api *testAPI) flStoreDir(t *testing.T) string {
	t.Helper()
	_, err := api.files.OpenFile("cnosuchfilenosuchfile0000")
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) {
		t.Fatalf("OpenFile of a missing file: got %v, want an *fs.PathError naming its path", err)
	}
	return filepath.Dir(filepath.Dir(pathErr.Path))
}

// flStoredFiles lists every file (not directory) under the store, by its
// slash-separated path relative to the store.
func (api *testAPI) flStoredFiles(t *testing.T) []string {
	t.Helper()
	if api.s3 != nil {
		return api.flBucketFiles(t)
	}
	dir := api.flStoreDir(t)
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// flStoredPath is where the store keeps the bytes of the file with the id,
// relative to the store.
func flStoredPath(id string) string { return id[len(id)-2:] + "/" + id }

// flFileRows counts the file records.
func (api *testAPI) flFileRows(t *testing.T) int {
	t.Helper()
	n, err := strconv.Atoi(api.sqlColumn(t, `SELECT count(*) FROM files`)[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// flNothingLeft checks that a refused upload left no record and no bytes:
// the store holds exactly the files it held before.
func (api *testAPI) flNothingLeft(t *testing.T, rowsBefore int, filesBefore []string) {
	t.Helper()
	if n := api.flFileRows(t); n != rowsBefore {
		t.Errorf("file records: got %d, want %d (the refused upload left one)", n, rowsBefore)
	}
	if got := api.flStoredFiles(t); !slices.Equal(got, filesBefore) {
		t.Errorf("file store: got %v, want %v (the refused upload left bytes)", got, filesBefore)
	}
}

// flRandom returns n pseudo-random bytes, the same for the same seed.
func flRandom(seed uint64, n int) []byte {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	b := make([]byte, n)
	rand.NewChaCha8(s).Read(b)
	return b
}

func flSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// flWantFile compares two File answers field by field.
func flWantFile(t *testing.T, got, want flFile) {
	t.Helper()
	if want.Exports == nil {
		want.Exports = []flFileExport{}
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("file:\n got %s\nwant %s", g, w)
	}
}

// flLabel creates a label in a workspace of the client.
func (api *testAPI) flLabel(t testing.TB, clientID, workspaceID, name string) string {
	t.Helper()
	l, err := api.store.CreateLabel(context.Background(), clientID, workspaceID, name)
	if err != nil {
		t.Fatal(err)
	}
	return l.ID
}

// flSort returns the ids sorted.
func flSort(ids ...string) []string {
	out := slices.Clone(ids)
	sort.Strings(out)
	return out
}

// flUnmetered is a Limiter whose clock moves a minute at each request, so
// that no window ever fills: for the fuzzers and benchmarks, which send
// more downloads than the route's limits let through.
func flUnmetered() *auth.Limiter {
	var minutes atomic.Int64
	return auth.NewLimiter(func() time.Time { return time.Unix(60*minutes.Add(1), 0) })
}

// Messages of the error answers of the file endpoints.
const (
	flInvalidSignature = "the download link's signature is not valid"
	flLinkExpired      = "the download link has expired: ask for a new one"
	flInternal         = "internal server error; the request id identifies it in the server log"
)

// flPNG and flPDF are the first bytes of a PNG image and a PDF document.
var (
	flPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), flRandom(7, 200)...)
	flPDF = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
)

// ---- upload, read, link, download ------------------------------------------

func TestFileRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		folder := api.mustCreateFolder(api.client.ID, ws, "2026")
		task := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"workspaceId": ws, "title": "Collect receipts"})
		label1 := api.flLabel(t, api.client.ID, ws, "tax")
		label2 := api.flLabel(t, api.client.ID, ws, "q3")
		labels := flSort(label1, label2)
		content := flRandom(1, 300<<10)
		now := apiTime(api.clock.Now())

		for _, tc := range []struct {
			name string
			key  string
		}{
			{"accountant key", api.accountantKey},
			{"client key", api.clientKey},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := api.flUpload(t, tc.key, api.client.ID,
					flField("workspaceId", ws),
					flField("taskId", task.ID),
					flField("folderId", folder),
					flField("documentDate", "2026-01-15T10:30:00+02:00"),
					flField("labelIds", labels[0]),
					flField("labelIds", labels[1]),
					flField("unknownField", "ignored"),
					flFilePart("Kontoauszug März.pdf", "application/pdf", content),
				)
				created := flDecodeFile(t, res, http.StatusCreated)
				want := flFile{
					ID: created.ID, DocumentDate: "2026-01-15T08:30:00Z", CreatedAt: now, UpdatedAt: now,
					Name: "Kontoauszug März.pdf", MimeType: "application/pdf", Size: int64(len(content)),
					WorkspaceID: ws, CreatedByID: nil, TaskID: &task.ID, FolderID: &folder, LabelIDs: labels,
					DocumentDateSource: ptr("user"), Analysis: flPending(),
				}
				flWantFile(t, created, want)
				if !generatedID.MatchString(created.ID) {
					t.Errorf("id %q is not a generated cuid", created.ID)
				}

				got := flDecodeFile(t, api.flGetFile(tc.key, api.client.ID, created.ID), http.StatusOK)
				flWantFile(t, got, want)

				// The bytes are stored under the id, and recorded with their SHA-256.
				if stored := api.flStoredBytes(t, created.ID); !bytes.Equal(stored, content) {
					t.Errorf("stored bytes differ from the uploaded ones")
				}
				if sum := api.sqlColumn(t, `SELECT hex(sha256) FROM files WHERE id = ?`, created.ID)[0]; !strings.EqualFold(sum, flSHA256(content)) {
					t.Errorf("recorded sha256 %s, want %s", sum, flSHA256(content))
				}

				link := api.flLink(t, tc.key, api.client.ID, created.ID)
				disposition := `attachment; filename="Kontoauszug M_rz.pdf"; filename*=UTF-8''Kontoauszug%20M%C3%A4rz.pdf`
				if store == bucketStore {
					flCheckBucketLink(t, api, link.URL, created.ID, "application/pdf", disposition)
					dl := api.flMustDownload(t, link.URL, content)
					for name, want := range map[string]string{
						"Content-Type": "application/pdf", "Content-Length": strconv.Itoa(len(content)), "Content-Disposition": disposition,
					} {
						if got := dl.header.Get(name); got != want {
							t.Errorf("%s: got %q, want %q", name, got, want)
						}
					}
					return
				}
				expires, signature := flLinkParts(t, link.URL)
				wantExpires := strconv.FormatInt(api.clock.Now().Add(600*time.Second).Unix(), 10)
				wantURL := api.server.URL + "/v1/files/" + created.ID + "/download?expires=" + wantExpires + "&signature=" + signature
				if link.URL != wantURL {
					t.Errorf("url: got %s, want %s", link.URL, wantURL)
				}
				if expires != wantExpires {
					t.Errorf("expires: got %s, want %s", expires, wantExpires)
				}
				if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(signature) {
					t.Errorf("signature %q is not 64 lower-case hex digits", signature)
				}

				dl := api.flMustDownload(t, link.URL, content)
				for name, want := range map[string]string{
					"Content-Type":           "application/pdf",
					"Content-Length":         strconv.Itoa(len(content)),
					"Content-Disposition":    disposition,
					"ETag":                   `"` + flSHA256(content) + `"`,
					"Cache-Control":          "private, no-cache",
					"X-Content-Type-Options": "nosniff",
					"Accept-Ranges":          "bytes",
				} {
					if got := dl.header.Get(name); got != want {
						t.Errorf("%s: got %q, want %q", name, got, want)
					}
				}
				// The download needs no key, and ignores one.
				res = api.flDownload(t, link.URL, http.Header{"Authorization": {"Bearer not-a-key"}})
				if res.status != http.StatusOK || !bytes.Equal(res.body, content) {
					t.Errorf("download with a bogus key: got %d, want 200 with the content", res.status)
				}
			})
		}
	})
}

func TestUploadDefaults(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		now := apiTime(api.clock.Now())
		content := []byte("hello, world\n")

		// The file part may come first; no optional field given.
		f := api.flMustUpload(t, api.clientKey, api.client.ID,
			flFilePart("note.txt", "text/plain", content), flField("workspaceId", strings.ToUpper(ws)))
		flWantFile(t, f, flFile{
			ID: f.ID, DocumentDate: now, CreatedAt: now, UpdatedAt: now, Name: "note.txt", MimeType: "text/plain",
			Size: int64(len(content)), WorkspaceID: ws, CreatedByID: nil, TaskID: nil, FolderID: nil, LabelIDs: []string{},
			Analysis: flPending(),
		})
		res := api.flGetFile(api.clientKey, api.client.ID, f.ID)
		if !strings.Contains(string(res.body), `"taskId":null`) || !strings.Contains(string(res.body), `"folderId":null`) ||
			!strings.Contains(string(res.body), `"createdById":null`) || !strings.Contains(string(res.body), `"labelIds":[]`) {
			t.Errorf("GET: got %s, want taskId, folderId and createdById null and labelIds []", res.body)
		}
		flWantFile(t, flDecodeFile(t, res, http.StatusOK), f)

		t.Run("no file name", func(t *testing.T) {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", `form-data; name="file"`)
			f := api.flMustUpload(t, api.clientKey, api.client.ID, flField("workspaceId", ws), flPart{h, bytes.NewReader(content)})
			if f.Name != "upload" {
				t.Errorf("name: got %q, want upload", f.Name)
			}
			f = api.flMustUpload(t, api.clientKey, api.client.ID, flField("workspaceId", ws), flFilePart("", "", content))
			if f.Name != "upload" {
				t.Errorf("name: got %q, want upload", f.Name)
			}
		})
		t.Run("empty file", func(t *testing.T) {
			f := api.flMustUpload(t, api.clientKey, api.client.ID, flField("workspaceId", ws), flFilePart("empty.bin", "", nil))
			if f.Size != 0 {
				t.Errorf("size: got %d, want 0", f.Size)
			}
			link := api.flLink(t, api.clientKey, api.client.ID, f.ID)
			res := api.flMustDownload(t, link.URL, []byte{})
			if got := res.header.Get("Content-Length"); got != "0" {
				t.Errorf("Content-Length: got %q, want 0", got)
			}
			if got := res.header.Get("ETag"); store == localStore && got != `"`+flSHA256(nil)+`"` {
				t.Errorf("ETag: got %q", got)
			}
		})
		t.Run("a field sent twice counts once", func(t *testing.T) {
			other := api.mustCreateWorkspace(api.client.ID, "Other")
			f := api.flMustUpload(t, api.clientKey, api.client.ID, flField("workspaceId", ws), flField("workspaceId", other),
				flField("documentDate", "2026-02-01T00:00:00Z"), flField("documentDate", "not a date"), flFilePart("a.txt", "", content))
			if f.WorkspaceID != ws || f.DocumentDate != "2026-02-01T00:00:00Z" {
				t.Errorf("got workspace %s, documentDate %s, want the first values sent (%s, 2026-02-01T00:00:00Z)", f.WorkspaceID, f.DocumentDate, ws)
			}
		})
	})
}

func TestUploadLabelIDs(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	var labels []string
	for i := range 4 {
		labels = append(labels, api.flLabel(t, api.client.ID, ws, fmt.Sprintf("label %d", i)))
	}
	labels = flSort(labels...)
	content := []byte("receipt")

	for _, tc := range []struct {
		name   string
		fields []flPart
		want   []string
	}{
		{"repeated field", []flPart{flField("labelIds", labels[0]), flField("labelIds", labels[1]), flField("labelIds", labels[2])}, labels[:3]},
		{"comma list", []flPart{flField("labelIds", labels[0]+","+labels[1]+","+labels[2])}, labels[:3]},
		{"comma list with spaces", []flPart{flField("labelIds", " "+labels[0]+" , "+labels[3]+" ,")}, []string{labels[0], labels[3]}},
		{"mixed", []flPart{flField("labelIds", labels[0]+","+labels[1]), flField("labelIds", labels[2]), flField("labelIds", labels[3])}, labels},
		{"upper case ids", []flPart{flField("labelIds", strings.ToUpper(labels[0]))}, labels[:1]},
		{"duplicates count once", []flPart{flField("labelIds", labels[1]+","+labels[1]), flField("labelIds", strings.ToUpper(labels[1]))}, labels[1:2]},
		{"empty", []flPart{flField("labelIds", "")}, []string{}},
		{"none", nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := append([]flPart{flField("workspaceId", ws)}, tc.fields...)
			parts = append(parts, flFilePart("r.txt", "", content))
			f := api.flMustUpload(t, api.accountantKey, api.client.ID, parts...)
			if !slices.Equal(f.LabelIDs, tc.want) {
				t.Errorf("labelIds: got %v, want %v", f.LabelIDs, tc.want)
			}
			got := flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK)
			if !slices.Equal(got.LabelIDs, tc.want) {
				t.Errorf("labelIds read back: got %v, want %v", got.LabelIDs, tc.want)
			}
		})
	}
}

// TestUploadLabelOrderMatchesGet: the File that POST /v1/files answers must
// be the File that GET /v1/files/{id} answers. Regression test: up to
// 29a4a03, CreateFile (db/files.go) returned labelIds in the order sent while
// findFile reads them ORDER BY label_id, so labels sent out of id order came
// back in two orders (fixed in e4c241f by sorting them in CreateFile).
func TestUploadLabelOrderMatchesGet(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	labels := flSort(api.flLabel(t, api.client.ID, ws, "a"), api.flLabel(t, api.client.ID, ws, "b"))
	res := api.flUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws),
		flField("labelIds", labels[1]+","+labels[0]), flFilePart("r.txt", "", []byte("x")))
	created := flDecodeFile(t, res, http.StatusCreated)
	read := flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, created.ID), http.StatusOK)
	if !slices.Equal(created.LabelIDs, read.LabelIDs) {
		t.Errorf("labelIds: POST answered %v, GET answers %v for the same file",
			created.LabelIDs, read.LabelIDs)
	}
}

func TestUploadReferencesElsewhere(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		otherWS := api.mustCreateWorkspace(api.client.ID, "Other workspace")
		clientBWS := api.mustCreateWorkspace(api.otherClient.ID, "Client B")
		otherFirmWS := api.mustCreateWorkspace(api.other.client.ID, "Other firm")
		taskElsewhere := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"workspaceId": otherWS, "title": "elsewhere"})
		taskOfB := api.createTask(t, api.accountantKey, api.otherClient.ID, map[string]any{"workspaceId": clientBWS, "title": "B's"})
		folderElsewhere := api.mustCreateFolder(api.client.ID, otherWS, "elsewhere")
		folderOfB := api.mustCreateFolder(api.otherClient.ID, clientBWS, "B's")
		label := api.flLabel(t, api.client.ID, ws, "ok")
		labelElsewhere := api.flLabel(t, api.client.ID, otherWS, "elsewhere")
		labelOfB := api.flLabel(t, api.otherClient.ID, clientBWS, "B's")
		content := flRandom(2, 10<<10)

		// One file already stored: the refused uploads must leave it alone.
		kept := api.flUploadBytes(t, api.client.ID, ws, "kept.pdf", content)
		rows, files := api.flFileRows(t), api.flStoredFiles(t)
		if !slices.Equal(files, []string{flStoredPath(kept.ID)}) {
			t.Fatalf("file store: got %v, want only %s", files, flStoredPath(kept.ID))
		}

		for _, tc := range []struct {
			name    string
			fields  []flPart
			message string
		}{
			{"unknown workspace", []flPart{flField("workspaceId", "cmissingmissingmissing0002")}, "workspace cmissingmissingmissing0002 not found"},
			{"workspace of another client", []flPart{flField("workspaceId", clientBWS)}, "workspace " + clientBWS + " not found"},
			{"workspace of another firm", []flPart{flField("workspaceId", otherFirmWS)}, "workspace " + otherFirmWS + " not found"},
			{"task of another workspace", []flPart{flField("workspaceId", ws), flField("taskId", taskElsewhere.ID)}, "task " + taskElsewhere.ID + " not found in the workspace"},
			{"task of another client", []flPart{flField("workspaceId", ws), flField("taskId", taskOfB.ID)}, "task " + taskOfB.ID + " not found in the workspace"},
			{"unknown task", []flPart{flField("workspaceId", ws), flField("taskId", missingTaskID)}, "task " + missingTaskID + " not found in the workspace"},
			{"folder of another workspace", []flPart{flField("workspaceId", ws), flField("folderId", folderElsewhere)}, "folder " + folderElsewhere + " not found in the workspace"},
			{"folder of another client", []flPart{flField("workspaceId", ws), flField("folderId", folderOfB)}, "folder " + folderOfB + " not found in the workspace"},
			{"label of another workspace", []flPart{flField("workspaceId", ws), flField("labelIds", label+","+labelElsewhere)}, "label " + labelElsewhere + " not found in the workspace"},
			{"label of another client", []flPart{flField("workspaceId", ws), flField("labelIds", labelOfB)}, "label " + labelOfB + " not found in the workspace"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				parts := append(tc.fields, flFilePart("r.pdf", "application/pdf", content))
				res := api.flUpload(t, api.accountantKey, api.client.ID, parts...)
				wantError(t, res, http.StatusNotFound, "not_found", "not_found", tc.message)
				api.flNothingLeft(t, rows, files)
			})
		}

		t.Run("client key of another client", func(t *testing.T) {
			res := api.flUpload(t, api.otherClientClientKey, api.client.ID, flField("workspaceId", ws), flFilePart("r.pdf", "", content))
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
			api.flNothingLeft(t, rows, files)
		})
		t.Run("accountant key of another firm", func(t *testing.T) {
			res := api.flUpload(t, api.other.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("r.pdf", "", content))
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
			api.flNothingLeft(t, rows, files)
		})
		link := api.flLink(t, api.accountantKey, api.client.ID, kept.ID)
		api.flMustDownload(t, link.URL, content)
	})
}

func TestUploadValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		content := []byte("content")
		fileIssue := issue{Code: "invalid_type", Path: []any{"file"}, Expected: "file", Received: "undefined", Message: "Required"}
		nameIssue := tooBigString(maxFileName, "File names must be valid UTF-8 of at most 255 characters", "file", "name")

		for _, tc := range []struct {
			name  string
			parts []flPart
			want  []issue
		}{
			{"missing file", []flPart{flField("workspaceId", ws)}, []issue{fileIssue}},
			{"missing workspaceId", []flPart{flFilePart("a.pdf", "", content)}, []issue{requiredIssue("workspaceId")}},
			{"nothing", []flPart{flField("other", "x")}, []issue{requiredIssue("workspaceId"), fileIssue}},
			{"file sent as a plain field", []flPart{flField("workspaceId", ws), flField("document", "x")}, []issue{fileIssue}},
			{"bad ids and date", []flPart{flField("workspaceId", "nope"), flField("taskId", "x"), flField("folderId", "c-1"),
				flField("documentDate", "yesterday"), flField("labelIds", "cgoodgoodgood1,bad"), flFilePart("a.pdf", "", content)},
				[]issue{cuidIssue("workspaceId"), cuidIssue("taskId"), cuidIssue("folderId"),
					{Code: "invalid_string", Path: []any{"documentDate"}, Validation: "datetime", Message: "Invalid datetime"},
					cuidIssue("labelIds", 1)}},
			{"name too long", []flPart{flField("workspaceId", ws), flFilePart(strings.Repeat("é", 256), "", content)}, []issue{nameIssue}},
			{"name not UTF-8", []flPart{flField("workspaceId", ws), flFilePart("bad\xff.pdf", "", content)}, []issue{nameIssue}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rows, files := api.flFileRows(t), api.flStoredFiles(t)
				res := api.flUpload(t, api.accountantKey, api.client.ID, tc.parts...)
				wantIssues(t, res, "ValidationError", tc.want)
				api.flNothingLeft(t, rows, files)
			})
		}
		t.Run("a name of 255 characters is fine", func(t *testing.T) {
			name := strings.Repeat("é", 251) + ".pdf"
			f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart(name, "", content))
			if f.Name != name {
				t.Errorf("name: got %q, want %q", f.Name, name)
			}
		})
		t.Run("too many labels", func(t *testing.T) {
			ids := make([]string, maxIDList+1)
			for i := range ids {
				ids[i] = fmt.Sprintf("clabel%020d", i)
			}
			res := api.flUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws),
				flField("labelIds", strings.Join(ids, ",")), flFilePart("a.pdf", "", content))
			wantIssues(t, res, "ValidationError", []issue{{Code: "too_big", Path: []any{"labelIds"}, Maximum: bound(maxIDList),
				Type: "array", Inclusive: &yes, Exact: &no, Message: "Array must contain at most 100 element(s)"}})
		})
		if got := api.flStoredFiles(t); len(got) != 1 {
			t.Errorf("file store: got %v, want the one accepted upload", got)
		}
	})
}

func TestUploadBadBodies(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		content := flRandom(3, 4<<10)
		valid := flBody(t, flField("workspaceId", ws), flFilePart("a.bin", "", content))
		const unsupported = "send the upload as Content-Type: multipart/form-data"
		const malformed = "the multipart body is malformed or ended early"

		t.Run("unsupported media type", func(t *testing.T) {
			for _, ct := range []string{
				"",
				"application/json",
				"application/x-www-form-urlencoded",
				"text/plain; boundary=" + flBoundary,
				"multipart/mixed; boundary=" + flBoundary,
				"multipart/form-data",
				"multipart/form-data; boundary=",
				"multipart/form-data; boundary=\"unterminated",
			} {
				t.Run(ct, func(t *testing.T) {
					res := api.flPost(t, api.accountantKey, api.client.ID, ct, bytes.NewReader(valid))
					wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", unsupported)
					api.flNothingLeft(t, 0, nil)
				})
			}
			res := api.flPost(t, api.accountantKey, api.client.ID, "application/json", strings.NewReader(`{"workspaceId":"`+ws+`"}`))
			wantError(t, res, http.StatusBadRequest, "bad_request", "unsupported_media_type", unsupported)
		})

		// Where the body breaks off inside the file part.
		cut := bytes.Index(valid, content) + len(content)/2
		twoFiles := flBody(t, flField("workspaceId", ws), flFilePart("a.bin", "", content), flFilePart("b.bin", "", content))
		bigField := flBody(t, flField("workspaceId", ws), flField("documentDate", strings.Repeat("x", maxFormFields+1)), flFilePart("a.bin", "", content))
		var many []flPart
		for range maxFormParts {
			many = append(many, flField("x", "y"))
		}
		manyParts := flBody(t, append(many, flField("workspaceId", ws), flFilePart("a.bin", "", content))...)
		for _, tc := range []struct {
			name    string
			body    []byte
			message string
		}{
			{"body cut inside the file", valid[:cut], malformed},
			{"garbage after a part", []byte("--" + flBoundary + "\r\nContent-Disposition: form-data; name=\"workspaceId\"\r\n\r\n" + ws + "\r\n--" + flBoundary + "garbage\r\n"), malformed},
			{"bad part header", []byte("--" + flBoundary + "\r\nthis is no header\r\n\r\nx\r\n--" + flBoundary + "--\r\n"), malformed},
			{"two files", twoFiles, "an upload holds one file"},
			{"field too long", bigField, fmt.Sprintf("the form field %q exceeds %d bytes", "documentDate", maxFormFields)},
			{"too many parts", manyParts, fmt.Sprintf("an upload has at most %d parts", maxFormParts)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rows, files := api.flFileRows(t), api.flStoredFiles(t)
				res := api.flPost(t, api.accountantKey, api.client.ID, flMultipart, bytes.NewReader(tc.body))
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_multipart", tc.message)
				api.flNothingLeft(t, rows, files)
			})
		}
		t.Run("no key", func(t *testing.T) {
			res := api.flPost(t, "", api.client.ID, flMultipart, bytes.NewReader(valid))
			wantError(t, res, http.StatusUnauthorized, "auth_error", "unauthorized", "")
			api.flNothingLeft(t, 0, nil)
		})
		t.Run("no client header", func(t *testing.T) {
			res := api.flPost(t, api.accountantKey, "", flMultipart, bytes.NewReader(valid))
			wantError(t, res, http.StatusBadRequest, "bad_request", "missing_client_id", "")
			api.flNothingLeft(t, 0, nil)
		})
		t.Run("unknown client", func(t *testing.T) {
			res := api.flPost(t, api.accountantKey, "cmissingmissingmissing0009", flMultipart, bytes.NewReader(valid))
			wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
			api.flNothingLeft(t, 0, nil)
		})
		// The valid body itself is fine.
		res := api.flPost(t, api.accountantKey, api.client.ID, flMultipart, bytes.NewReader(valid))
		flDecodeFile(t, res, http.StatusCreated)
	})
}

// The form fields of an upload share one budget of 64 KiB, fields the API
// does not read included, and each part's header has a limit of 16 KiB
// (docs/decisions.md, Files). TestUploadFieldsMemory shows what they bound.
func TestUploadFormBudget(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(9, 1000)
	file := func() flPart { return flFilePart("a.bin", "", content) } // a part is read once
	padded := func(name string, size int) flPart {
		part := flField(name, "x")
		part.header.Set("X-Padding", strings.Repeat("p", size))
		return part
	}
	const together = "the form fields exceed 65536 bytes together"
	var notes []flPart
	for range 66 {
		notes = append(notes, flField("note", strings.Repeat("x", 1000)))
	}
	for _, tc := range []struct {
		name    string
		parts   []flPart
		message string
	}{
		{"two fields over the budget", []flPart{flField("workspaceId", ws), flField("labelIds", strings.Repeat("x", maxFormFields-len(ws))), flField("taskId", "x"), file()}, together},
		{"fields the API does not read count", []flPart{flField("workspaceId", ws), flField("note", strings.Repeat("x", 40<<10)), flField("memo", strings.Repeat("x", 30<<10)), file()}, together},
		{"a field sent again counts", []flPart{flField("workspaceId", ws), flField("workspaceId", strings.Repeat("x", maxFormFields)), file()}, together},
		{"many small fields", append(notes, flField("workspaceId", ws), file()), together},
		// mime/multipart may have read up to 4 KiB of a header ahead, with
		// the part before it: the limit is exact only to that.
		{"a part header over 16 KiB", []flPart{padded("workspaceId", maxPartHeader), file()}, "the header of a part exceeds 16384 bytes"},
		{"the file part's header over 16 KiB", []flPart{flField("workspaceId", ws), flFilePart(strings.Repeat("n", maxPartHeader+4<<10), "", content)},
			"the header of a part exceeds 16384 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, files := api.flFileRows(t), api.flStoredFiles(t)
			res := api.flUpload(t, api.accountantKey, api.client.ID, tc.parts...)
			wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_multipart", tc.message)
			api.flNothingLeft(t, rows, files)
		})
	}
	t.Run("fields that fill the budget exactly", func(t *testing.T) {
		date := "2026-01-02T03:04:05Z"
		f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws),
			flField("note", strings.Repeat("x", maxFormFields-len(ws)-len(date))), flField("documentDate", date), file())
		if f.DocumentDate != date {
			t.Errorf("documentDate: got %s, want %s", f.DocumentDate, date)
		}
	})
	t.Run("the longest name in both encodings fits a part header", func(t *testing.T) {
		name := strings.Repeat("\U0001F4C4", maxFileName)
		header := textproto.MIMEHeader{}
		header.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"; filename*=UTF-8''`+url.PathEscape(name))
		header.Set("Content-Type", "application/"+strings.Repeat("x", maxMimeType-len("application/")))
		f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flPart{header, bytes.NewReader(content)})
		if f.Name != name {
			t.Errorf("name: got %q, want the %d characters sent", f.Name, maxFileName)
		}
	})
}

// TestUploadMalformedMultipartEnd: a multipart body that does not end with
// its closing delimiter is malformed (docs/decisions.md: 400
// invalid_multipart). Regression test: up to 29a4a03, readUpload
// (handlers/files.go) took errors.Is(err, io.EOF) for the end of the parts,
// but mime/multipart wraps io.EOF ("multipart: NextPart: EOF") when the body
// ends without the closing delimiter, and textproto answers a body cut
// inside a part's headers with a bare io.EOF: such bodies were answered 422
// "file Required", or even 201 with the parts read so far (fixed in e4c241f:
// the closing delimiter must have been read).
func TestUploadMalformedMultipartEnd(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	valid := flBody(t, flField("workspaceId", ws), flFilePart("a.bin", "", flRandom(8, 1000)))
	delimiter := []byte("--" + flBoundary + "\r\n")
	secondPart := bytes.Index(valid[1:], delimiter) + 1
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"empty body", nil},
		{"no boundary at all", []byte("this is not a multipart body\r\n")},
		{"no closing delimiter", bytes.TrimSuffix(valid, []byte("--\r\n"))},
		{"cut after a delimiter line", valid[:secondPart+len(delimiter)]},
		{"cut inside a part's headers", valid[:bytes.Index(valid, []byte("filename"))]},
		{"cut after a part's headers", []byte("--" + flBoundary + "\r\nContent-Disposition: form-data; name=\"workspaceId\"\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, files := api.flFileRows(t), api.flStoredFiles(t)
			res := api.flPost(t, api.accountantKey, api.client.ID, flMultipart, bytes.NewReader(tc.body))
			if res.status != http.StatusBadRequest {
				t.Errorf("truncated multipart body: got %d %s, want 400 invalid_multipart",
					res.status, res.body)
			} else {
				wantError(t, res, http.StatusBadRequest, "bad_request", "invalid_multipart", "the multipart body is malformed or ended early")
			}
			api.flNothingLeft(t, rows, files)
		})
	}
	// Complete bodies stay accepted.
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"closing delimiter without the last CRLF", bytes.TrimSuffix(valid, []byte("\r\n"))},
		{"closing delimiter and an epilogue", append(slices.Clone(valid), "this epilogue is ignored\r\n"...)},
		{"a preamble", append([]byte("this preamble is ignored\r\n"), valid...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			flDecodeFile(t, api.flPost(t, api.accountantKey, api.client.ID, flMultipart, bytes.NewReader(tc.body)), http.StatusCreated)
		})
	}
}

func TestUploadConcurrent(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		const n = 8
		type result struct {
			i   int
			res *response
		}
		results := make(chan result, n)
		for i := range n {
			go func() {
				content := flRandom(uint64(200+i), 50<<10+i)
				res := api.flUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart(fmt.Sprintf("f%d.bin", i), "", content))
				results <- result{i, res}
			}()
		}
		want := []string{}
		for range n {
			r := <-results
			f := flDecodeFile(t, r.res, http.StatusCreated)
			content := flRandom(uint64(200+r.i), 50<<10+r.i)
			if f.Name != fmt.Sprintf("f%d.bin", r.i) || f.Size != int64(len(content)) {
				t.Errorf("upload %d: got %s of %d bytes", r.i, f.Name, f.Size)
			}
			api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
			want = append(want, flStoredPath(f.ID))
		}
		sort.Strings(want)
		if got := api.flStoredFiles(t); !slices.Equal(got, want) {
			t.Errorf("file store: got %v, want %v", got, want)
		}
	})
}

// flChunked hides the length of a body, so that it is sent chunked.
type flChunked struct{ r io.Reader }

func (c flChunked) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestUploadSizeLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		tooLarge := fmt.Sprintf("the file exceeds %d bytes", testMaxUpload)

		t.Run("exactly the limit", func(t *testing.T) {
			content := flRandom(4, testMaxUpload)
			f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("max.bin", "", content))
			if f.Size != testMaxUpload {
				t.Errorf("size: got %d, want %d", f.Size, testMaxUpload)
			}
			api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
		})
		rows, files := api.flFileRows(t), api.flStoredFiles(t)
		over := flRandom(5, testMaxUpload+1)
		for _, tc := range []struct {
			name string
			body func() io.Reader
		}{
			{"one byte over, with Content-Length", func() io.Reader {
				return bytes.NewReader(flBody(t, flField("workspaceId", ws), flFilePart("big.bin", "", over)))
			}},
			{"one byte over, chunked", func() io.Reader {
				return flChunked{bytes.NewReader(flBody(t, flField("workspaceId", ws), flFilePart("big.bin", "", over)))}
			}},
			{"file part first, no workspace", func() io.Reader {
				return bytes.NewReader(flBody(t, flFilePart("big.bin", "", over)))
			}},
			{"Content-Length far over the limit", func() io.Reader {
				return bytes.NewReader(flBody(t, flField("workspaceId", ws), flFilePart("big.bin", "", flRandom(6, 3*testMaxUpload))))
			}},
			{"far over the limit, chunked", func() io.Reader {
				return flChunked{bytes.NewReader(flBody(t, flField("workspaceId", ws), flFilePart("big.bin", "", flRandom(6, 3*testMaxUpload))))}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := api.flPost(t, api.accountantKey, api.client.ID, flMultipart, tc.body())
				wantError(t, res, http.StatusRequestEntityTooLarge, "bad_request", "payload_too_large", tooLarge)
				api.flNothingLeft(t, rows, files)
			})
		}
	})
}

func TestUploadMimeType(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		text := []byte("Just some plain text.\n")
		for _, tc := range []struct {
			name, partType string
			content        []byte
			want           string
		}{
			{"part type kept", "text/plain; charset=utf-8", text, "text/plain; charset=utf-8"},
			{"part type kept over the content", "image/jpeg", text, "image/jpeg"},
			{"part type kept as sent", "Application/PDF", flPDF, "Application/PDF"},
			{"absent: PNG sniffed", "", flPNG, "image/png"},
			{"absent: PDF sniffed", "", flPDF, "application/pdf"},
			{"absent: text sniffed", "", text, "text/plain; charset=utf-8"},
			{"octet-stream: PNG sniffed", "application/octet-stream", flPNG, "image/png"},
			{"octet-stream: PDF sniffed", "application/octet-stream", flPDF, "application/pdf"},
			{"octet-stream: binary stays", "application/octet-stream", []byte{0, 1, 2, 3, 0xfe, 0xff}, "application/octet-stream"},
			{"unparsable type: sniffed", "not a type", flPDF, "application/pdf"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("f", tc.partType, tc.content))
				if f.MimeType != tc.want {
					t.Errorf("mimetype: got %q, want %q", f.MimeType, tc.want)
				}
				res := api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, tc.content)
				// The download sends the allowlisted type, in its plain form
				// (TestServedContentType).
				if got := res.header.Get("Content-Type"); got != servedType(tc.want) {
					t.Errorf("download Content-Type: got %q, want %q", got, servedType(tc.want))
				}
			})
		}
	})
}

// flDispositionRE is the shape of every Content-Disposition the download
// sends: an ASCII fallback without quotes, backslashes or control
// characters, and optionally the RFC 5987 exact name.
var flDispositionRE = regexp.MustCompile("^attachment; filename=\"([\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*)\"(?:; filename\\*=UTF-8''([A-Za-z0-9!#$&+\\-.^_`|~%]*))?$")

// flDispositionName is what the download's name must decode to: the name
// without control and format characters, with path separators replaced.
func flDispositionName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.In(r, unicode.Cf):
		case r == '/' || r == '\\':
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestUploadFileNames(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		var ids []string
		for i, tc := range []struct {
			name        string
			disposition string
			stored      string // the name kept, when it drops control characters
		}{
			{"report.pdf", `attachment; filename="report.pdf"`, ""},
			{"Müller Beleg.pdf", `attachment; filename="M_ller Beleg.pdf"; filename*=UTF-8''M%C3%BCller%20Beleg.pdf`, ""},
			{"../../etc/passwd", `attachment; filename="_.._etc_passwd"; filename*=UTF-8''.._.._etc_passwd`, ""},
			{`a"b`, `attachment; filename="a_b"; filename*=UTF-8''a%22b`, ""},
			{"x\r\ny.txt", `attachment; filename="xy.txt"`, "xy.txt"},
			{"日本.pdf", `attachment; filename="__.pdf"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.pdf`, ""},
			{`C:\Users\me\report.pdf`, `attachment; filename="C:_Users_me_report.pdf"`, ""},
			{"a;b.txt", `attachment; filename="a_b.txt"; filename*=UTF-8''a%3Bb.txt`, ""},
			{"tab\there\x7f\u0085.txt", `attachment; filename="tabhere.txt"`, "tabhere.txt"},
			{"100% €.txt", `attachment; filename="100_ _.txt"; filename*=UTF-8''100%25%20%E2%82%AC.txt`, ""},
			{"  .hidden ", `attachment; filename="hidden"; filename*=UTF-8''%20%20.hidden%20`, ""},
			{"..", `attachment; filename="download"; filename*=UTF-8''..`, ""},
			{"/", `attachment; filename="_"`, ""},
			{"\r\n", `attachment; filename="upload"`, "upload"},
			{`"; filename="evil.exe`, `attachment; filename="__ filename=_evil.exe"; filename*=UTF-8''%22%3B%20filename%3D%22evil.exe`, ""},
			{"a'b(c)[d]{e}<f>@,=?.txt", `attachment; filename="a'b(c)[d]{e}<f>@,_.txt"; filename*=UTF-8''a%27b%28c%29%5Bd%5D%7Be%7D%3Cf%3E%40%2C%3D%3F.txt`, ""},
			{"ü'.txt", `attachment; filename="_'.txt"; filename*=UTF-8''%C3%BC%27.txt`, ""},
		} {
			t.Run(fmt.Sprintf("%d %q", i, tc.name), func(t *testing.T) {
				content := flRandom(uint64(10+i), 100+i)
				f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart(tc.name, "", content))
				ids = append(ids, f.ID)
				want := cmp.Or(tc.stored, tc.name)
				if f.Name != want {
					t.Errorf("name: got %q, want %q", f.Name, want)
				}
				if got := flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK); got.Name != want {
					t.Errorf("name read back: got %q, want %q", got.Name, want)
				}
				if got := api.sqlColumn(t, `SELECT name FROM files WHERE id = ?`, f.ID)[0]; got != want {
					t.Errorf("name recorded: got %q, want %q", got, want)
				}

				res := api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
				header := res.header.Values("Content-Disposition")
				if len(header) != 1 {
					t.Fatalf("Content-Disposition: got %q, want one header", header)
				}
				if header[0] != tc.disposition {
					t.Errorf("Content-Disposition:\n got %s\nwant %s", header[0], tc.disposition)
				}
				m := flDispositionRE.FindStringSubmatch(header[0])
				if m == nil {
					t.Fatalf("Content-Disposition %q is not attachment; filename=\"<safe ASCII>\"[; filename*=UTF-8''<pct-encoded>]", header[0])
				}
				if fallback := m[1]; fallback == "" || strings.ContainsAny(fallback, `";\/`) || strings.Trim(fallback, " .") != fallback {
					t.Errorf("ASCII fallback %q is not a safe file name", fallback)
				}
				exact := m[1]
				if strings.Contains(header[0], "filename*=") {
					decoded, err := url.PathUnescape(m[2])
					if err != nil {
						t.Fatalf("filename* %q: %v", m[2], err)
					}
					exact = decoded
				}
				if name := flDispositionName(want); exact != name {
					t.Errorf("Content-Disposition names %q, want %q", exact, name)
				}
				// Go's own parser agrees.
				if typ, params, err := mime.ParseMediaType(header[0]); err != nil || typ != "attachment" || params["filename"] != exact {
					t.Errorf("mime.ParseMediaType(%q) = %q, %q, %v; want attachment with filename %q", header[0], typ, params, err, exact)
				}
			})
		}
		// Every file is stored under its id, whatever its name.
		want := []string{}
		for _, id := range ids {
			want = append(want, flStoredPath(id))
		}
		sort.Strings(want)
		if got := api.flStoredFiles(t); !slices.Equal(got, want) {
			t.Errorf("file store:\n got %v\nwant %v", got, want)
		}
		if store == bucketStore {
			return
		}
		entries, err := os.ReadDir(api.flStoreDir(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() || (e.Name() != "tmp" && !regexp.MustCompile(`^[0-9a-z]{2}$`).MatchString(e.Name())) {
				t.Errorf("file store holds %q, want only tmp and two-character shards", e.Name())
			}
		}
	})
}

// ---- download ---------------------------------------------------------------

func TestDownloadRangesAndCaching(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(20, 64<<10)
	f := api.flUploadBytes(t, api.client.ID, ws, "r.pdf", content)
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	etag := `"` + flSHA256(content) + `"`
	size := len(content)

	for _, tc := range []struct {
		name, rng    string
		from, to     int // inclusive
		contentRange string
	}{
		{"bytes=10-19", "bytes=10-19", 10, 19, fmt.Sprintf("bytes 10-19/%d", size)},
		{"suffix", "bytes=-5", size - 5, size - 1, fmt.Sprintf("bytes %d-%d/%d", size-5, size-1, size)},
		{"open end", fmt.Sprintf("bytes=%d-", size-100), size - 100, size - 1, fmt.Sprintf("bytes %d-%d/%d", size-100, size-1, size)},
		{"past the end is cut", fmt.Sprintf("bytes=%d-%d", size-3, size+1000), size - 3, size - 1, fmt.Sprintf("bytes %d-%d/%d", size-3, size-1, size)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := api.flDownload(t, link, http.Header{"Range": {tc.rng}})
			if res.status != http.StatusPartialContent {
				t.Fatalf("status: got %d %s, want 206", res.status, res.body)
			}
			if !bytes.Equal(res.body, content[tc.from:tc.to+1]) {
				t.Errorf("body: got %d bytes that are not bytes %d-%d", len(res.body), tc.from, tc.to)
			}
			if got := res.header.Get("Content-Range"); got != tc.contentRange {
				t.Errorf("Content-Range: got %q, want %q", got, tc.contentRange)
			}
			if got := res.header.Get("Content-Length"); got != strconv.Itoa(tc.to-tc.from+1) {
				t.Errorf("Content-Length: got %q, want %d", got, tc.to-tc.from+1)
			}
		})
	}
	t.Run("unsatisfiable", func(t *testing.T) {
		for _, rng := range []string{fmt.Sprintf("bytes=%d-", size), fmt.Sprintf("bytes=%d-%d", size+10, size+20)} {
			res := api.flDownload(t, link, http.Header{"Range": {rng}})
			if res.status != http.StatusRequestedRangeNotSatisfiable {
				t.Fatalf("Range %s: got %d, want 416", rng, res.status)
			}
			if got := res.header.Get("Content-Range"); got != fmt.Sprintf("bytes */%d", size) {
				t.Errorf("Content-Range: got %q, want bytes */%d", got, size)
			}
			if bytes.Contains(res.body, content[:16]) {
				t.Errorf("416 answer holds content")
			}
		}
	})
	t.Run("If-None-Match", func(t *testing.T) {
		res := api.flDownload(t, link, http.Header{"If-None-Match": {etag}})
		if res.status != http.StatusNotModified || len(res.body) != 0 {
			t.Errorf("got %d with %d bytes, want 304 without a body", res.status, len(res.body))
		}
		if got := res.header.Get("ETag"); got != etag {
			t.Errorf("ETag: got %q, want %q", got, etag)
		}
		res = api.flDownload(t, link, http.Header{"If-None-Match": {`"` + flSHA256([]byte("other")) + `"`}})
		if res.status != http.StatusOK || !bytes.Equal(res.body, content) {
			t.Errorf("another ETag: got %d, want 200 with the content", res.status)
		}
	})
	t.Run("If-Range", func(t *testing.T) {
		res := api.flDownload(t, link, http.Header{"Range": {"bytes=0-9"}, "If-Range": {etag}})
		if res.status != http.StatusPartialContent || !bytes.Equal(res.body, content[:10]) {
			t.Errorf("matching If-Range: got %d, want 206 with bytes 0-9", res.status)
		}
		res = api.flDownload(t, link, http.Header{"Range": {"bytes=0-9"}, "If-Range": {`"stale"`}})
		if res.status != http.StatusOK || !bytes.Equal(res.body, content) {
			t.Errorf("stale If-Range: got %d, want 200 with the whole content", res.status)
		}
	})
}

func TestDownloadSignature(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(30, 1000)
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
	g := api.flUploadBytes(t, api.client.ID, ws, "b.pdf", flRandom(31, 1000))
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	expires, signature := flLinkParts(t, link)
	otherExpires, otherSignature := flLinkParts(t, api.flLink(t, api.accountantKey, api.client.ID, g.ID).URL)
	if otherExpires != expires {
		t.Fatalf("links made at the same time expire at %s and %s", expires, otherExpires)
	}
	exp, _ := strconv.ParseInt(expires, 10, 64)
	flipped := []byte(signature)
	flipped[17] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", flipped[17])+1)%16]

	forbidden := func(t *testing.T, rawURL string) {
		t.Helper()
		wantError(t, api.flDownload(t, rawURL, nil), http.StatusForbidden, "auth_error", "invalid_signature", flInvalidSignature)
	}
	for _, tc := range []struct{ name, url string }{
		{"one hex digit changed", api.flSignedURL(f.ID, expires, string(flipped))},
		{"expiry moved", api.flSignedURL(f.ID, strconv.FormatInt(exp+1, 10), signature)},
		{"expiry moved back", api.flSignedURL(f.ID, strconv.FormatInt(exp-1, 10), signature)},
		{"signature of another file", api.flSignedURL(f.ID, expires, otherSignature)},
		{"this signature on another file", api.flSignedURL(g.ID, expires, signature)},
		{"no query", api.flDownloadURL(f.ID, "")},
		{"no expires", api.flDownloadURL(f.ID, "signature="+signature)},
		{"no signature", api.flDownloadURL(f.ID, "expires="+expires)},
		{"empty signature", api.flSignedURL(f.ID, expires, "")},
		{"garbled expires", api.flSignedURL(f.ID, "soon", signature)},
		{"expires with a fraction", api.flSignedURL(f.ID, expires+".0", signature)},
		{"huge expires", api.flSignedURL(f.ID, "99999999999999999999999", signature)},
		{"not hex", api.flSignedURL(f.ID, expires, "zz"+signature[2:])},
		{"short signature", api.flSignedURL(f.ID, expires, signature[:62])},
		{"long signature", api.flSignedURL(f.ID, expires, signature+"00")},
		{"odd length", api.flSignedURL(f.ID, expires, signature[:63])},
		{"signature of the right length but zero", api.flSignedURL(f.ID, expires, strings.Repeat("0", 64))},
	} {
		t.Run(tc.name, func(t *testing.T) { forbidden(t, tc.url) })
	}
	t.Run("unknown file with a valid signature", func(t *testing.T) {
		const missing = "cmissingmissingmissing0003"
		exp, sig, err := auth.NewSigner(api.store, api.clock.Now).Sign(context.Background(), missing)
		if err != nil {
			t.Fatal(err)
		}
		res := api.flDownload(t, api.flSignedURL(missing, strconv.FormatInt(exp, 10), sig), nil)
		wantError(t, res, http.StatusNotFound, "not_found", "not_found", "file "+missing+" not found")
	})
	t.Run("invalid id", func(t *testing.T) {
		res := api.flDownload(t, api.flSignedURL("not-an-id", expires, signature), nil)
		wantIssues(t, res, "ValidationError", []issue{cuidIssue("params", "id")})
	})
	t.Run("upper-case id", func(t *testing.T) {
		api.flMustDownload(t, api.flSignedURL(strings.ToUpper(f.ID), expires, signature), content)
	})
	api.flMustDownload(t, link, content)

	t.Run("expiry", func(t *testing.T) {
		start := api.clock.Now()
		defer api.clock.Set(start)
		api.clock.Set(time.Unix(exp-1, 0))
		api.flMustDownload(t, link, content)
		api.clock.Set(time.Unix(exp, 0))
		wantError(t, api.flDownload(t, link, nil), http.StatusGone, "bad_request", "link_expired", flLinkExpired)
		api.clock.Set(start.Add(601 * time.Second))
		wantError(t, api.flDownload(t, link, nil), http.StatusGone, "bad_request", "link_expired", flLinkExpired)
		// The signature is checked first: a forged link reveals nothing about expiry.
		forbidden(t, api.flSignedURL(f.ID, expires, string(flipped)))
		forbidden(t, api.flSignedURL(f.ID, strconv.FormatInt(exp-3600, 10), signature))
		// A fresh link works again.
		api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
	})
}

func TestDownloadSigningSecretRotation(t *testing.T) {
	api := newTestAPI(t)
	ctx := context.Background()
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(40, 5000)
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
	link0 := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	api.flMustDownload(t, link0, content)

	if err := api.store.RotateLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	api.clock.Advance(1500 * time.Millisecond) // past the signer's one-second cache
	link1 := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	api.flMustDownload(t, link0, content) // signed with the previous secret
	api.flMustDownload(t, link1, content)
	exp0, _ := flLinkParts(t, link0)
	_, sig1 := flLinkParts(t, link1)
	// The new secret signs link1: its signature on link0's expiry is not link0's.
	wantError(t, api.flDownload(t, api.flSignedURL(f.ID, exp0, sig1), nil), http.StatusForbidden, "auth_error", "invalid_signature", flInvalidSignature)

	if err := api.store.RotateLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	api.clock.Advance(1500 * time.Millisecond)
	link2 := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	wantError(t, api.flDownload(t, link0, nil), http.StatusForbidden, "auth_error", "invalid_signature", flInvalidSignature)
	api.flMustDownload(t, link1, content)
	api.flMustDownload(t, link2, content)

	// Links of the previous secret still expire.
	api.clock.Advance(599 * time.Second)
	wantError(t, api.flDownload(t, link1, nil), http.StatusGone, "bad_request", "link_expired", flLinkExpired)
	api.flMustDownload(t, link2, content)
}

func TestDownloadIntegrity(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(50, 20<<10)
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
	path := filepath.Join(api.flStoreDir(t), filepath.FromSlash(flStoredPath(f.ID)))
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL

	flipped := slices.Clone(content)
	flipped[12345] ^= 0x01
	for _, tc := range []struct {
		name   string
		bytes  []byte
		header http.Header
	}{
		{"one byte changed", flipped, nil},
		{"one byte changed, range elsewhere", flipped, http.Header{"Range": {"bytes=0-9"}}},
		{"one byte changed, If-None-Match", flipped, http.Header{"If-None-Match": {`"` + flSHA256(content) + `"`}}},
		{"truncated", content[:len(content)-1], nil},
		{"empty", []byte{}, nil},
		{"extended", append(slices.Clone(content), 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, tc.bytes, 0o640); err != nil {
				t.Fatal(err)
			}
			logsBefore := len(api.logs.String())
			res := api.flDownload(t, link, tc.header)
			wantError(t, res, http.StatusInternalServerError, "internal_error", "internal_error", flInternal)
			if bytes.Contains(res.body, content[:32]) {
				t.Errorf("the 500 answer holds content")
			}
			logs := api.logs.String()[logsBefore:]
			if !strings.Contains(logs, `"msg":"file integrity"`) || !strings.Contains(logs, f.ID) {
				t.Errorf("the log does not report the file integrity failure of %s:\n%s", f.ID, logs)
			}
		})
	}
	t.Run("bytes gone", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		logsBefore := len(api.logs.String())
		res := api.flDownload(t, link, nil)
		wantError(t, res, http.StatusInternalServerError, "internal_error", "internal_error", flInternal)
		if logs := api.logs.String()[logsBefore:]; !strings.Contains(logs, f.ID) || !strings.Contains(logs, `"level":"ERROR"`) {
			t.Errorf("the log does not report the missing bytes of %s:\n%s", f.ID, logs)
		}
	})
	// Restored, the file downloads again.
	if err := os.WriteFile(path, content, 0o640); err != nil {
		t.Fatal(err)
	}
	api.flMustDownload(t, link, content)
}

// flFailingSeeker is content that cannot be sized: http.ServeContent seeks
// to the end to learn the size, and answers 500 when it cannot.
type flFailingSeeker struct{ io.Reader }

func (flFailingSeeker) Seek(int64, int) (int64, error) {
	return 0, errors.New("seek /srv/acctapi/files/secret/path: input/output error")
}

// The edges of Range, and HEAD: every error answer of the download route,
// those of http.ServeContent included, is the standard JSON body.
func TestDownloadEdgeCases(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(53, 12)
	f := api.flUploadBytes(t, api.client.ID, ws, "twelve.pdf", content)
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	etag := `"` + flSHA256(content) + `"`
	const unsatisfiable = "no range of the Range header lies within the file's 12 bytes"
	notSatisfiable := func(t *testing.T, res *response) {
		t.Helper()
		wantError(t, res, http.StatusRequestedRangeNotSatisfiable, "bad_request", "range_not_satisfiable", unsatisfiable)
		if got := res.header.Get("Content-Range"); got != "bytes */12" {
			t.Errorf("Content-Range: got %q, want bytes */12", got)
		}
		wantSecurityHeaders(t, "416", res, http.StatusRequestedRangeNotSatisfiable, "no-store")
		for _, name := range []string{"Content-Disposition", "ETag", "Last-Modified"} {
			if got := res.header.Get(name); got != "" {
				t.Errorf("416 with %s %q, a header of the download", name, got)
			}
		}
	}

	for _, rng := range []string{"bytes=-0", "bytes=-00", "bytes= - 0 ", "bytes=-+0", "bytes=-0,-0", "bytes=-0,", "bytes=12-", "bytes=20-30,40-", "bytes=abc", "bytes=5-1"} {
		t.Run("Range "+rng, func(t *testing.T) {
			notSatisfiable(t, api.flDownload(t, link, http.Header{"Range": {rng}}))
		})
	}
	t.Run("a zero-length suffix beside a satisfiable range", func(t *testing.T) {
		res := api.flDownload(t, link, http.Header{"Range": {"bytes=0-1,-0"}})
		if res.status != http.StatusPartialContent || res.header.Get("Content-Range") != "bytes 0-1/12" || !bytes.Equal(res.body, content[:2]) {
			t.Errorf("got %d, Content-Range %q, %q; want 206 with bytes 0-1", res.status, res.header.Get("Content-Range"), res.body)
		}
	})
	t.Run("a zero-length suffix with a stale If-Range", func(t *testing.T) {
		res := api.flDownload(t, link, http.Header{"Range": {"bytes=-0"}, "If-Range": {`"stale"`}})
		if res.status != http.StatusOK || !bytes.Equal(res.body, content) {
			t.Errorf("got %d %q, want 200 with the whole file: the range does not apply", res.status, res.body)
		}
	})
	t.Run("a zero-length suffix of an empty file", func(t *testing.T) {
		empty := api.flUploadBytes(t, api.client.ID, ws, "empty.pdf", nil)
		res := api.flDownload(t, api.flLink(t, api.accountantKey, api.client.ID, empty.ID).URL, http.Header{"Range": {"bytes=-0"}})
		if res.status != http.StatusOK || len(res.body) != 0 || res.header.Get("Content-Range") != "" {
			t.Errorf("got %d, Content-Range %q, %d bytes; want 200 without a body, as for any range of an empty file",
				res.status, res.header.Get("Content-Range"), len(res.body))
		}
	})

	head := func(t *testing.T, rawURL string, header http.Header) *response {
		t.Helper()
		req, err := http.NewRequest(http.MethodHead, rawURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, values := range header {
			req.Header[name] = values
		}
		res := api.flSend(t, req)
		if len(res.body) != 0 {
			t.Errorf("HEAD answered a body of %d bytes", len(res.body))
		}
		return res
	}
	t.Run("HEAD answers as GET without the body", func(t *testing.T) {
		get := api.flMustDownload(t, link, content)
		res := head(t, link, nil)
		if res.status != http.StatusOK {
			t.Fatalf("HEAD: got %d, want 200", res.status)
		}
		for _, name := range []string{"Content-Type", "Content-Disposition", "ETag", "Last-Modified", "Cache-Control", "Content-Length", "RateLimit-Limit"} {
			if got, want := res.header.Get(name), get.header.Get(name); got != want || want == "" {
				t.Errorf("HEAD %s: got %q, want GET's %q", name, got, want)
			}
		}
		if res := head(t, link, http.Header{"Range": {"bytes=2-5"}}); res.status != http.StatusPartialContent || res.header.Get("Content-Range") != "bytes 2-5/12" {
			t.Errorf("HEAD with a range: got %d, Content-Range %q; want 206, bytes 2-5/12", res.status, res.header.Get("Content-Range"))
		}
		if res := head(t, link, http.Header{"If-None-Match": {etag}}); res.status != http.StatusNotModified {
			t.Errorf("HEAD with If-None-Match: got %d, want 304", res.status)
		}
		if res := head(t, link, http.Header{"Range": {"bytes=-0"}}); res.status != http.StatusRequestedRangeNotSatisfiable || res.header.Get("Content-Range") != "bytes */12" {
			t.Errorf("HEAD with bytes=-0: got %d, Content-Range %q; want 416, bytes */12", res.status, res.header.Get("Content-Range"))
		}
		expires, _ := flLinkParts(t, link)
		if res := head(t, api.flSignedURL(f.ID, expires, strings.Repeat("0", 64)), nil); res.status != http.StatusForbidden {
			t.Errorf("HEAD with a forged link: got %d, want 403", res.status)
		}
		if allow := sendOptions(t, link, nil).header.Get("Allow"); allow != "GET, HEAD, OPTIONS" {
			t.Errorf("OPTIONS: Allow %q, want GET, HEAD, OPTIONS", allow)
		}
	})
	t.Run("content that cannot be sized", func(t *testing.T) {
		logsBefore := len(api.logs.String())
		req := httptest.NewRequest(http.MethodGet, link, nil)
		rec := httptest.NewRecorder()
		record, err := api.store.FindFileForDownload(context.Background(), f.ID)
		if err != nil {
			t.Fatal(err)
		}
		api.handler.serveContent(rec, req, record, flFailingSeeker{bytes.NewReader(content)})
		res := &response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
		wantError(t, res, http.StatusInternalServerError, "internal_error", "internal_error", flInternal)
		if strings.Contains(string(res.body), "secret/path") {
			t.Errorf("the 500 answer holds the cause: %s", res.body)
		}
		if logs := api.logs.String()[logsBefore:]; !strings.Contains(logs, "http.ServeContent answered 500") {
			t.Errorf("the log does not report the failure:\n%s", logs)
		}
	})
}

// flVerified counts the times the log says the file's bytes were hashed.
func (api *testAPI) flVerified(id string) int {
	n := 0
	for line := range strings.Lines(api.logs.String()) {
		if strings.Contains(line, `"msg":"file verified"`) && strings.Contains(line, `"file_id":"`+id+`"`) {
			n++
		}
	}
	return n
}

// A file's bytes are hashed at its first download, and again only when the
// file changed on disk: its inode, size or modification time. Ranges,
// revalidations and further downloads of it, by any link, read no more of
// it than they send (docs/security.md, section 10).
func TestDownloadVerifiedOnce(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(51, 256<<10)
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
	path := filepath.Join(api.flStoreDir(t), filepath.FromSlash(flStoredPath(f.ID)))
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	etag := `"` + flSHA256(content) + `"`
	hashes := func(t *testing.T, want int) {
		t.Helper()
		if got := api.flVerified(f.ID); got != want {
			t.Errorf("the file was hashed %d times, want %d", got, want)
		}
	}
	mtime := func(t *testing.T) time.Time {
		t.Helper()
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return info.ModTime()
	}
	refused := func(t *testing.T, header http.Header) {
		t.Helper()
		wantError(t, api.flDownload(t, link, header), http.StatusInternalServerError, "internal_error", "internal_error", flInternal)
	}

	api.flMustDownload(t, link, content)
	hashes(t, 1)
	t.Run("later downloads read no more than they send", func(t *testing.T) {
		api.flMustDownload(t, link, content)
		if res := api.flDownload(t, link, http.Header{"Range": {"bytes=0-0"}}); res.status != http.StatusPartialContent || !bytes.Equal(res.body, content[:1]) {
			t.Errorf("Range: got %d %q, want 206 with the first byte", res.status, res.body)
		}
		if res := api.flDownload(t, link, http.Header{"If-None-Match": {etag}}); res.status != http.StatusNotModified {
			t.Errorf("If-None-Match: got %d, want 304", res.status)
		}
		api.clock.Advance(time.Second) // another expiry: another link
		api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
		hashes(t, 1)
	})

	flipped := slices.Clone(content)
	flipped[100<<10] ^= 0x01
	for _, tc := range []struct {
		name  string
		alter func(t *testing.T)
	}{
		{"changed in place, same size", func(t *testing.T) {
			verified := mtime(t)
			if err := os.WriteFile(path, flipped, 0o640); err != nil {
				t.Fatal(err)
			}
			// A file system clock coarser than this test could leave the
			// time as it was; a later write would move it.
			if err := os.Chtimes(path, time.Time{}, verified.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file, same size and time", func(t *testing.T) {
			verified := mtime(t)
			if err := os.WriteFile(path+".new", flipped, 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path+".new", time.Time{}, verified); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated", func(t *testing.T) {
			if err := os.Truncate(path, int64(len(content)-1)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := api.flVerified(f.ID)
			api.flMustDownload(t, link, content)
			tc.alter(t)
			refused(t, http.Header{"Range": {"bytes=0-0"}})
			refused(t, http.Header{"If-None-Match": {etag}})
			refused(t, nil)
			// A file that does not match is hashed at every request: no
			// verdict is kept for it.
			hashes(t, before)
			if err := os.WriteFile(path, content, 0o640); err != nil {
				t.Fatal(err)
			}
			api.flMustDownload(t, link, content)
			hashes(t, before+1)
		})
	}

	// The limit of the design: a change that keeps the inode, the size and
	// the modification time (bytes rotting under the file system, or a
	// write whose time was set back) is not seen until the server restarts
	// or forgets the file.
	t.Run("a change that keeps inode, size and time is not seen", func(t *testing.T) {
		api.flMustDownload(t, link, content)
		verified := mtime(t)
		if err := os.WriteFile(path, flipped, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, time.Time{}, verified); err != nil {
			t.Fatal(err)
		}
		res := api.flDownload(t, link, http.Header{"Range": {"bytes=102400-102400"}})
		if res.status != http.StatusPartialContent || !bytes.Equal(res.body, flipped[100<<10:100<<10+1]) {
			t.Errorf("got %d %q, want 206 with the changed byte, served without a new hash", res.status, res.body)
		}
	})
}

// The public download route is metered per link (120 a minute) and per
// address (600 a minute, whatever the request), with the RateLimit-*
// headers of the nearer limit on every answer.
func TestDownloadRateLimit(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	content := flRandom(52, 1000)
	f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
	link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
	expires, signature := flLinkParts(t, link)
	first := http.Header{"Range": {"bytes=0-0"}}
	wantHeaders := func(t *testing.T, res *response, want map[string]string) {
		t.Helper()
		for name, value := range want {
			if got := res.header.Get(name); got != value {
				t.Errorf("%s: got %q, want %q", name, got, value)
			}
		}
	}

	for i := range downloadLinkLimit {
		res := api.flDownload(t, link, first)
		if res.status != http.StatusPartialContent {
			t.Fatalf("download %d: got %d %s, want 206", i+1, res.status, res.body)
		}
		wantHeaders(t, res, map[string]string{"RateLimit-Limit": "120", "RateLimit-Remaining": strconv.Itoa(downloadLinkLimit - 1 - i), "RateLimit-Reset": "60"})
	}
	api.clock.Advance(15 * time.Second)
	res := api.flDownload(t, link, first)
	wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "rate limit exceeded: retry in 45 s")
	wantHeaders(t, res, map[string]string{"RateLimit-Limit": "120", "RateLimit-Remaining": "0", "RateLimit-Reset": "45", "Retry-After": "45"})

	t.Run("the same link spelt otherwise", func(t *testing.T) {
		for _, rawURL := range []string{
			api.flSignedURL(strings.ToUpper(f.ID), expires, signature),
			api.flSignedURL(f.ID, "+"+expires, strings.ToUpper(signature)),
			api.flSignedURL(f.ID, "0"+expires, signature) + "&x=1",
		} {
			wantError(t, api.flDownload(t, rawURL, first), http.StatusTooManyRequests, "rate_limit", "too_many_requests", "")
		}
	})
	t.Run("another link to the file", func(t *testing.T) {
		api.clock.Advance(time.Second)
		other := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
		res := api.flDownload(t, other, first)
		if res.status != http.StatusPartialContent {
			t.Fatalf("got %d %s, want 206", res.status, res.body)
		}
		wantHeaders(t, res, map[string]string{"RateLimit-Limit": "120", "RateLimit-Remaining": "119"})
	})
	t.Run("forged links spend no link's requests", func(t *testing.T) {
		wantError(t, api.flDownload(t, api.flSignedURL(f.ID, expires, strings.Repeat("0", 64)), first),
			http.StatusForbidden, "auth_error", "invalid_signature", flInvalidSignature)
		if n := api.handler.limiter.Allow("download-link:"+f.ID+"/"+expires, downloadLinkLimit, time.Minute); n.Allowed {
			t.Errorf("the genuine link got a request back")
		}
	})
	t.Run("the window resets", func(t *testing.T) {
		api.clock.Advance(45 * time.Second)
		if res := api.flDownload(t, link, first); res.status != http.StatusPartialContent {
			t.Errorf("after the window: got %d %s, want 206", res.status, res.body)
		}
	})
	t.Run("per address", func(t *testing.T) {
		api.clock.Advance(time.Minute)
		fresh := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
		forged := api.flSignedURL(f.ID, expires, strings.Repeat("0", 64))
		for i := range downloadAddrLimit {
			res := api.flDownload(t, forged, nil)
			if res.status != http.StatusForbidden {
				t.Fatalf("request %d: got %d, want 403", i+1, res.status)
			}
			wantHeaders(t, res, map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": strconv.Itoa(downloadAddrLimit - 1 - i)})
		}
		res := api.flDownload(t, fresh, nil)
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_requests", "rate limit exceeded: retry in 60 s")
		wantHeaders(t, res, map[string]string{"RateLimit-Limit": "600", "RateLimit-Remaining": "0", "Retry-After": "60"})

		req := httptest.NewRequest(http.MethodGet, fresh, nil)
		req.RemoteAddr = "192.0.2.7:4321"
		rec := httptest.NewRecorder()
		api.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), content) {
			t.Errorf("another address: got %d, want 200 with the file", rec.Code)
		}
	})
}

func TestFileOfDeletedTask(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		task := api.createTask(t, api.accountantKey, api.client.ID, map[string]any{"workspaceId": ws, "title": "Collect"})
		content := flRandom(60, 4096)
		f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flField("taskId", task.ID),
			flFilePart("a.pdf", "application/pdf", content))
		if f.TaskID == nil || *f.TaskID != task.ID {
			t.Fatalf("taskId: got %s, want %s", deref(f.TaskID), task.ID)
		}
		res := api.do(request{method: "DELETE", path: "/v1/tasks/" + task.ID, key: api.accountantKey, clientID: api.client.ID})
		if res.status != http.StatusOK {
			t.Fatalf("DELETE task: got %d %s", res.status, res.body)
		}
		got := flDecodeFile(t, api.flGetFile(api.accountantKey, api.client.ID, f.ID), http.StatusOK)
		want := f
		want.TaskID = nil
		flWantFile(t, got, want)
		api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
		if files := api.flStoredFiles(t); !slices.Equal(files, []string{flStoredPath(f.ID)}) {
			t.Errorf("file store: got %v, want the file's bytes kept", files)
		}
	})
}

func TestFileTenantIsolation(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		wsA := api.mustCreateWorkspace(api.client.ID, "A")
		wsB := api.mustCreateWorkspace(api.otherClient.ID, "B")
		contentA, contentB := flRandom(70, 3000), flRandom(71, 3000)
		fileA := api.flUploadBytes(t, api.client.ID, wsA, "a.pdf", contentA)
		fileB := api.flMustUpload(t, api.otherClientClientKey, api.otherClient.ID, flField("workspaceId", wsB), flFilePart("b.pdf", "", contentB))
		const missing = "cmissingmissingmissing0004"

		for _, tc := range []struct {
			name, key, clientID string
		}{
			{"accountant key, client A", api.accountantKey, api.client.ID},
			{"client key of A", api.clientKey, api.client.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, suffix := range []string{"", "/content"} {
					got := api.do(request{method: "GET", path: "/v1/files/" + fileB.ID + suffix, key: tc.key, clientID: tc.clientID})
					wantError(t, got, http.StatusNotFound, "not_found", "not_found", "")
					unknown := api.do(request{method: "GET", path: "/v1/files/" + missing + suffix, key: tc.key, clientID: tc.clientID})
					sameBodyButID(t, got, fileB.ID, unknown, missing)
				}
			})
		}
		for _, tc := range []struct {
			name, key, clientID string
		}{
			{"client key of A naming client B", api.clientKey, api.otherClient.ID},
			{"client key of B naming client A", api.otherClientClientKey, api.client.ID},
			{"another firm's key naming client B", api.other.accountantKey, api.otherClient.ID},
			{"another firm's client key naming client B", api.other.clientKey, api.otherClient.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, id := range []string{fileA.ID, fileB.ID} {
					for _, suffix := range []string{"", "/content"} {
						res := api.do(request{method: "GET", path: "/v1/files/" + id + suffix, key: tc.key, clientID: tc.clientID})
						wantError(t, res, http.StatusNotFound, "not_found", "not_found", "")
						if strings.Contains(string(res.body), id) {
							t.Errorf("the answer names the file: %s", res.body)
						}
					}
				}
			})
		}
		// B's link downloads B's file, and only B's.
		linkB := api.flLink(t, api.otherClientClientKey, api.otherClient.ID, fileB.ID).URL
		api.flMustDownload(t, linkB, contentB)
		if store == bucketStore {
			// The bucket's signature covers the object's key.
			if res := api.flDownload(t, strings.Replace(linkB, fileB.ID, fileA.ID, 1), nil); res.status != http.StatusForbidden {
				t.Errorf("B's pre-signed link changed to name A's file: %d %s, want 403", res.status, res.body)
			}
		} else {
			expires, signature := flLinkParts(t, linkB)
			wantError(t, api.flDownload(t, api.flSignedURL(fileA.ID, expires, signature), nil),
				http.StatusForbidden, "auth_error", "invalid_signature", flInvalidSignature)
		}
		// And the accountant reaches B's file by naming B.
		flDecodeFile(t, api.flGetFile(api.accountantKey, api.otherClient.ID, fileB.ID), http.StatusOK)
		api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, fileA.ID).URL, contentA)
	})
}

func TestFilePermissions(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		content := []byte("x")
		f := api.flUploadBytes(t, api.client.ID, ws, "a.pdf", content)
		readOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"files:read"}})
		writeOnly := api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.client.ID, Permissions: []string{"files:write"}})
		noFiles := api.mustMintKey(api.firm.ID, auth.KeySpec{Permissions: []string{"tasks:read", "tasks:write", "workspaces:read"}})
		rows, files := api.flFileRows(t), api.flStoredFiles(t)
		upload := func(key string) *response {
			return api.flUpload(t, key, api.client.ID, flField("workspaceId", ws), flFilePart("b.pdf", "", content))
		}
		lacks := func(perm string) string { return "this API key lacks the permission " + perm }

		wantError(t, upload(readOnly), http.StatusForbidden, "auth_error", "missing_scope", lacks("files:write"))
		wantError(t, upload(noFiles), http.StatusForbidden, "auth_error", "missing_scope", lacks("files:write"))
		wantError(t, upload("ak_nokey_0000"), http.StatusUnauthorized, "auth_error", "unauthorized", "")
		api.flNothingLeft(t, rows, files)
		for _, suffix := range []string{"", "/content"} {
			path := "/v1/files/" + f.ID + suffix
			wantError(t, api.do(request{method: "GET", path: path, key: writeOnly, clientID: api.client.ID}),
				http.StatusForbidden, "auth_error", "missing_scope", lacks("files:read"))
			wantError(t, api.do(request{method: "GET", path: path, key: noFiles, clientID: api.client.ID}),
				http.StatusForbidden, "auth_error", "missing_scope", lacks("files:read"))
			wantError(t, api.do(request{method: "GET", path: path, clientID: api.client.ID}),
				http.StatusUnauthorized, "auth_error", "unauthorized", "")
			wantError(t, api.do(request{method: "GET", path: path, key: readOnly}),
				http.StatusBadRequest, "bad_request", "missing_client_id", "")
			if res := api.do(request{method: "GET", path: path, key: readOnly, clientID: api.client.ID}); res.status != http.StatusOK {
				t.Errorf("GET %s with files:read: got %d %s", path, res.status, res.body)
			}
		}
		flDecodeFile(t, upload(writeOnly), http.StatusCreated)

		t.Run("unknown and invalid ids", func(t *testing.T) {
			const missing = "cmissingmissingmissing0005"
			for _, suffix := range []string{"", "/content"} {
				wantError(t, api.do(request{method: "GET", path: "/v1/files/" + missing + suffix, key: readOnly, clientID: api.client.ID}),
					http.StatusNotFound, "not_found", "not_found", "file "+missing+" not found")
				wantIssues(t, api.do(request{method: "GET", path: "/v1/files/nope" + suffix, key: readOnly, clientID: api.client.ID}),
					"ValidationError", []issue{cuidIssue("params", "id")})
			}
		})
	})
}
