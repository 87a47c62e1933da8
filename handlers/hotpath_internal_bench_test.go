package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
)

// The benchmarks of the request hot paths: validation, encoding and the
// permission check on their own, then whole requests through the real
// handler and database. Internal, because createTask's field rules and the
// task response converter are unexported.

// hpCreateBody is a typical POST /v1/tasks body. createTask reads no status
// (a new task is OPEN), but clients send one, so the decoder sees it.
func hpCreateBody(workspaceID, parentID string) []byte {
	return fmt.Appendf(nil, `{"title":"Upload the March bank statements",`+
		`"text":"All accounts, as PDF: the statements your bank sends, not screenshots.",`+
		`"status":"OPEN","dueDate":"2026-12-01T09:00:00+01:00","workspaceId":%q,"parentId":%q}`,
		workspaceID, parentID)
}

// hpPatchBody is a typical PATCH /v1/tasks/{id} body.
var hpPatchBody = []byte(`{"title":"Upload the April bank statements","status":"IN_PROGRESS","dueDate":"2026-12-15T09:00:00Z"}`)

// decodeTaskCreate is what createTask does before it calls the store.
func decodeTaskCreate(w http.ResponseWriter, r *http.Request) (db.TaskCreate, error) {
	var v validator
	body, err := decodeBody(w, r, &v)
	if err != nil {
		return db.TaskCreate{}, err
	}
	in := taskCreate(body)
	return in, v.err()
}

