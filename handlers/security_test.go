package handlers

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"

	"acctapi/auth"
)

// apiSecurityHeaders are the headers every API answer carries, whatever its
// status, so that no cache keeps tenants' data and no browser sniffs,
// runs or frames it.
var apiSecurityHeaders = map[string]string{
	"Cache-Control":           "no-store",
	"X-Content-Type-Options":  "nosniff",
	"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
	"X-Frame-Options":         "DENY",
}

// wantSecurityHeaders checks the headers of one answer; cacheControl is
// what Cache-Control must say.
func wantSecurityHeaders(t *testing.T, what string, res *response, status int, cacheControl string) {
	t.Helper()
	if res.status != status {
		t.Errorf("%s: got %d, want %d (body %s)", what, res.status, status, res.body)
	}
	for name, want := range apiSecurityHeaders {
		if name == "Cache-Control" {
			want = cacheControl
		}
		if got := res.header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %s is %q, want exactly %q", what, name, got, want)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	api := newTestAPI(t)
	addProbeRoutes(api)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	file := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("a.html", "text/html", []byte("<script>alert(1)</script>")))
	link := api.flLink(t, api.accountantKey, api.client.ID, file.ID).URL
	limited := api.mustMintKey(api.firm.ID, auth.KeySpec{RateLimitMax: 1})
	api.do(request{method: "GET", path: "/v1/me", key: limited})

	for _, c := range []struct {
		what   string
		res    *response
		status int
	}{
		{"health", api.do(request{method: "GET", path: "/v1/health"}), http.StatusOK},
		{"openapi.json", api.do(request{method: "GET", path: "/v1/openapi.json"}), http.StatusOK},
		{"me", api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}), http.StatusOK},
		{"list", api.do(request{method: "GET", path: "/v1/tasks", key: api.accountantKey, clientID: api.client.ID}), http.StatusOK},
		{"create", api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: api.client.ID,
			body: map[string]any{"name": "Payroll"}}), http.StatusCreated},
		{"file link", api.do(request{method: "GET", path: "/v1/files/" + file.ID + "/content", key: api.accountantKey, clientID: api.client.ID}), http.StatusOK},
		{"no key", api.do(request{method: "GET", path: "/v1/me"}), http.StatusUnauthorized},
		{"bad key", api.do(request{method: "GET", path: "/v1/me", key: "ak_nosuchkey_" + strings.Repeat("0", 64)}), http.StatusUnauthorized},
		{"missing scope", api.do(request{method: "GET", path: "/v1/admin/clients", key: api.clientKey}), http.StatusForbidden},
		{"rate limited", api.do(request{method: "GET", path: "/v1/me", key: limited}), http.StatusTooManyRequests},
		{"unknown route", api.do(request{method: "GET", path: "/v1/nothing-here"}), http.StatusNotFound},
		{"outside /v1", api.do(request{method: "GET", path: "/"}), http.StatusNotFound},
		{"wrong method", api.do(request{method: "DELETE", path: "/v1/me", key: api.accountantKey}), http.StatusMethodNotAllowed},
		{"OPTIONS", sendOptions(t, api.server.URL+"/v1/tasks", nil), http.StatusOK},
		{"invalid JSON", api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: api.client.ID, body: "{"}), http.StatusBadRequest},
		{"validation", api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: api.client.ID, body: map[string]any{}}), http.StatusUnprocessableEntity},
		{"body too large", api.do(request{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: api.client.ID,
			body: `{"name":"` + strings.Repeat("a", maxJSONBody) + `"}`}), http.StatusRequestEntityTooLarge},
		{"not found", api.flGetFile(api.accountantKey, api.client.ID, "cnosuchfilenosuchfile0000"), http.StatusNotFound},
		{"panic", api.do(request{method: "GET", path: "/v1/test/fail/panic", key: api.accountantKey}), http.StatusInternalServerError},
		{"internal error", api.do(request{method: "GET", path: "/v1/test/fail/internal", key: api.accountantKey}), http.StatusInternalServerError},
		{"download, bad signature", api.flDownload(t, api.flSignedURL(file.ID, "9999999999", strings.Repeat("0", 64)), nil), http.StatusForbidden},
	} {
		t.Run(c.what, func(t *testing.T) { wantSecurityHeaders(t, c.what, c.res, c.status, "no-store") })
	}

	// A download is revalidated by its ETag rather than never stored, and
	// keeps the rest: an uploaded HTML file is never run or framed.
	t.Run("download", func(t *testing.T) {
		res := api.flMustDownload(t, link, []byte("<script>alert(1)</script>"))
		wantSecurityHeaders(t, "download", res, http.StatusOK, "private, no-cache")
		if res.header.Get("ETag") == "" || !strings.HasPrefix(res.header.Get("Content-Disposition"), "attachment;") {
			t.Errorf("download: ETag %q, Content-Disposition %q; want an ETag and an attachment",
				res.header.Get("ETag"), res.header.Get("Content-Disposition"))
		}
	})
	t.Run("download, not modified", func(t *testing.T) {
		etag := api.flMustDownload(t, link, []byte("<script>alert(1)</script>")).header.Get("ETag")
		res := api.flDownload(t, link, http.Header{"If-None-Match": {etag}})
		wantSecurityHeaders(t, "304", res, http.StatusNotModified, "private, no-cache")
	})
}

