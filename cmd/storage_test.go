package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"acctapi/db/seed"
)

// mountTmpfs mounts a tmpfs of size bytes at dir and unmounts it when the
// test ends; it skips the test where mounting is not allowed.
func mountTmpfs(t *testing.T, dir string, size int64) string {
	t.Helper()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); db's tests cover the mapping of storage errors", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// remount changes the options of a tmpfs mounted by mountTmpfs.
func remount(t *testing.T, dir, options string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+options, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, options, err, out)
	}
}

// fillDisk writes a file until the file system under dir is full.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v, want ENOSPC in the end", dir, err)
			}
			return path
		}
	}
}

// storageAnswer checks an answer of the storage faults: the status, the
// standard error body with its code, and nothing else.
func storageAnswer(t *testing.T, what string, status int, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	var e struct {
		StatusCode int    `json:"status_code"`
		Type       string `json:"type"`
		Code       string `json:"code"`
		Message    string `json:"message"`
	}
	if status != wantStatus || json.Unmarshal(body, &e) != nil || e.StatusCode != wantStatus ||
		e.Type != "storage_error" || e.Code != wantCode || e.Message == "" {
		t.Fatalf("%s: %d %s, want %d with the error body of code %s", what, status, body, wantStatus, wantCode)
	}
}

// TestDiskFull runs the server on a data dir on a small tmpfs, fills the
// disk, and requires 507 for writes, working reads, and writes working
// again once space is freed, without a restart.
func TestDiskFull(t *testing.T) {
	dir := mountTmpfs(t, t.TempDir(), 16<<20)
	key, clientID := seedDataDir(t, dir, true)
	cfg, _, _ := testConfig(dir)
	srv := startServer(t, cfg)
	workspaceID := flRawStrings(t, filepath.Join(dir, "acctapi.db"), `SELECT id FROM workspaces WHERE client_id = ?`, clientID)[0]
	createTask := func(title string) (int, []byte) {
		body := fmt.Sprintf(`{"title":%q,"workspaceId":%q}`, title, workspaceID)
		status, _, res := flDo(t, http.MethodPost, srv.base+"/tasks", key, clientID, "application/json", strings.NewReader(body))
		return status, res
	}
	if status, res := createTask("before"); status != http.StatusCreated {
		t.Fatalf("create a task: %d %s", status, res)
	}
	filler := fillDisk(t, dir)

	// Pages SQLite has already allocated may take a few more writes; the
	// disk is full well before a thousand tasks.
	full := false
	for i := 0; i < 1000 && !full; i++ {
		status, res := createTask(fmt.Sprintf("while full %d", i))
		switch status {
		case http.StatusCreated:
		case http.StatusInsufficientStorage:
			storageAnswer(t, "POST /v1/tasks on a full disk", status, res, http.StatusInsufficientStorage, "insufficient_storage")
			full = true
		default:
			t.Fatalf("POST /v1/tasks on a full disk: %d %s, want 201 or 507", status, res)
		}
	}
	if !full {
		t.Fatal("a thousand task creates on a full disk all succeeded")
	}
	body, contentType := flUploadBody(workspaceID, "big.bin", bytes.NewReader(bytes.Repeat([]byte("x"), 1<<20)))
	status, _, res := flDo(t, http.MethodPost, srv.base+"/files", key, clientID, contentType, body)
	storageAnswer(t, "POST /v1/files on a full disk", status, res, http.StatusInsufficientStorage, "insufficient_storage")

	if status, _, res := flDo(t, http.MethodGet, srv.base+"/tasks", key, clientID, "", nil); status != http.StatusOK || !bytes.Contains(res, []byte(`"before"`)) {
		t.Fatalf("GET /v1/tasks on a full disk: %d %s, want 200 with the task made before", status, res)
	}
	if status, _, res := flDo(t, http.MethodGet, srv.base+"/health", "", "", "", nil); status != http.StatusOK {
		t.Fatalf("GET /v1/health on a full disk: %d %s", status, res)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if status, res := createTask("after"); status != http.StatusCreated {
		t.Fatalf("create a task once space is freed: %d %s, want 201", status, res)
	}
	id := flUpload(t, srv.base, key, clientID, workspaceID, "after.bin", []byte("space again"))
	flMustDownload(t, flLink(t, srv.base, key, clientID, id), []byte("space again"))
}

// TestReadOnlyFileStore mounts the file store on a tmpfs of its own and
// remounts it read-only: uploads answer 503, downloads and the rest of the
// API go on, and uploads work again once it is writable.
func TestReadOnlyFileStore(t *testing.T) {
	dir := t.TempDir()
	key, clientID := seedDataDir(t, dir, true)
	dbPath := filepath.Join(dir, "acctapi.db")
	demoFile := flRawStrings(t, dbPath, `SELECT id FROM files WHERE name = ?`, seed.StatementName)[0]
	demoBytes, err := os.ReadFile(filepath.Join(dir, "files", filepath.FromSlash(flStorePath(demoFile))))
	if err != nil {
		t.Fatal(err)
	}
	filesDir := filepath.Join(dir, "files")
	stored := t.TempDir()
	if err := os.CopyFS(stored, os.DirFS(filesDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filesDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filesDir, 0o750); err != nil {
		t.Fatal(err)
	}
	mounted := mountTmpfs(t, filesDir, 16<<20)
	if err := os.CopyFS(mounted, os.DirFS(stored)); err != nil {
		t.Fatal(err)
	}

	cfg, _, _ := testConfig(dir)
	srv := startServer(t, cfg)
	workspaceID := flRawStrings(t, dbPath, `SELECT id FROM workspaces WHERE client_id = ?`, clientID)[0]
	remount(t, mounted, "ro")

	body, contentType := flUploadBody(workspaceID, "ro.bin", bytes.NewReader([]byte("read-only")))
	status, header, res := flDo(t, http.MethodPost, srv.base+"/files", key, clientID, contentType, body)
	storageAnswer(t, "POST /v1/files on a read-only store", status, res, http.StatusServiceUnavailable, "service_unavailable")
	if header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	flMustDownload(t, flLink(t, srv.base, key, clientID, demoFile), demoBytes)
	task := fmt.Sprintf(`{"title":"still writable","workspaceId":%q}`, workspaceID)
	if status, _, res := flDo(t, http.MethodPost, srv.base+"/tasks", key, clientID, "application/json", strings.NewReader(task)); status != http.StatusCreated {
		t.Fatalf("POST /v1/tasks with a read-only file store: %d %s, want 201", status, res)
	}

	remount(t, mounted, "rw")
	id := flUpload(t, srv.base, key, clientID, workspaceID, "rw.bin", []byte("writable again"))
	flMustDownload(t, flLink(t, srv.base, key, clientID, id), []byte("writable again"))
}
