package handlers

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// idemRequest is a request sent with an Idempotency-Key.
func idemRequest(req request, key string) request {
	req.header = http.Header{"Idempotency-Key": {key}}
	return req
}

// wantReplay requires an answer equal to first, marked as replayed.
func wantReplay(t *testing.T, first, again *response) {
	t.Helper()
	if again.status != first.status || !bytes.Equal(again.body, first.body) {
		t.Fatalf("retry: got %d %s, want the first answer %d %s", again.status, again.body, first.status, first.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("Idempotent-Replayed: first %q, retry %q; want none, then true",
			first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
	}
	if again.header.Get("Content-Type") != first.header.Get("Content-Type") {
		t.Fatalf("retry Content-Type %q, want %q", again.header.Get("Content-Type"), first.header.Get("Content-Type"))
	}
}

func TestIdempotentCreate(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	create := func(key, body string) *response {
		return api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: api.accountantKey,
			clientID: api.client.ID, body: body}, key))
	}
	first := create("k-1", `{"title":"Pay VAT","workspaceId":"`+ws+`"}`)
	task := decodeTask(t, first, http.StatusCreated)

	// The same request, its JSON written differently: a retry.
	again := create("k-1", `{ "workspaceId": "`+ws+`",  "title": "Pay VAT" }`)
	wantReplay(t, first, again)
	if n := len(api.allTasks(t, api.accountantKey, api.client.ID)); n != 1 {
		t.Fatalf("%d tasks after a retry, want 1", n)
	}

	// The same key for another request: refused, and nothing made.
	other := create("k-1", `{"title":"Pay VAT twice","workspaceId":"`+ws+`"}`)
	wantIssues(t, other, "ValidationError", []issue{{Code: "custom", Path: []any{"headers", "idempotency-key"},
		Message: "this Idempotency-Key was used for a different request in the last 24 hours: send a new key with a new request"}})
	for _, req := range []request{
		{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: api.otherClient.ID, body: `{"title":"Pay VAT","workspaceId":"` + ws + `"}`},
		{method: "POST", path: "/v1/workspaces", key: api.accountantKey, clientID: api.client.ID, body: `{"title":"Pay VAT","workspaceId":"` + ws + `"}`},
	} {
		if res := api.do(idemRequest(req, "k-1")); res.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s %s for client %s with a used key: %d %s, want 422", req.method, req.path, req.clientID, res.status, res.body)
		}
	}
	if n := len(api.allTasks(t, api.accountantKey, api.client.ID)); n != 1 {
		t.Fatalf("%d tasks after a refused reuse, want 1", n)
	}

	// Keys belong to the API key that sent them.
	otherKey := api.mustMintKey(api.firm.ID, auth.KeySpec{})
	res := api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: otherKey, clientID: api.client.ID,
		body: `{"title":"Pay VAT","workspaceId":"` + ws + `"}`}, "k-1"))
	if decodeTask(t, res, http.StatusCreated).ID == task.ID {
		t.Fatal("another API key's request with the same Idempotency-Key got the first key's task")
	}

	// After 24 hours the key is new again.
	api.clock.Advance(db.IdempotencyRetention - time.Second)
	wantReplay(t, first, create("k-1", `{"title":"Pay VAT","workspaceId":"`+ws+`"}`))
	api.clock.Advance(2 * time.Second)
	if res := create("k-1", `{"title":"Pay VAT","workspaceId":"`+ws+`"}`); decodeTask(t, res, http.StatusCreated).ID == task.ID {
		t.Fatal("a key past its 24 hours replayed its old answer")
	}
	if n := len(api.allTasks(t, api.accountantKey, api.client.ID)); n != 3 {
		t.Fatalf("%d tasks, want 3", n)
	}
}

// TestIdempotentPatchReplaysTheFirstAnswer: a retry gets the answer of the
// first request, not the resource as it is now, and changes nothing.
func TestIdempotentPatchReplaysTheFirstAnswer(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	task := api.createTask(t, api.clientKey, api.client.ID, map[string]any{"title": "Q4", "workspaceId": ws})
	patch := idemRequest(request{method: "PATCH", path: "/v1/tasks/" + task.ID, key: api.clientKey,
		clientID: api.client.ID, body: map[string]any{"status": "IN_REVIEW"}}, "patch-1")
	first := api.do(patch)
	decodeTask(t, first, http.StatusOK)
	api.patchTask(t, api.clientKey, api.client.ID, task.ID, map[string]any{"status": "ACCEPTED"})
	wantReplay(t, first, api.do(patch))
	if got := api.allTasks(t, api.clientKey, api.client.ID)[task.ID].Status; got != "ACCEPTED" {
		t.Fatalf("status after the retry: %s, want ACCEPTED (the retry must not run again)", got)
	}
}