// sendOptions sends OPTIONS, which openapi.json does not list, so its answer
// is not checked against it.
func sendOptions(t *testing.T, url string, header http.Header) *response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}
}

// No answer invites a cross-origin caller: the API is called by servers
// with keys, not by browsers, so it sends no CORS headers at all, and a
// preflight gets the plain OPTIONS answer, which a browser refuses.
func TestNoCORS(t *testing.T) {
	api := newTestAPI(t)
	origin := http.Header{"Origin": {"https://evil.example"}}
	preflight := http.Header{"Origin": {"https://evil.example"}, "Access-Control-Request-Method": {"POST"},
		"Access-Control-Request-Headers": {"authorization, x-client-id"}}
	for what, res := range map[string]*response{
		"preflight": sendOptions(t, api.server.URL+"/v1/tasks", preflight),
		"health":    api.do(request{method: "GET", path: "/v1/health", header: origin}),
		"me":        api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey, header: origin}),
		"401":       api.do(request{method: "GET", path: "/v1/me", header: origin}),
	} {
		if res.status >= 500 {
			t.Errorf("%s: got %d", what, res.status)
		}
		for name := range res.header {
			if strings.HasPrefix(strings.ToLower(name), "access-control-") {
				t.Errorf("%s with an Origin: answered %s: %q", what, name, res.header.Values(name))
			}
		}
	}
}

// Names that try to reach outside the store land under it by id, and go
// back out only in the Content-Disposition header, made safe.
func TestUploadHostileFileNames(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	before := api.flStoredFiles(t)
	var want []string
	for _, name := range []string{"/etc/passwd", "../../../../tmp/x", "a\x00b.pdf", `..\..\boot.ini`, strings.Repeat("../", 85)} {
		content := []byte("hostile " + name)
		f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart(name, "", content))
		want = append(want, flStoredPath(f.ID))
		res := api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
		disposition := res.header.Get("Content-Disposition")
		fallback := flDispositionRE.FindStringSubmatch(disposition)
		if fallback == nil || strings.ContainsAny(fallback[1], "/\\\x00\"") || strings.HasPrefix(fallback[1], ".") {
			t.Errorf("%q: Content-Disposition %q, want a fallback name without separators, NUL or a leading dot", name, disposition)
		}
		if strings.ContainsAny(disposition, "\x00\r\n") {
			t.Errorf("%q: Content-Disposition %q holds control characters", name, disposition)
		}
	}
	want = append(want, before...)
	slices.Sort(want)
	if got := api.flStoredFiles(t); !slices.Equal(got, want) {
		t.Errorf("file store:\n got %v\nwant %v (each file under its id)", got, want)
	}
}

// flSafeDisposition checks the Content-Disposition of a download of the
// file named name: no control or format character (bidi controls,
// zero-width characters) in either name it gives, no percent sign or RFC
// 2047 encoded word in the ASCII fallback, and the exact name, less what is
// dropped, in filename*.
func flSafeDisposition(t *testing.T, header, name string) {
	t.Helper()
	m := flDispositionRE.FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("Content-Disposition %q is not attachment; filename=\"<safe ASCII>\"[; filename*=UTF-8''<pct-encoded>]", header)
	}
	fallback, exact := m[1], m[1]
	if m[2] != "" || strings.Contains(header, "filename*=") {
		decoded, err := url.PathUnescape(m[2])
		if err != nil {
			t.Fatalf("filename* %q: %v", m[2], err)
		}
		exact = decoded
	}
	for what, s := range map[string]string{"ASCII fallback": fallback, "filename*": exact} {
		if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }); i >= 0 {
			t.Errorf("%s %q holds the control or format character %U", what, s, []rune(s[i:])[0])
		}
	}
	if strings.Contains(fallback, "%") || strings.Contains(fallback, "=?") {
		t.Errorf("ASCII fallback %q holds a percent sign or the start of an encoded word", fallback)
	}
	if want := flDispositionName(name); exact != want {
		t.Errorf("Content-Disposition names %q, want %q", exact, want)
	}
	if typ, params, err := mime.ParseMediaType(header); err != nil || typ != "attachment" || params["filename"] != exact {
		t.Errorf("mime.ParseMediaType(%q) = %q, %q, %v; want attachment with filename %q", header, typ, params, err, exact)
	}
}

