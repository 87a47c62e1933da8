package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"acctapi/analysis"
	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
	"acctapi/filestore/s3test"
)

// testClock is a clock tests move by hand instead of sleeping.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tenant is a firm with one client, an accountant key and a client key.
type tenant struct {
	firm          *db.Firm
	client        *db.Client
	accountantKey string
	clientKey     string
}

// testAPI is the real handler on a real SQLite database, served through
// httptest, with a second firm to prove that nothing crosses tenants.
type testAPI struct {
	t       testing.TB
	store   *db.DB
	handler *Handler
	server  *httptest.Server
	clock   *testClock
	logs    *syncBuffer
	router  routers.Router
	files   *filestore.Store
	// s3 is the versitygw whose bucket holds the files, when not files.
	s3 *s3test.Server

	tenant
	other tenant // a second firm
	// otherClient is a second client of the first firm, with its own key.
	otherClient          *db.Client
	otherClientClientKey string
}

// testMaxUpload is the upload limit of the test server: small, so that
// tests can cross it.
const testMaxUpload = 1 << 20

// newTestAPI starts the API on a new store; configure changes the handler's
// configuration before it is built.
func newTestAPI(t testing.TB, configure ...func(*Config)) *testAPI {
	t.Helper()
	clock := &testClock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	store, err := db.Open(filepath.Join(t.TempDir(), "acctapi.db"), db.Options{Now: clock.Now, EncodeEvent: EncodeEvent, IdempotencyKey: IdempotencyKeyOf, Teacher: analysis.Teach})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	api := &testAPI{t: t, store: store, clock: clock, logs: &syncBuffer{}}
	api.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(api.server.Close)
	if err := store.InitLinkSigningSecret(context.Background(), auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	if api.files, err = filestore.Open(filepath.Join(t.TempDir(), "files")); err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Store:   store,
		Auth:    auth.NewAuthenticator(store, clock.Now),
		Limiter: auth.NewLimiter(clock.Now),
		Logger:  slog.New(slog.NewJSONHandler(api.logs, nil)),
		BaseURL: api.server.URL + "/v1",
		Version: "test",
		Files:   api.files,
		Signer:  auth.NewSigner(store, clock.Now),
		Now:     clock.Now,

		MaxUploadBytes: testMaxUpload,
	}
	for _, c := range configure {
		c(&cfg)
	}
	api.handler, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	api.tenant = api.mustCreateTenant("Firm One", "Client One")
	api.other = api.mustCreateTenant("Firm Two", "Client Two")
	api.otherClient = api.mustCreateClient(api.firm.ID, "Client Three")
	api.otherClientClientKey = api.mustMintKey(api.firm.ID, auth.KeySpec{ClientID: api.otherClient.ID})
	api.loadOpenAPI()
	return api
}

func (api *testAPI) mustCreateTenant(firmName, clientName string) tenant {
	api.t.Helper()
	firm, err := api.store.CreateFirm(context.Background(), firmName)
	if err != nil {
		api.t.Fatal(err)
	}
	client := api.mustCreateClient(firm.ID, clientName)
	return tenant{
		firm:          firm,
		client:        client,
		accountantKey: api.mustMintKey(firm.ID, auth.KeySpec{}),
		clientKey:     api.mustMintKey(firm.ID, auth.KeySpec{ClientID: client.ID}),
	}
}

func (api *testAPI) mustCreateClient(firmID, name string) *db.Client {
	api.t.Helper()
	c, err := api.store.CreateClient(context.Background(), firmID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
	if err != nil {
		api.t.Fatal(err)
	}
	return c
}

func (api *testAPI) mustMintKey(firmID string, spec auth.KeySpec) string {
	api.t.Helper()
	key, _, err := auth.MintKey(context.Background(), api.store, firmID, spec)
	if err != nil {
		api.t.Fatal(err)
	}
	return key
}

// exec runs SQL on the test database through a connection of its own: for
// fixtures (workspaces, folders, files) whose endpoints are not built yet.
func (api *testAPI) exec(query string, args ...any) {
	api.t.Helper()
	conn, err := sql.Open("sqlite", "file:"+api.store.Path()+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		api.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(query, args...); err != nil {
		api.t.Fatalf("%s: %v", query, err)
	}
}

// mustCreateWorkspace creates a workspace of the client.
func (api *testAPI) mustCreateWorkspace(clientID, name string) string {
	api.t.Helper()
	id := db.NewID()
	api.exec(`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) VALUES (?, ?, ?, 0, 0)`, id, clientID, name)
	return id
}

// mustCreateFolder creates a folder in a workspace of the client.
func (api *testAPI) mustCreateFolder(clientID, workspaceID, name string) string {
	api.t.Helper()
	id := db.NewID()
	api.exec(`INSERT INTO folders (id, client_id, workspace_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, 0, 0)`,
		id, clientID, workspaceID, name)
	return id
}

// mustCreateFile creates a file record in a workspace of the client,
// attached to taskID when it is not "".
func (api *testAPI) mustCreateFile(clientID, workspaceID, taskID string) string {
	api.t.Helper()
	id := db.NewID()
	var task any
	if taskID != "" {
		task = taskID
	}
	api.exec(`INSERT INTO files (id, client_id, workspace_id, task_id, name, mimetype, size, sha256, document_date, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'receipt.pdf', 'application/pdf', 3, x'00', 0, 0, 0)`, id, clientID, workspaceID, task)
	return id
}

// loadOpenAPI loads the document the server serves, as a client would, and
// checks that it is a valid OpenAPI document.
// openAPIRouter is the router of the OpenAPI document every test checks its
// answers against: loaded and validated once per test binary (it is the
// same document for every server but its servers URL), with a servers URL
// that matches any test server's address.
var openAPIRouter struct {
	once   sync.Once
	router routers.Router
	err    error
}

func (api *testAPI) loadOpenAPI() {
	api.t.Helper()
	openAPIRouter.once.Do(func() {
		openAPIRouter.router, openAPIRouter.err = newOpenAPIRouter(api.server.URL + "/v1/openapi.json")
	})
	if openAPIRouter.err != nil {
		api.t.Fatal(openAPIRouter.err)
	}
	api.router = openAPIRouter.router
}

// newOpenAPIRouter loads the document a server answers at url, validates it,
// and routes requests to any test server's /v1 by it.
func newOpenAPIRouter(url string) (routers.Router, error) {
	res, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: "http://{hostport}/v1",
		Variables: map[string]*openapi3.ServerVariable{"hostport": {Default: "127.0.0.1"}}}}
	// NewRouter validates the document first.
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.json is not valid: %w", err)
	}
	return router, nil
}

