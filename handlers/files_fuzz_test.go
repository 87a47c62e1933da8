package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzFilePart returns the content of the first part named file of a
// multipart body, as mime/multipart reads it.
func fuzzFilePart(t *testing.T, contentType string, body []byte) []byte {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("an upload with Content-Type %q was accepted: %v", contentType, err)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := r.NextPart()
		if err != nil {
			t.Fatalf("an upload without a file part was accepted: %v", err)
		}
		if part.FormName() == "file" {
			content, err := io.ReadAll(part)
			if err != nil {
				t.Fatalf("an upload whose file part does not read was accepted: %v", err)
			}
			return content
		}
	}
}

// FuzzUpload sends a fuzzed multipart body with a fuzzed Content-Type to
// POST /v1/files; a line feed in the Content-Type separates several headers.
// An answer is never a 500; an accepted upload downloads back byte for byte,
// with the SHA-256 of what was sent, under a safe Content-Disposition.
func FuzzUpload(f *testing.F) {
	seed := func(parts ...flPart) []byte { return flBody(f, parts...) }
	for _, in := range []struct {
		contentType string
		body        []byte
	}{
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("receipt.pdf", "application/pdf", flPDF))},
		{flMultipart, seed(flFilePart("", "", nil), flField("workspaceId", "$W"), flField("taskId", "$T"),
			flField("folderId", "$F"), flField("labelIds", "$L, $L"), flField("documentDate", "2026-01-02T03:04:05+01:00"))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("façade €.png", "", flPNG))},
		{flMultipart, seed(flField("workspaceId", "$w"), flFilePart("x", "text/plain", []byte("hello")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("a", "", []byte("1")), flFilePart("b", "", []byte("2")))},
		{flMultipart, seed(flField("workspaceId", "$W"))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart(strings.Repeat("n", 300), "", []byte("x")))},
		{flMultipart, []byte("--" + flBoundary + "\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nunterminated")},
		{"multipart/form-data; boundary=\"a b\"", []byte("--a b\r\nContent-Disposition: form-data; name=workspaceId\r\n\r\n$W\r\n" +
			"--a b\r\nContent-Disposition: form-data; name=file; filename*=UTF-8''%E2%82%AC.txt\r\n\r\n€\r\n--a b--\r\n")},
		{"multipart/form-data", []byte("")},
		{"application/json", []byte(`{"workspaceId":"$W"}`)},
		{"multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"file\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=41=42\r\n--x\r\nContent-Disposition: form-data; name=workspaceId\r\n\r\n$W\r\n--x--")},
		// Names that would show or decode to another name.
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("invoice\u202Efdp.exe", "", []byte("MZ")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("\u2066\u200Bb\uFEFFom\u00AD\U000E0041.pdf", "", []byte("x")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("%41%2e%2e%2fx.pdf", "", []byte("x")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flFilePart("=?utf-8?b?ZXZpbC5leGU=?= =?iso-8859-1?q?=E9?=", "", []byte("x")))},
		// Form fields over their shared budget, known or not, and part
		// headers over their limit.
		{flMultipart, seed(flField("workspaceId", "$W"), flField("labelIds", strings.Repeat("$L,", 1500)),
			flField("labelIds", strings.Repeat("$L,", 1500)), flFilePart("a", "", []byte("1")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flField("note", strings.Repeat("n", 40<<10)),
			flField("memo", strings.Repeat("m", 30<<10)), flFilePart("a", "", []byte("1")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flField("documentDate", strings.Repeat("9", maxFormFields+1)), flFilePart("a", "", []byte("1")))},
		{flMultipart, []byte("--" + flBoundary + "\r\nContent-Disposition: form-data; name=workspaceId\r\nX-Padding: " +
			strings.Repeat("p", maxPartHeader) + "\r\n\r\n$W\r\n--" + flBoundary + "\r\nContent-Disposition: form-data; name=file; filename=a\r\n\r\n1\r\n--" + flBoundary + "--\r\n")},
		// Fields with a NUL, bytes that are not UTF-8 or a date-time Go's
		// parser alone would take; two Content-Type headers (a line feed
		// separates them).
		{flMultipart, seed(flField("workspaceId", "$W\x00"), flField("taskId", "$T\xff"), flFilePart("r.txt", "", []byte("x")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flField("documentDate", "2026-01-02T03:04:05+24:00"), flFilePart("r.txt", "", []byte("x")))},
		{flMultipart, seed(flField("workspaceId", "$W"), flField("documentDate", "2026-01-02T03:04:05,5-23:59"), flFilePart("r.txt", "", []byte("x")))},
		{flMultipart + "\n" + flMultipart, seed(flField("workspaceId", "$W"), flFilePart("r.txt", "", []byte("x")))},
		{flMultipart + "\napplication/json", seed(flField("workspaceId", "$W"), flFilePart("r.txt", "", []byte("x")))},
	} {
		f.Add(in.contentType, in.body)
	}
	fx := newFuzzFixture(f)
	fx.base.handler.limiter = flUnmetered()
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		api := fx.on(t)
		contentType = fx.expand(contentType)
		contentTypes := strings.Split(contentType, "\n")
		if slices.ContainsFunc(contentTypes, func(v string) bool { return !validHeaderValue(v) }) {
			t.Skip("Go's HTTP client does not send this header value")
		}
		body = []byte(fx.expand(string(body)))
		var res *response
		if len(contentTypes) == 1 {
			res = api.flPost(t, fx.acct, api.client.ID, contentType, bytes.NewReader(body))
		} else {
			req, err := http.NewRequest(http.MethodPost, api.server.URL+"/v1/files", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = http.Header{"Content-Type": contentTypes, "Authorization": {"Bearer " + fx.acct}, "X-Client-Id": {api.client.ID}}
			res = api.flSend(t, req)
			// The body is read as the first Content-Type says.
			contentType = contentTypes[0]
		}
		out := fuzzCheckAnswer(t, api, res, []int{http.StatusCreated, http.StatusBadRequest, http.StatusNotFound,
			http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity})
		if out == nil {
			return
		}
		content := fuzzFilePart(t, contentType, body)
		file := flDecodeFile(t, res, http.StatusCreated)
		if file.Size != int64(len(content)) {
			t.Errorf("size: got %d, want the %d bytes sent", file.Size, len(content))
		}
		if got := api.flGetFile(fx.acct, api.client.ID, file.ID); got.status != http.StatusOK || !bytes.Equal(got.body, res.body) {
			t.Errorf("GET /v1/files/%s: %d %s, want the upload's answer %s", file.ID, got.status, got.body, res.body)
		}
		link := api.flLink(t, fx.acct, api.client.ID, file.ID)
		download := api.flMustDownload(t, link.URL, content)
		if etag, want := download.header.Get("ETag"), `"`+flSHA256(content)+`"`; etag != want {
			t.Errorf("ETag: got %s, want the SHA-256 of the bytes sent %s", etag, want)
		}
		flSafeDisposition(t, download.header.Get("Content-Disposition"), file.Name)
	})
}

// FuzzDownloadLink sends GET /v1/files/{id}/download with a fuzzed id and
// query. Only the genuine link to the file, unexpired, downloads it (an
// expired genuine one answers 410); anything else is a 403, 404 or 422 with
// the standard body, never a 500.
func FuzzDownloadLink(f *testing.F) {
	for _, in := range []struct{ id, query string }{
		{"$A", "expires=$E&signature=$S"},
		{"$A", "signature=$S&expires=$E"},
		{"$A", "expires=$e&signature=$s"},
		{"$A", "expires=$E&signature=$s"},
		{"$A", "expires=$e&signature=$S"},
		{"$W", "expires=$E&signature=$S"},
		{"$A", "expires=+$E&signature=$S"},
		{"$A", "expires=0$E&signature=$S&expires=1"},
		{"$A", "expires=$E&signature=$S00"},
		{"$A", "expires=$E"},
		{"$A", "expires=99999999999999999999&signature=$S"},
		{"$A", "expires=-1&signature=" + strings.Repeat("0", 64)},
		{"$A", "expires=$E&signature=%zz"},
		{"$A", ""},
		{"cnosuchfile00000", "expires=$E&signature=$S"},
		{"../$A", "expires=$E&signature=$S"},
		{"", "expires=$E&signature=$S"},
		// Ids with a NUL, other control characters or bytes that are not
		// UTF-8 (the target escapes the id into the path: %00).
		{"$A\x00", "expires=$E&signature=$S"},
		{"$A\n", "expires=$E&signature=$S"},
		{"$A\xff", "expires=$E&signature=$S"},
		{"$A", "expires=$E%00&signature=$S"},
	} {
		f.Add(in.id, in.query)
	}
	fx := newFuzzFixture(f)
	fx.base.handler.limiter = flUnmetered()
	api := fx.base
	ctx := context.Background()
	expires, signature, err := api.handler.signer.Sign(ctx, fx.file)
	if err != nil {
		f.Fatal(err)
	}
	now := api.clock.Now()
	api.clock.Set(now.Add(-time.Hour))
	oldExpires, oldSignature, err := api.handler.signer.Sign(ctx, fx.file)
	api.clock.Set(now)
	if err != nil {
		f.Fatal(err)
	}
	links := strings.NewReplacer("$E", strconv.FormatInt(expires, 10), "$S", signature,
		"$e", strconv.FormatInt(oldExpires, 10), "$s", oldSignature)
	genuine := func(id string, query url.Values, expires int64, signature string) bool {
		got, err := strconv.ParseInt(query.Get("expires"), 10, 64)
		// DecodeString returns what it decoded before an error, too.
		sig, sigErr := hex.DecodeString(query.Get("signature"))
		want, _ := hex.DecodeString(signature)
		return strings.ToLower(id) == fx.file && err == nil && sigErr == nil && got == expires && bytes.Equal(sig, want)
	}
	f.Fuzz(func(t *testing.T, id, rawQuery string) {
		api := fx.on(t)
		id, rawQuery = fx.expand(links.Replace(id)), links.Replace(rawQuery)
		if strings.ContainsAny(rawQuery, "# \x7f") || strings.ContainsFunc(rawQuery, func(r rune) bool { return r < ' ' || r > '~' }) {
			rawQuery = url.PathEscape(rawQuery)
		}
		res := api.do(request{method: "GET", path: "/v1/files/" + url.PathEscape(id) + "/download?" + rawQuery})
		query, _ := url.ParseQuery(rawQuery)
		switch {
		case genuine(id, query, expires, signature):
			if res.status != http.StatusOK || !bytes.Equal(res.body, fx.fileContent) {
				t.Fatalf("the genuine link ?%s answered %d %q, want 200 with the file", rawQuery, res.status, res.body)
			}
			if sum := sha256.Sum256(res.body); res.header.Get("ETag") != `"`+hex.EncodeToString(sum[:])+`"` {
				t.Errorf("ETag %s is not the SHA-256 of the content", res.header.Get("ETag"))
			}
		case genuine(id, query, oldExpires, oldSignature):
			wantError(t, res, http.StatusGone, "bad_request", "link_expired", flLinkExpired)
		default:
			fuzzCheckAnswer(t, api, res, []int{http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity})
		}
	})
}

// flContentRange is the first and last byte of a Content-Range "bytes
// a-b/size" within content of size bytes.
var flContentRange = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\d+)$`)

// flCheckPart checks a part of a 206: its Content-Range lies within the
// content and its bytes, unless body is nil (HEAD), are those of the
// content there.
func flCheckPart(t *testing.T, contentRange string, body, content []byte) {
	t.Helper()
	m := flContentRange.FindStringSubmatch(contentRange)
	if m == nil {
		t.Fatalf("Content-Range %q is not bytes a-b/size", contentRange)
	}
	first, _ := strconv.Atoi(m[1])
	last, _ := strconv.Atoi(m[2])
	if size, _ := strconv.Atoi(m[3]); size != len(content) || first > last || last >= len(content) {
		t.Fatalf("Content-Range %q does not lie within %d bytes", contentRange, len(content))
	}
	if body != nil && !bytes.Equal(body, content[first:last+1]) {
		t.Fatalf("the part of Content-Range %q holds other bytes", contentRange)
	}
}

// FuzzDownloadRange sends a genuine download link, by GET or HEAD, with a
// fuzzed Range and If-Range. The answer is the whole file, the ranges asked
// for (each within the file, with its bytes) or a 416 with the standard
// body and Content-Range "bytes */size"; never a 500, never an empty or
// inverted range.
func FuzzDownloadRange(f *testing.F) {
	for _, in := range []struct {
		rng, ifRange string
		head         bool
	}{
		{"bytes=0-9", "", false},
		{"bytes=-5", "", false},
		{"bytes=10-", "", true},
		{"bytes=0-1,4-7", "", false},
		{"bytes=-0", "", false},
		{"bytes=-0", "", true},
		{"bytes=-00", "", false},
		{"bytes= - 0", "", false},
		{"bytes=-+0", "", false},
		{"bytes=-0,", "", false},
		{"bytes=0-1,-0", "", false},
		{"bytes=-0", `"stale"`, false},
		{"bytes=-0", "$ETAG", false},
		{"bytes=0-0", "$ETAG", true},
		{"bytes=99999-", "", false},
		{"bytes=5-1", "", false},
		{"bytes=abc", "", false},
		{"bytes=", "", false},
		{"items=0-1", "", false},
		{"", "", true},
	} {
		f.Add(in.rng, in.ifRange, in.head)
	}
	fx := newFuzzFixture(f)
	fx.base.handler.limiter = flUnmetered()
	content := fx.fileContent
	sum := sha256.Sum256(content)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	expires, signature, err := fx.base.handler.signer.Sign(context.Background(), fx.file)
	if err != nil {
		f.Fatal(err)
	}
	link := fx.base.flSignedURL(fx.file, strconv.FormatInt(expires, 10), signature)
	f.Fuzz(func(t *testing.T, rng, ifRange string, head bool) {
		api := fx.on(t)
		ifRange = strings.ReplaceAll(ifRange, "$ETAG", etag)
		if !validHeaderValue(rng) || !validHeaderValue(ifRange) {
			t.Skip("Go's HTTP client does not send this header value")
		}
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		req, err := http.NewRequest(method, link, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		if ifRange != "" {
			req.Header.Set("If-Range", ifRange)
		}
		res := api.flSend(t, req)
		if head && len(res.body) != 0 {
			t.Fatalf("HEAD answered %d bytes of body", len(res.body))
		}
		switch res.status {
		case http.StatusOK:
			if !head && !bytes.Equal(res.body, content) {
				t.Fatalf("200 with %d bytes that are not the file", len(res.body))
			}
		case http.StatusPartialContent:
			mediaType, params, _ := mime.ParseMediaType(res.header.Get("Content-Type"))
			switch {
			case mediaType != "multipart/byteranges" && head:
				flCheckPart(t, res.header.Get("Content-Range"), nil, content)
				return
			case mediaType != "multipart/byteranges":
				flCheckPart(t, res.header.Get("Content-Range"), res.body, content)
				return
			case head:
				return
			}
			parts := multipart.NewReader(bytes.NewReader(res.body), params["boundary"])
			for {
				part, err := parts.NextPart()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Fatalf("multipart/byteranges: %v", err)
				}
				body, err := io.ReadAll(part)
				if err != nil {
					t.Fatalf("multipart/byteranges: %v", err)
				}
				flCheckPart(t, part.Header.Get("Content-Range"), body, content)
			}
		case http.StatusRequestedRangeNotSatisfiable:
			if got, want := res.header.Get("Content-Range"), "bytes */"+strconv.Itoa(len(content)); got != want {
				t.Errorf("416 with Content-Range %q, want %q", got, want)
			}
			if !head {
				wantError(t, res, http.StatusRequestedRangeNotSatisfiable, "bad_request", "range_not_satisfiable", "")
			}
		default:
			t.Fatalf("Range %q, If-Range %q: got %d %q, want 200, 206 or 416", rng, ifRange, res.status, res.body)
		}
	})
}