// Names that would show another name than they hold: bidi and other format
// characters are dropped from the stored name and from both forms of
// Content-Disposition, and the
// ASCII fallback has no percent-escapes or encoded words that a client
// could decode into another name.
func TestDownloadHostileFileNames(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	for _, tc := range []struct{ name, disposition string }{
		{"invoice\u202Efdp.exe", `attachment; filename="invoicefdp.exe"`},
		{"\u202Dleft\u202C.pdf", `attachment; filename="left.pdf"`},
		{"a\u2066b\u2067c\u2068d\u2069.pdf", `attachment; filename="abcd.pdf"`},
		{"\u200Bzero\u200Cwidth\u200D.pdf", `attachment; filename="zerowidth.pdf"`},
		{"\uFEFFbom\u00AD.pdf", `attachment; filename="bom.pdf"`},
		{"\u200E\u200Fmarks\u061C.pdf", `attachment; filename="marks.pdf"`},
		{"flag\U000E0067\U000E0062\U000E007F.pdf", `attachment; filename="flag.pdf"`},
		{"\u202E", `attachment; filename="upload"`},
		{"Müller\u202Efdp.exe", `attachment; filename="M_llerfdp.exe"; filename*=UTF-8''M%C3%BCllerfdp.exe`},
		{"%41%42.pdf", `attachment; filename="_41_42.pdf"; filename*=UTF-8''%2541%2542.pdf`},
		{"..%2f..%2fetc%2fpasswd", `attachment; filename="_2f.._2fetc_2fpasswd"; filename*=UTF-8''..%252f..%252fetc%252fpasswd`},
		{"=?utf-8?b?ZXZpbC5leGU=?=", `attachment; filename="_utf-8?b?ZXZpbC5leGU_="; filename*=UTF-8''%3D%3Futf-8%3Fb%3FZXZpbC5leGU%3D%3F%3D`},
		{"=?iso-8859-1?q?=E9vil?=.pdf", `attachment; filename="_iso-8859-1?q?=E9vil?=.pdf"; filename*=UTF-8''%3D%3Fiso-8859-1%3Fq%3F%3DE9vil%3F%3D.pdf`},
		{"=\x00?utf-8?q?x?=", `attachment; filename="_utf-8?q?x?="; filename*=UTF-8''%3D%3Futf-8%3Fq%3Fx%3F%3D`},
		{"\u202Egpj.exe =?utf-8?b?eA==?= %00", `attachment; filename="gpj.exe _utf-8?b?eA=_= _00"; filename*=UTF-8''gpj.exe%20%3D%3Futf-8%3Fb%3FeA%3D%3D%3F%3D%20%2500`},
	} {
		t.Run(fmt.Sprintf("%+q", tc.name), func(t *testing.T) {
			content := []byte("hostile " + tc.name)
			f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart(tc.name, "", content))
			want := strings.Map(func(r rune) rune {
				if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
					return -1
				}
				return r
			}, tc.name)
			if want == "" {
				want = "upload"
			}
			if f.Name != want {
				t.Errorf("name: got %q, want %q", f.Name, want)
			}
			res := api.flMustDownload(t, api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL, content)
			header := res.header.Get("Content-Disposition")
			if header != tc.disposition {
				t.Errorf("Content-Disposition:\n got %s\nwant %s", header, tc.disposition)
			}
			flSafeDisposition(t, header, f.Name)
		})
	}
}

// Properties the server owns are not the caller's to set: a create that
// names another client, an id, an author or timestamps gets them ignored.
func TestServerOwnedPropertiesIgnored(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Payroll")
	forged := "cforgedforgedforged000001"
	task := api.createTask(t, api.clientKey, api.client.ID, map[string]any{
		"title": "Mine", "workspaceId": ws,
		"id": forged, "clientId": api.other.client.ID, "firmId": api.other.firm.ID, "createdById": forged,
		"actorType": "USER", "createdAt": "2001-01-01T00:00:00.000Z", "updatedAt": "2001-01-01T00:00:00.000Z",
	})
	if task.ID == forged || task.CreatedByID != nil || task.ActorType != "API" || strings.HasPrefix(task.CreatedAt, "2001") || strings.HasPrefix(task.UpdatedAt, "2001") {
		t.Errorf("the create took server-owned properties from the body: %s", task)
	}
	if got := api.sqlColumn(t, `SELECT client_id FROM tasks WHERE id = ?`, task.ID); len(got) != 1 || got[0] != api.client.ID {
		t.Errorf("the task belongs to %v, want the x-client-id client %s", got, api.client.ID)
	}
}