func BenchmarkValidateTaskCreate(b *testing.B) {
	workspaceID, parentID := db.NewID(), db.NewID()
	raw := hpCreateBody(workspaceID, parentID)
	// One request whose body is rewound each time, so that the loop measures
	// the handler's allocations and not the benchmark's.
	body := bytes.NewReader(raw)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/tasks", body)
	r.Header.Set("Content-Type", "application/json")

	got, err := decodeTaskCreate(w, r)
	text, due := "All accounts, as PDF: the statements your bank sends, not screenshots.", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	want := db.TaskCreate{WorkspaceID: workspaceID, Title: "Upload the March bank statements", Text: &text, DueDate: &due, ParentID: &parentID}
	if err != nil || !reflect.DeepEqual(got, want) {
		b.Fatalf("validate %s:\n got %+v, %v\nwant %+v", raw, got, err, want)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(raw)
		if _, err := decodeTaskCreate(w, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateTaskList(b *testing.B) {
	cursor, workspaceID := db.NewID(), db.NewID()
	u, err := url.Parse("/v1/tasks?limit=100&sort=title&order=asc&cursor=" + cursor + "&workspaceId=" + workspaceID)
	if err != nil {
		b.Fatal(err)
	}
	wantFilter := db.TaskFilter{WorkspaceID: workspaceID}
	wantReq := db.PageRequest{Limit: 100, Cursor: cursor, Sort: "title"}
	if filter, req, err := taskListQuery(u.Query()); err != nil || filter != wantFilter || req != wantReq {
		b.Fatalf("validate %s: got %+v, %+v, %v, want %+v, %+v", u, filter, req, err, wantFilter, wantReq)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := taskListQuery(u.Query()); err != nil {
			b.Fatal(err)
		}
	}
}

// hpTaskPage is a full page of tasks as the store returns them, with the
// optional fields set on some tasks and not on others.
func hpTaskPage(n int) *db.Page[*db.Task] {
	clientID, workspaceID := db.NewID(), db.NewID()
	created := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	page := &db.Page[*db.Task]{Limit: n, Total: 10 * n}
	for i := range n {
		t := &db.Task{
			ID: db.NewID(), ClientID: clientID, WorkspaceID: workspaceID,
			Title:     fmt.Sprintf("Upload the bank statements of account %d", i),
			Status:    db.TaskStatuses[i%len(db.TaskStatuses)],
			ActorType: db.ActorAPI,
			CreatedAt: created.Add(time.Duration(i) * time.Minute),
			UpdatedAt: created.Add(time.Duration(i) * time.Hour),
		}
		if i%2 == 0 {
			text := "All accounts, as PDF: the statements your bank sends, not screenshots."
			t.Text = &text
		}
		if i%3 != 0 {
			due := created.AddDate(0, 1, i)
			t.DueDate = &due
		}
		if i%5 == 0 && i > 0 {
			t.ParentID = &page.Items[i-1].ID
		}
		page.Items = append(page.Items, t)
	}
	next := db.NewID()
	page.NextCursor = &next
	return page
}

// BenchmarkEncodeTaskPage converts and encodes a page as listTasks does,
// with writeJSON's encoder settings.
// BenchmarkEncodeTaskPage: a page of 100 tasks as the list writes it
// (appended), and as encoding/json writes the same bytes.
func BenchmarkEncodeTaskPage(b *testing.B) {
	page := hpTaskPage(maxLimit)
	convert := listOf(newTaskResponse)
	for _, bc := range []struct {
		name   string
		encode func(w *bytes.Buffer) error
	}{
		{"appended", func(w *bytes.Buffer) error {
			w.Write(append(newTaskPageResponse(page).appendJSON(w.AvailableBuffer()), '\n'))
			return nil
		}},
		{"encoding-json", func(w *bytes.Buffer) error {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			return enc.Encode(convert(page))
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var out bytes.Buffer
			if err := bc.encode(&out); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(out.Len()))
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				if err := bc.encode(&out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPermissionCheck(b *testing.B) {
	p := &auth.Principal{Kind: auth.Client, Permissions: auth.PermissionsFor(auth.Client)}
	for _, bc := range []struct {
		name string
		perm auth.Permission
		want bool
	}{
		{"held", auth.TasksWrite, true},
		// A client key never holds it: Can reads the whole list.
		{"missing", auth.ClientsRead, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p.Can(bc.perm) != bc.want {
					b.Fatalf("Can(%s): got %v, want %v", bc.perm, !bc.want, bc.want)
				}
			}
		})
	}
}

// hpServer is the real handler on a real SQLite database, called directly
// without a network, with a client key whose rate limit no benchmark reaches.
type hpServer struct {
	handler       http.Handler
	store         *db.DB
	authorization string
	clientID      string
	workspaceID   string
}

// newHPServer wires the handler as cmd's serve does, with what a default
// server runs with: FULL synchronous commits and a JSON request log (here to
// io.Discard), so that both are measured; configure changes the handler's
// Config.
func newHPServer(tb testing.TB, configure ...func(*Config)) *hpServer {
	tb.Helper()
	ctx := context.Background()
	store, err := db.Open(filepath.Join(tb.TempDir(), "acctapi.db"), db.Options{EncodeEvent: EncodeEvent, IdempotencyKey: IdempotencyKeyOf})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		tb.Fatal(err)
	}
	firm, err := store.CreateFirm(ctx, "Bench firm")
	if err != nil {
		tb.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Bench client", Type: db.ClientLegalPerson})
	if err != nil {
		tb.Fatal(err)
	}
	key, _, err := auth.MintKey(ctx, store, firm.ID, auth.KeySpec{ClientID: client.ID, RateLimitMax: 1 << 30, RateLimitWindow: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Bench")
	if err != nil {
		tb.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(tb.TempDir(), "files"))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{
		Store:   store,
		Auth:    auth.NewAuthenticator(store, nil),
		Limiter: auth.NewLimiter(nil),
		Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
		BaseURL: "http://127.0.0.1:8080/v1",
		Version: "bench",
		Files:   files,
	}
	for _, c := range configure {
		c(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return &hpServer{handler: h, store: store, authorization: "Bearer " + key, clientID: client.ID, workspaceID: ws.ID}
}

// createTasks adds n tasks to the workspace through the store, and returns
// their ids.
func (s *hpServer) createTasks(tb testing.TB, n int) []string {
	tb.Helper()
	text := "All accounts, as PDF: the statements your bank sends, not screenshots."
	due := time.Now().AddDate(0, 1, 0)
	ids := make([]string, n)
	for i := range n {
		t, err := s.store.CreateTask(context.Background(), s.clientID, db.TaskCreate{
			WorkspaceID: s.workspaceID, Title: fmt.Sprintf("Upload the bank statements of account %d", i),
			Text: &text, DueDate: &due,
		})
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = t.ID
	}
	return ids
}

// serve answers one request as a client of the key sends it.
func (s *hpServer) serve(method, target string, body []byte) *httptest.ResponseRecorder {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.Header.Set("Authorization", s.authorization)
	req.Header.Set("X-Client-Id", s.clientID)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

// bench serves the request once per iteration, failing on any other status
// than want: an error answer is cheaper than the real one and would flatter
// the numbers.
func (s *hpServer) bench(b *testing.B, method, target string, body []byte, want int) {
	b.ReportAllocs()
	for b.Loop() {
		if rec := s.serve(method, target, body); rec.Code != want {
			b.Fatalf("%s %s: status %d, want %d: %s", method, target, rec.Code, want, rec.Body)
		}
	}
}

// benchParallel is bench from GOMAXPROCS goroutines. Only the benchmark's
// own goroutine may call Fatal, so a goroutine that sees a wrong status
// reports it and stops.
func (s *hpServer) benchParallel(b *testing.B, method, target string, body []byte, want int) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if rec := s.serve(method, target, body); rec.Code != want {
				b.Errorf("%s %s: status %d, want %d: %s", method, target, rec.Code, want, rec.Body)
				return
			}
		}
	})
}

func BenchmarkServeMe(b *testing.B) {
	s := newHPServer(b)
	b.Run("serial", func(b *testing.B) { s.bench(b, http.MethodGet, "/v1/me", nil, http.StatusOK) })
	b.Run("parallel", func(b *testing.B) { s.benchParallel(b, http.MethodGet, "/v1/me", nil, http.StatusOK) })
}

// BenchmarkServeGuessOverBudget is a key guesser whose address has spent
// its failed-attempt budget: each request sends another unknown key id and
// gets a 429.
func BenchmarkServeGuessOverBudget(b *testing.B) {
	s := newHPServer(b)
	guesses := make([]string, 4096)
	for i := range guesses {
		key, _ := auth.NewKey(db.NewID())
		guesses[i] = "Bearer " + key
	}
	guess := func(i int) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v1/me", nil)
		req.Header.Set("Authorization", guesses[i%len(guesses)])
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		return rec
	}
	for i := range failedAuthLimit {
		guess(i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if rec := guess(i); rec.Code != http.StatusTooManyRequests {
			b.Fatalf("guess %d: status %d, want 429: %s", i, rec.Code, rec.Body)
		}
		i++
	}
}

// hpListTasks is how many tasks the listed client has: ten full pages.
const hpListTasks = 10 * maxLimit

func BenchmarkServeListTasks(b *testing.B) {
	s := newHPServer(b)
	s.createTasks(b, hpListTasks)
	const target = "/v1/tasks?limit=100"
	// A full page with a next cursor, not an empty or short one.
	rec := s.serve(http.MethodGet, target, nil)
	var page struct {
		Data       []json.RawMessage
		Pagination struct {
			Total      int
			NextCursor *string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || rec.Code != http.StatusOK ||
		len(page.Data) != maxLimit || page.Pagination.Total != hpListTasks || page.Pagination.NextCursor == nil {
		b.Fatalf("GET %s: status %d, %d tasks of %d, next %v, %v", target, rec.Code, len(page.Data),
			page.Pagination.Total, page.Pagination.NextCursor, err)
	}
	b.Run("serial", func(b *testing.B) { s.bench(b, http.MethodGet, target, nil, http.StatusOK) })
	b.Run("parallel", func(b *testing.B) { s.benchParallel(b, http.MethodGet, target, nil, http.StatusOK) })
}

// BenchmarkServeCreateTask/parallel has 16 writers per CPU in flight, so
// that group commit has writes to batch, as under a loaded server.
func BenchmarkServeCreateTask(b *testing.B) {
	s := newHPServer(b)
	body := hpCreateBody(s.workspaceID, s.createTasks(b, 1)[0])
	b.Run("serial", func(b *testing.B) { s.bench(b, http.MethodPost, "/v1/tasks", body, http.StatusCreated) })
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(16)
		s.benchParallel(b, http.MethodPost, "/v1/tasks", body, http.StatusCreated)
	})
}

func BenchmarkServePatchTask(b *testing.B) {
	s := newHPServer(b)
	id := s.createTasks(b, 1)[0]
	s.bench(b, http.MethodPatch, "/v1/tasks/"+id, hpPatchBody, http.StatusOK)
}