// request is one call to the API.
type request struct {
	method   string
	path     string // below the server root, e.g. /v1/me
	key      string // sent as a bearer key when set
	clientID string // sent as x-client-id when set
	body     any    // a string or []byte is sent as is, anything else as JSON
	header   http.Header
}

// response is an answer, already checked against the OpenAPI document.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// do sends the request and checks the answer against the OpenAPI document:
// its status must be documented for the operation, and its body must match.
// Routes under /v1/test/ exist only in tests and are not documented.
func (api *testAPI) do(req request) *response {
	api.t.Helper()
	var body io.Reader
	switch b := req.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			api.t.Fatal(err)
		}
		body = bytes.NewReader(data)
	}
	httpReq, err := http.NewRequest(req.method, api.server.URL+req.path, body)
	if err != nil {
		api.t.Fatal(err)
	}
	if body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	for name, values := range req.header {
		httpReq.Header[name] = values
	}
	if req.key != "" {
		httpReq.Header.Set("Authorization", "Bearer "+req.key)
	}
	if req.clientID != "" {
		httpReq.Header.Set("x-client-id", req.clientID)
	}
	res, err := http.DefaultClient.Do(httpReq)
	if err != nil {
		api.t.Fatal(err)
	}
	defer res.Body.Close()
	out := &response{status: res.StatusCode, header: res.Header}
	if out.body, err = io.ReadAll(res.Body); err != nil {
		api.t.Fatal(err)
	}
	if res.Header.Get("X-Request-Id") == "" {
		api.t.Errorf("%s %s: no X-Request-Id header", req.method, req.path)
	}
	api.checkOpenAPI(httpReq, out)
	return out
}

func (api *testAPI) checkOpenAPI(httpReq *http.Request, res *response) {
	api.t.Helper()
	if strings.HasPrefix(httpReq.URL.Path, "/v1/test/") {
		return
	}
	route, params, err := api.router.FindRoute(httpReq)
	if err != nil {
		// Unknown routes and methods are answered with the error body.
		if res.status == http.StatusNotFound || res.status == http.StatusMethodNotAllowed {
			api.checkErrorShape(res)
			return
		}
		api.t.Errorf("%s %s answered %d but is not in openapi.json: %v", httpReq.Method, httpReq.URL.Path, res.status, err)
		return
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: httpReq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  res.status,
		Header:  res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	input.SetBodyBytes(res.body)
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		api.t.Errorf("%s %s answered %d %s, which openapi.json does not describe: %v",
			httpReq.Method, httpReq.URL.Path, res.status, res.body, err)
	}
}

// checkErrorShape checks the standard four-field error body.
func (api *testAPI) checkErrorShape(res *response) {
	api.t.Helper()
	var body map[string]any
	if err := json.Unmarshal(res.body, &body); err != nil {
		api.t.Errorf("error body %s is not JSON: %v", res.body, err)
		return
	}
	for _, field := range []string{"status_code", "type", "code", "message"} {
		if _, ok := body[field]; !ok {
			api.t.Errorf("error body %s lacks %s", res.body, field)
		}
	}
	if len(body) != 4 {
		api.t.Errorf("error body %s has fields beyond the four", res.body)
	}
}

// wantError checks the status and the exact error body (message aside, when
// message is "").
func wantError(t *testing.T, res *response, status int, typ, code, message string) {
	t.Helper()
	if res.status != status {
		t.Fatalf("status: got %d, want %d (body %s)", res.status, status, res.body)
	}
	var body errorBody
	dec := json.NewDecoder(bytes.NewReader(res.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("error body %s: %v", res.body, err)
	}
	if body.StatusCode != status || body.Type != typ || body.Code != code {
		t.Errorf("error body: got %s, want status_code %d, type %q, code %q", res.body, status, typ, code)
	}
	if message != "" && body.Message != message {
		t.Errorf("error message: got %q, want %q", body.Message, message)
	}
	if body.Message == "" {
		t.Errorf("error body %s has an empty message", res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
}

// wantIssues checks a 422 answer: its error name and its issues, exactly.
func wantIssues(t *testing.T, res *response, name string, want []issue) {
	t.Helper()
	if res.status != http.StatusUnprocessableEntity {
		t.Fatalf("status: got %d, want 422 (body %s)", res.status, res.body)
	}
	wantBody, err := json.Marshal(validationBody{Error: validationDetail{Name: name, Issues: want}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.body)); got != string(wantBody) {
		t.Errorf("422 body:\n got %s\nwant %s", got, wantBody)
	}
}
