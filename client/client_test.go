package client_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/client"
	"acctapi/db"
	"acctapi/filestore"
	"acctapi/handlers"
)

// server is the real API handler on a real SQLite database, with one firm,
// one client and a key of that client.
type server struct {
	url      string // the base URL, ending in /v1
	clientID string
	key      string
}

func newServer(t *testing.T) *server {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(filepath.Join(t.TempDir(), "acctapi.db"), db.Options{
		Now: time.Now, EncodeEvent: handlers.EncodeEvent, IdempotencyKey: handlers.IdempotencyKeyOf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	if err := store.InitLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	var h *handlers.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	h, err = handlers.New(handlers.Config{
		Store:          store,
		Auth:           auth.NewAuthenticator(store, time.Now),
		Limiter:        auth.NewLimiter(time.Now),
		BaseURL:        ts.URL + "/v1",
		Version:        "test",
		Files:          files,
		Signer:         auth.NewSigner(store, time.Now),
		MaxUploadBytes: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := auth.MintKey(ctx, store, firm.ID, auth.KeySpec{ClientID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	return &server{url: ts.URL + "/v1", clientID: c.ID, key: key}
}

// TestClientEndToEnd drives the real server through the generated client:
// what the document says must be what the server answers, typed.
func TestClientEndToEnd(t *testing.T) {
	srv := newServer(t)
	c, err := client.NewClientWithResponses(srv.url, client.WithRequestEditorFn(
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+srv.key)
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	ws, err := c.CreateWorkspaceWithResponse(ctx, &client.CreateWorkspaceParams{XClientId: srv.clientID},
		client.WorkspaceName{Name: "Receipts 2026"})
	if err != nil {
		t.Fatal(err)
	}
	if ws.JSON201 == nil {
		t.Fatalf("create workspace: got %d %s, want 201 with a Workspace", ws.StatusCode(), ws.Body)
	}
	if ws.JSON201.Name != "Receipts 2026" || ws.JSON201.ClientId != srv.clientID {
		t.Errorf("workspace: got %+v, want name Receipts 2026 of client %s", ws.JSON201, srv.clientID)
	}
	workspaceID := ws.JSON201.Id

	created, err := c.CreateTaskWithResponse(ctx, &client.CreateTaskParams{XClientId: srv.clientID},
		client.TaskCreate{WorkspaceId: workspaceID, Title: "Send the March receipts"})
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil {
		t.Fatalf("create task: got %d %s, want 201 with a Task", created.StatusCode(), created.Body)
	}
	task := created.JSON201
	if task.Status != client.TaskStatusOPEN || task.WorkspaceId != workspaceID {
		t.Errorf("task: got status %s in %s, want OPEN in %s", task.Status, task.WorkspaceId, workspaceID)
	}

	list, err := c.ListTasksWithResponse(ctx, &client.ListTasksParams{XClientId: srv.clientID, WorkspaceId: &workspaceID})
	if err != nil {
		t.Fatal(err)
	}
	if list.JSON200 == nil || len(list.JSON200.Data) != 1 || list.JSON200.Data[0].Id != task.Id {
		t.Fatalf("list tasks: got %d %s, want 200 with task %s alone", list.StatusCode(), list.Body, task.Id)
	}

	title := "Send the March and April receipts"
	status := client.TaskStatusINPROGRESS
	patched, err := c.UpdateTaskWithResponse(ctx, task.Id, &client.UpdateTaskParams{XClientId: srv.clientID},
		client.TaskUpdate{Title: &title, Status: &status})
	if err != nil {
		t.Fatal(err)
	}
	if patched.JSON200 == nil || patched.JSON200.Title != title || patched.JSON200.Status != status {
		t.Fatalf("update task: got %d %s, want 200 with title %q and status %s", patched.StatusCode(), patched.Body, title, status)
	}

	t.Run("upload", func(t *testing.T) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for name, value := range map[string]string{"workspaceId": workspaceID, "taskId": task.Id} {
			if err := mw.WriteField(name, value); err != nil {
				t.Fatal(err)
			}
		}
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Disposition": {`form-data; name="file"; filename="receipt.txt"`},
			"Content-Type":        {"text/plain"},
		})
		if err != nil {
			t.Fatal(err)
		}
		content := []byte("12.50 EUR, stationery\n")
		part.Write(content)
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		up, err := c.UploadFileWithBodyWithResponse(ctx, &client.UploadFileParams{XClientId: srv.clientID},
			mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		if up.JSON201 == nil {
			t.Fatalf("upload: got %d %s, want 201 with a StoredFile", up.StatusCode(), up.Body)
		}
		f := up.JSON201
		if f.Name != "receipt.txt" || f.Size != len(content) || f.TaskId == nil || *f.TaskId != task.Id {
			t.Errorf("file: got %+v, want receipt.txt of %d bytes on task %s", f, len(content), task.Id)
		}
	})

	t.Run("404 as a typed error", func(t *testing.T) {
		missing := "c" + "000000000000000000000000"
		res, err := c.UpdateTaskWithResponse(ctx, missing, &client.UpdateTaskParams{XClientId: srv.clientID},
			client.TaskUpdate{Title: &title})
		if err != nil {
			t.Fatal(err)
		}
		if res.JSON404 == nil {
			t.Fatalf("update a missing task: got %d %s, want 404 with an ApiError", res.StatusCode(), res.Body)
		}
		if res.JSON404.StatusCode != http.StatusNotFound || res.JSON404.Code != "not_found" {
			t.Errorf("404 body: got %+v, want status_code 404 and code not_found", res.JSON404)
		}
	})

	t.Run("422 as a typed error", func(t *testing.T) {
		res, err := c.CreateTaskWithResponse(ctx, &client.CreateTaskParams{XClientId: srv.clientID},
			client.TaskCreate{WorkspaceId: workspaceID, Title: "  "})
		if err != nil {
			t.Fatal(err)
		}
		if res.JSON422 == nil {
			t.Fatalf("create a task without a title: got %d %s, want 422 with a ValidationError", res.StatusCode(), res.Body)
		}
		issues := res.JSON422.Error.Issues
		if len(issues) != 1 || len(issues[0].Path) != 1 {
			t.Fatalf("issues: got %+v, want one, on title", issues)
		}
		// A path element is a string (a field) or an integer (an index).
		field, err := issues[0].Path[0].AsValidationIssuePath0()
		if err != nil || field != "title" {
			t.Errorf("issue path: got %q (%v), want title", field, err)
		}
	})
}

// TestGeneratedUpToDate runs doc.go's go:generate command with its output
// in a temp dir and compares that with client.gen.go, so that a change of
// handlers/openapi.json cannot leave the client behind.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args = strings.Fields(rest)
		}
	}
	if len(args) == 0 {
		t.Fatal("doc.go has no go:generate line")
	}
	// The config and the document are named relative to this directory; the
	// config's relative output lands in the command's directory.
	for i, arg := range args {
		if _, err := os.Stat(arg); err == nil {
			if args[i], err = filepath.Abs(arg); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("client.gen.go is not what handlers/openapi.json generates: run go generate ./client")
	}
}