// TestIdempotentErrorsAreReplayed: a 4xx is an answer like any other; a
// retry after the cause is gone still gets it, as with the payment APIs.
func TestIdempotentErrorsAreReplayed(t *testing.T) {
	api := newTestAPI(t)
	req := idemRequest(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
		body: `{"title":"no workspace","workspaceId":"cnosuchworkspace00000000"}`}, "err-1")
	first := api.do(req)
	if first.status != http.StatusNotFound && first.status != http.StatusUnprocessableEntity {
		t.Fatalf("create in a missing workspace: %d %s", first.status, first.body)
	}
	wantReplay(t, first, api.do(req))
}

func TestIdempotencyKeyHeaderChecks(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	path := []any{"headers", "idempotency-key"}
	yes, no := true, false
	max, min := int64(255), int64(1)
	for _, c := range []struct {
		name   string
		values []string
		want   issue
	}{
		{"empty", []string{""}, issue{Code: "too_small", Path: path, Type: "string", Minimum: &min, Inclusive: &yes, Exact: &no,
			Message: "String must contain at least 1 character(s)"}},
		{"too long", []string{strings.Repeat("k", 256)}, issue{Code: "too_big", Path: path, Type: "string", Maximum: &max, Inclusive: &yes, Exact: &no,
			Message: "String must contain at most 255 character(s)"}},
		{"space", []string{"two words"}, issue{Code: "invalid_string", Path: path, Validation: "regex",
			Message: "an Idempotency-Key is printable ASCII without spaces; a UUID is a good one"}},
		{"not ASCII", []string{"schlüssel"}, issue{Code: "invalid_string", Path: path, Validation: "regex",
			Message: "an Idempotency-Key is printable ASCII without spaces; a UUID is a good one"}},
		{"twice", []string{"a", "b"}, issue{Code: "custom", Path: path, Message: "send one Idempotency-Key header, not several"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := api.do(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
				body: `{"title":"x","workspaceId":"` + ws + `"}`, header: http.Header{"Idempotency-Key": c.values}})
			wantIssues(t, res, "ValidationError", []issue{c.want})
		})
	}
	if n := len(api.allTasks(t, api.clientKey, api.client.ID)); n != 0 {
		t.Fatalf("refused keys made %d tasks", n)
	}
	// The longest key is accepted, and GET ignores the header.
	res := api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
		body: `{"title":"x","workspaceId":"` + ws + `"}`}, strings.Repeat("k", 255)))
	decodeTask(t, res, http.StatusCreated)
	if res := api.do(idemRequest(request{method: "GET", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID}, "")); res.status != http.StatusOK {
		t.Fatalf("GET with an empty Idempotency-Key: %d, want 200", res.status)
	}
}

// TestIdempotentConcurrentRetries sends one request with one key many times
// at once: it runs once, and every sender gets its answer.
func TestIdempotentConcurrentRetries(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	const senders = 16
	answers := make([]*response, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: api.clientKey,
				clientID: api.client.ID, body: `{"title":"once","workspaceId":"` + ws + `"}`}, "together"))
		}()
	}
	wg.Wait()
	replayed := 0
	for _, a := range answers {
		if a.status != http.StatusCreated || !bytes.Equal(a.body, answers[0].body) {
			t.Fatalf("answers differ: %d %s and %d %s", a.status, a.body, answers[0].status, answers[0].body)
		}
		if a.header.Get("Idempotent-Replayed") == "true" {
			replayed++
		}
	}
	if replayed != senders-1 {
		t.Fatalf("%d answers replayed, want %d", replayed, senders-1)
	}
	if n := len(api.allTasks(t, api.clientKey, api.client.ID)); n != 1 {
		t.Fatalf("%d tasks, want 1", n)
	}
}