// A download link is built from the configured base URL, never from the
// request's Host header, so a forged Host cannot send a client's link
// elsewhere.
func TestDownloadLinkIgnoresHost(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("a.pdf", "", []byte("%PDF-")))
	res := api.do(request{method: "GET", path: "/v1/files/" + f.ID + "/content", key: api.accountantKey, clientID: api.client.ID,
		header: http.Header{"X-Forwarded-Host": {"evil.example"}, "Forwarded": {"host=evil.example"}}})
	req, err := http.NewRequest("GET", api.server.URL+"/v1/files/"+f.ID+"/content", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+api.accountantKey)
	req.Header.Set("x-client-id", api.client.ID)
	for _, r := range []*response{res, api.flSend(t, req)} {
		var link flLinkBody
		r.decode(t, &link)
		if !strings.HasPrefix(link.URL, api.server.URL+"/v1/files/"+f.ID+"/download?") {
			t.Errorf("link %q, want it under the configured base %s", link.URL, api.server.URL)
		}
	}
}

// TestNamesDropInvisibleCharacters: stored file names lose control and
// format characters and line and paragraph separators, however the part
// header spelt them (filename* carries any byte); client and person names
// lose format characters and separators (control characters are refused).
func TestNamesDropInvisibleCharacters(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
	for spelt, want := range map[string]string{
		`filename*=UTF-8''invoice%E2%80%AEfdp.exe`:               "invoicefdp.exe",
		`filename*=UTF-8''a%00b%E2%80%8B%E2%80%A8c%E2%80%A9.pdf`: "abc.pdf",
		`filename*=UTF-8''%E2%80%AE%00`:                          "upload",
	} {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; `+spelt)
		f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flPart{h, strings.NewReader("x")})
		if f.Name != want {
			t.Errorf("%s: stored %q, want %q", spelt, f.Name, want)
		}
	}

	res := api.do(request{method: "POST", path: "/v1/admin/clients", key: api.accountantKey,
		body: map[string]any{"name": "Evil\u202Egpj.exe Ltd\u2028", "type": "legal_person"}})
	if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"name":"Evilgpj.exe Ltd"`) {
		t.Errorf("client name: %d %s", res.status, res.body)
	}
	res = api.do(request{method: "POST", path: "/v1/users", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"email": "anna@client.example", "role": "user", "firstName": "An\u200Dna\u2029", "lastName": "\u202ESchmidt"}})
	if res.status != http.StatusCreated || !strings.Contains(string(res.body), `"firstName":"Anna"`) || !strings.Contains(string(res.body), `"lastName":"Schmidt"`) {
		t.Errorf("person names: %d %s", res.status, res.body)
	}
	res = api.do(request{method: "POST", path: "/v1/users", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"email": "bob@client.example", "role": "user", "firstName": "\u202E"}})
	if res.status != http.StatusUnprocessableEntity {
		t.Errorf("a name of format characters only: %d, want 422", res.status)
	}
}

// TestServedContentType: a download is sent as its recorded type only when
// browsers do not run that type (documents, images, plain text, XML, CSV,
// ZIP); every other type, the uploader's choice, goes out as
// application/octet-stream, with nosniff on the local route and in the
// bucket's signed link's response override.
func TestServedContentType(t *testing.T) {
	forEachStore(t, func(t *testing.T, store testStore) {
		api := newFileTestAPI(t, store)
		ws := api.mustCreateWorkspace(api.client.ID, "Receipts")
		for uploaded, served := range map[string]string{
			"application/pdf":              "application/pdf",
			"image/png":                    "image/png",
			"text/plain; charset=utf-8":    "text/plain; charset=utf-8",
			"text/csv":                     "text/csv",
			"application/zip":              "application/zip",
			"APPLICATION/XML":              "application/xml",
			"text/html":                    "application/octet-stream",
			"text/html; charset=utf-8":     "application/octet-stream",
			"text/javascript":              "application/octet-stream",
			"image/svg+xml":                "application/octet-stream",
			"application/xhtml+xml":        "application/octet-stream",
			"":                             "application/octet-stream", // sniffed as text/html
			"application/octet-stream":     "application/octet-stream",
			"text/plain; charset=\"x\\\"y": "application/octet-stream",
		} {
			content := []byte("<html><script>alert(1)</script></html>")
			f := api.flMustUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", ws), flFilePart("a.bin", uploaded, content))
			link := api.flLink(t, api.accountantKey, api.client.ID, f.ID).URL
			if store == bucketStore {
				u, err := url.Parse(link)
				if err != nil {
					t.Fatal(err)
				}
				if got := u.Query().Get("response-content-type"); got != served {
					t.Errorf("%q: the bucket's link overrides Content-Type with %q, want %q", uploaded, got, served)
				}
				continue
			}
			res := api.flMustDownload(t, link, content)
			if got := res.header.Get("Content-Type"); got != served {
				t.Errorf("%q (recorded %q): served as %q, want %q", uploaded, f.MimeType, got, served)
			}
			if res.header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%q: no nosniff", uploaded)
			}
		}
	})
}