// TestIdempotentUpload: a retried upload is recognised by its parts, not by
// the boundary the client drew; other bytes under the same key are refused.
func TestIdempotentUpload(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	upload := func(boundary string, content []byte) *response {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		if err := mw.SetBoundary(boundary); err != nil {
			t.Fatal(err)
		}
		if err := mw.WriteField("workspaceId", ws); err != nil {
			t.Fatal(err)
		}
		part, err := mw.CreateFormFile("file", "receipt.pdf")
		if err != nil {
			t.Fatal(err)
		}
		part.Write(content)
		mw.Close()
		req, err := http.NewRequest(http.MethodPost, api.server.URL+"/v1/files", &body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+api.clientKey)
		req.Header.Set("x-client-id", api.client.ID)
		req.Header.Set("Idempotency-Key", "upload-1")
		return api.flSend(t, req)
	}
	content := bytes.Repeat([]byte("%PDF-1.7 receipt "), 4096)
	first := upload("first-boundary", content)
	file := flDecodeFile(t, first, http.StatusCreated)
	wantReplay(t, first, upload("another-boundary-drawn-by-curl", content))
	if res := upload("first-boundary", append([]byte("X"), content[1:]...)); res.status != http.StatusUnprocessableEntity {
		t.Fatalf("the same key with other bytes: %d %s, want 422", res.status, res.body)
	}
	files := api.sqlColumn(t, `SELECT id FROM files WHERE client_id = ?`, api.client.ID)
	if len(files) != 1 || files[0] != file.ID {
		t.Fatalf("files %v, want only %s", files, file.ID)
	}
	if stored := api.flStoredFiles(t); len(stored) != 1 || stored[0] != flStoredPath(file.ID) {
		t.Fatalf("the store holds %v, want only %s", stored, flStoredPath(file.ID))
	}
}

// TestIdempotentAnswerLost: the key is written in the transaction of the
// request's write, so a retry after a stop between the commit and the
// recorded answer does not run the write again.
func TestIdempotentAnswerLost(t *testing.T) {
	api := newTestAPI(t)
	ws := api.mustCreateWorkspace(api.client.ID, "Books")
	keyID := strings.Split(api.clientKey, "_")[1]
	ctx := withIdempotencyKey(context.Background(), db.IdempotencyKey{APIKeyID: keyID, Key: "lost-1"})
	if _, err := api.store.CreateTask(ctx, api.client.ID, db.TaskCreate{Title: "written", WorkspaceID: ws}); err != nil {
		t.Fatal(err)
	}
	res := api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
		body: `{"title":"written","workspaceId":"` + ws + `"}`}, "lost-1"))
	wantError(t, res, http.StatusConflict, "conflict", "idempotency_answer_lost",
		"the request first sent with this Idempotency-Key was carried out, but the server stopped before it recorded the answer: read the resource to see its state")
	if n := len(api.allTasks(t, api.clientKey, api.client.ID)); n != 1 {
		t.Fatalf("%d tasks, want the 1 written before", n)
	}

	// A write that fails records nothing: its retry runs.
	ctx = withIdempotencyKey(context.Background(), db.IdempotencyKey{APIKeyID: keyID, Key: "failed-1"})
	if _, err := api.store.CreateTask(ctx, api.client.ID, db.TaskCreate{Title: "nowhere", WorkspaceID: "cnosuchworkspace0000"}); err == nil {
		t.Fatal("CreateTask in a missing workspace succeeded")
	}
	res = api.do(idemRequest(request{method: "POST", path: "/v1/tasks", key: api.clientKey, clientID: api.client.ID,
		body: `{"title":"now","workspaceId":"` + ws + `"}`}, "failed-1"))
	decodeTask(t, res, http.StatusCreated)
}

// TestIdempotentCollectSessionKeepsNoToken: a collect link made with an
// Idempotency-Key records no token: a retry mints nothing and is told the
// token is shown once only, and the database holds no copy of it.
func TestIdempotentCollectSessionKeepsNoToken(t *testing.T) {
	api := newTestAPI(t)
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	create := func() *response {
		return api.do(idemRequest(request{method: "POST", path: "/v1/collects/" + c.ID + "/sessions", key: api.accountantKey,
			clientID: api.client.ID, body: `{"label":"Anna"}`}, "s-1"))
	}
	first := create()
	if first.status != http.StatusCreated {
		t.Fatalf("create: %d %s", first.status, first.body)
	}
	var s clSession
	first.decode(t, &s)
	if n := api.cuCount(t, `SELECT count(*) FROM idempotency_keys WHERE instr(body, ?) > 0`, s.Token); n != 0 {
		t.Errorf("the recorded answer holds the token")
	}
	for range 2 {
		again := create()
		wantError(t, again, http.StatusConflict, "conflict", "idempotency_secret_not_kept", "")
		if again.header.Get("Idempotent-Replayed") != "true" || strings.Contains(string(again.body), s.Token) {
			t.Errorf("retry: %v %s", again.header, again.body)
		}
	}
	if n := api.cuCount(t, `SELECT count(*) FROM collect_sessions`); n != 1 {
		t.Errorf("%d sessions after retries, want 1", n)
	}
}
