package cmd

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/db/seed"
)

// flDemoWorkspaceRE finds the demo workspace's id in the --demo banner.
var flDemoWorkspaceRE = regexp.MustCompile(`\(workspace (c[0-9a-z]+)\)`)

// flClock is a clock the tests move by hand.
type flClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *flClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *flClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// flRawStrings returns the first column of a query on the database file.
func flRawStrings(t *testing.T, path, query string, args ...any) []string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// flSecrets returns the current and previous link-signing secrets, hex.
func flSecrets(t *testing.T, dbPath string) (current, previous string) {
	t.Helper()
	current = strings.Join(flRawStrings(t, dbPath, `SELECT hex(value) FROM settings WHERE name = 'link_signing_secret'`), "")
	previous = strings.Join(flRawStrings(t, dbPath, `SELECT hex(value) FROM settings WHERE name = 'link_signing_secret_previous'`), "")
	return current, previous
}

// flDo sends a request with the key and client header (when set) and
// returns the status, header and body.
func flDo(t *testing.T, method, url, key, clientID, contentType string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if clientID != "" {
		req.Header.Set("x-client-id", clientID)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, data
}

// flLink asks for a download link of the file and returns its URL.
func flLink(t *testing.T, base, key, clientID, fileID string) string {
	t.Helper()
	status, _, body := flDo(t, http.MethodGet, base+"/files/"+fileID+"/content", key, clientID, "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/files/%s/content: %d %s", fileID, status, body)
	}
	var link struct {
		URL       string `json:"url"`
		ExpiresIn int    `json:"expiresIn"`
	}
	err := json.Unmarshal(body, &link)
	ours := strings.HasPrefix(link.URL, base+"/files/"+fileID+"/download?")
	bucket := strings.Contains(link.URL, "/"+testPrefix+"/files/"+fileID+"?") && strings.Contains(link.URL, "X-Amz-Expires=600&")
	if err != nil || link.ExpiresIn != 600 || !ours && !bucket {
		t.Fatalf("link %s (%v), want %s/files/%s/download?... or a bucket's pre-signed GET, expiring in 600 s", body, err, base, fileID)
	}
	return link.URL
}

// flMustDownload downloads the link without a key and requires the content.
func flMustDownload(t *testing.T, link string, want []byte) http.Header {
	t.Helper()
	status, header, body := flDo(t, http.MethodGet, link, "", "", "", nil)
	if status != http.StatusOK || !bytes.Equal(body, want) {
		t.Fatalf("download %s: got %d with %d bytes, want 200 with the %d bytes", link, status, len(body), len(want))
	}
	return header
}

// flUploadBody streams a multipart upload of content into the workspace.
func flUploadBody(workspaceID, name string, content io.Reader) (io.Reader, string) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := mw.WriteField("workspaceId", workspaceID)
		if err == nil {
			var part io.Writer
			if part, err = mw.CreateFormFile("file", name); err == nil {
				if _, err = io.Copy(part, content); err == nil {
					err = mw.Close()
				}
			}
		}
		pw.CloseWithError(err)
	}()
	return pr, mw.FormDataContentType()
}

// flUpload uploads content and returns the new file's id.
func flUpload(t *testing.T, base, key, clientID, workspaceID, name string, content []byte) string {
	t.Helper()
	body, contentType := flUploadBody(workspaceID, name, bytes.NewReader(content))
	status, _, res := flDo(t, http.MethodPost, base+"/files", key, clientID, contentType, body)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/files: %d %s", status, res)
	}
	var f struct {
		ID   string `json:"id"`
		Size int    `json:"size"`
	}
	if err := json.Unmarshal(res, &f); err != nil || f.Size != len(content) {
		t.Fatalf("POST /v1/files answered %s (%v)", res, err)
	}
	return f.ID
}

// flStoreFiles lists the files under the file store of the data dir,
// slash-separated and relative to it.
func flStoreFiles(t *testing.T, dataDir string) []string {
	t.Helper()
	root := filepath.Join(dataDir, "files")
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// flStorePath is where the store keeps a file's bytes, relative to the store.
func flStorePath(id string) string { return id[len(id)-2:] + "/" + id }

// demoPDF is the bank statement a --demo start stores.
var demoPDF = seed.DemoPDF

// flDemo is a data dir seeded with --demo.
type flDemo struct {
	store              *testStore
	dir, dbPath        string
	firstKey, clientID string
	workspaceID        string
	// demoFile is the bank statement PDF, demoFiles every demo document.
	demoFile  string
	demoFiles []string
}

func newFLDemo(t *testing.T) *flDemo {
	t.Helper()
	return newFLDemoIn(t, &testStore{name: "local"})
}

// newFLDemoIn is newFLDemo with the files in the store.
func newFLDemoIn(t *testing.T, store *testStore) *flDemo {
	t.Helper()
	d := &flDemo{store: store, dir: t.TempDir()}
	d.dbPath = filepath.Join(d.dir, "acctapi.db")
	d.firstKey, d.clientID = seedDataDirIn(t, d.dir, true, store)
	d.demoFiles = flRawStrings(t, d.dbPath, `SELECT id FROM files ORDER BY id`)
	if len(d.demoFiles) != len(seed.DemoDocuments) {
		t.Fatalf("a --demo start recorded files %v, want the %d demo documents", d.demoFiles, len(seed.DemoDocuments))
	}
	statement := flRawStrings(t, d.dbPath, `SELECT id FROM files WHERE name = ?`, seed.StatementName)
	if len(statement) != 1 {
		t.Fatalf("a --demo start recorded the statements %v, want one named %q", statement, seed.StatementName)
	}
	d.demoFile = statement[0]
	// The demo workspace, which the banner names, is the demo file's.
	d.workspaceID = flRawStrings(t, d.dbPath, `SELECT workspace_id FROM files WHERE id = ?`, d.demoFile)[0]
	return d
}

// contents maps the id of each demo file to its document's bytes, found by
// its name.
func (d *flDemo) contents(t *testing.T) map[string][]byte {
	t.Helper()
	contents := map[string][]byte{}
	for _, doc := range seed.DemoDocuments {
		ids := flRawStrings(t, d.dbPath, `SELECT id FROM files WHERE name = ?`, doc.Name)
		if len(ids) != 1 {
			t.Fatalf("the demo files named %q: %v, want one", doc.Name, ids)
		}
		contents[ids[0]] = []byte(doc.Data)
	}
	return contents
}

// storePaths are where the store keeps the files' bytes, sorted.
func storePaths(ids ...string) []string {
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = flStorePath(id)
	}
	slices.Sort(paths)
	return paths
}

func TestDemoFile(t *testing.T) {
	d := newFLDemo(t)
	stored, err := os.ReadFile(filepath.Join(d.dir, "files", filepath.FromSlash(flStorePath(d.demoFile))))
	if err != nil {
		t.Fatalf("the demo file's bytes: %v", err)
	}
	if string(stored) != demoPDF || !strings.HasPrefix(string(stored), "%PDF-") {
		t.Errorf("the demo file holds %q, want the demo PDF", stored)
	}
	sum := sha256.Sum256([]byte(demoPDF))
	row := flRawStrings(t, d.dbPath, `SELECT f.name || '|' || f.mimetype || '|' || f.size || '|' || lower(hex(f.sha256)) || '|' || w.client_id || '|' || f.client_id
		|| '|' || (f.task_id IS NULL) || (f.folder_id IS NULL) || (f.created_by_id IS NULL)
		FROM files f JOIN workspaces w ON w.id = f.workspace_id WHERE f.id = ?`, d.demoFile)
	want := fmt.Sprintf("Kontoauszug Q3 2026.pdf|application/pdf|%d|%s|%s|%s|111", len(demoPDF), hex.EncodeToString(sum[:]), d.clientID, d.clientID)
	if len(row) != 1 || row[0] != want {
		t.Errorf("the demo file's record: got %v, want %s", row, want)
	}
	if got := flStoreFiles(t, d.dir); !slices.Equal(got, storePaths(d.demoFiles...)) {
		t.Errorf("the file store holds %v, want only the demo files", got)
	}
	for id, content := range d.contents(t) {
		stored, err := os.ReadFile(filepath.Join(d.dir, "files", filepath.FromSlash(flStorePath(id))))
		if err != nil || !bytes.Equal(stored, content) {
			t.Errorf("the demo file %s holds %d bytes (%v), want its document's %d", id, len(stored), err, len(content))
		}
	}

	r := startServer(t, func() *Config { cfg, _, _ := testConfig(d.dir); return cfg }())
	status, _, body := flDo(t, http.MethodGet, r.base+"/files/"+d.demoFile, d.firstKey, d.clientID, "", nil)
	if status != http.StatusOK || !strings.Contains(string(body), `"name":"Kontoauszug Q3 2026.pdf"`) {
		t.Errorf("GET the demo file: %d %s", status, body)
	}
	header := flMustDownload(t, flLink(t, r.base, d.firstKey, d.clientID, d.demoFile), []byte(demoPDF))
	if ct, cd := header.Get("Content-Type"), header.Get("Content-Disposition"); ct != "application/pdf" || cd != `attachment; filename="Kontoauszug Q3 2026.pdf"` {
		t.Errorf("download headers: Content-Type %q, Content-Disposition %q", ct, cd)
	}
}

// TestFileStoreCrashRecovery simulates by hand what a crash leaves in the
// file store at each step of an upload, and checks that the next start
// removes what nobody can see and keeps every recorded file.
func TestFileStoreCrashRecovery(t *testing.T) {
	d := newFLDemo(t)
	cfg, _, _ := testConfig(d.dir)
	r := startServer(t, cfg)
	uploaded := bytes.Repeat([]byte("recorded upload\n"), 4096)
	uploadedID := flUpload(t, r.base, d.firstKey, d.clientID, d.workspaceID, "kept.txt", uploaded)
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	store := filepath.Join(d.dir, "files")
	write := func(rel string, content []byte) {
		t.Helper()
		path := filepath.Join(store, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	// (a) killed while writing or syncing the temporary file;
	write("tmp/upload-1234567890", []byte("half an upl"))
	write("tmp/upload-0987654321", bytes.Repeat([]byte{0}, 100000))
	// (b) killed between the rename and the record: complete bytes, no row,
	// in a shard of its own and in the shard of a recorded file.
	orphan := db.NewID()
	write(flStorePath(orphan), []byte("complete but unrecorded"))
	sameShard := db.NewID()[:23] + d.demoFile[len(d.demoFile)-2:]
	write(flStorePath(sameShard), []byte("complete but unrecorded, beside the demo file"))
	before := flStoreFiles(t, d.dir)
	if len(before) != len(d.demoFiles)+5 {
		t.Fatalf("the store holds %v, want the demo files and 5 more before the restart", before)
	}

	cfg2, _, stderr := testConfig(d.dir)
	cfg2.Demo = true
	r2 := startServer(t, cfg2)
	want := storePaths(append([]string{uploadedID}, d.demoFiles...)...)
	if got := flStoreFiles(t, d.dir); !slices.Equal(got, want) {
		t.Errorf("after the restart the store holds %v, want only the recorded files %v", got, want)
	}
	if !strings.Contains(stderr.String(), `"msg":"removed unrecorded upload files","count":4`) {
		t.Errorf("the start does not log the 4 files it removed:\n%s", stderr.String())
	}
	if info, err := os.Stat(filepath.Join(store, "tmp")); err != nil || !info.IsDir() {
		t.Errorf("the tmp directory is gone: %v", err)
	}
	if n := len(flRawStrings(t, d.dbPath, `SELECT id FROM files`)); n != len(d.demoFiles)+1 {
		t.Errorf("file records: got %d, want the demo files and the upload", n)
	}
	flMustDownload(t, flLink(t, r2.base, d.firstKey, d.clientID, d.demoFile), []byte(demoPDF))
	flMustDownload(t, flLink(t, r2.base, d.firstKey, d.clientID, uploadedID), uploaded)
	status, _, body := flDo(t, http.MethodGet, r2.base+"/files/"+orphan, d.firstKey, d.clientID, "", nil)
	if status != http.StatusNotFound {
		t.Errorf("GET the orphan: %d %s, want 404", status, body)
	}
	// Uploads work after the clean-up.
	id := flUpload(t, r2.base, d.firstKey, d.clientID, d.workspaceID, "after.txt", []byte("after"))
	flMustDownload(t, flLink(t, r2.base, d.firstKey, d.clientID, id), []byte("after"))
}

// flRepeat yields n bytes cycling through block.
type flRepeat struct {
	block []byte
	off   int
	left  int64
}

func (r *flRepeat) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(int64(len(p)), r.left)], r.block[r.off:])
	r.off = (r.off + n) % len(r.block)
	r.left -= int64(n)
	return n, nil
}

func flRandomBlock(seed byte, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// TestServeKilledMidUpload kills a real acctapi serve while an upload
// streams in, and checks that the next start leaves no trace of it.
// startDemoServer starts serve --demo on store and returns the process, the
// API's base URL, and the demo client's key, id and workspace from its
// banner.
func startDemoServer(t *testing.T, bin, dataDir string, store *testStore) (p *process, base, clientKey, clientID, workspaceID string) {
	t.Helper()
	p = startProcessEnv(t, store.env(), bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--demo", "--log-format", "json"}, store.args()...)...)
	p.waitStderr(t, 60*time.Second, "the demo banner and the listening log line", func(s string) bool {
		return len(keyRE.FindAllString(s, -1)) >= 2 && flDemoWorkspaceRE.MatchString(s) && listeningAddr(s) != ""
	})
	banner := p.stderr.String()
	return p, "http://" + listeningAddr(banner) + "/v1", keyRE.FindAllString(banner, -1)[1],
		demoClientRE.FindStringSubmatch(banner)[1], flDemoWorkspaceRE.FindStringSubmatch(banner)[1]
}

func TestServeKilledMidUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	forEachStore(t, func(t *testing.T, store *testStore) {
		tmp := t.TempDir()
		dataDir := filepath.Join(tmp, "data")
		p, base, clientKey, clientID, workspaceID := startDemoServer(t, bin, dataDir, store)
		before := store.files(t, dataDir)

		// An upload that sends 1 MiB of its file, then waits.
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			mw.WriteField("workspaceId", workspaceID)
			part, _ := mw.CreateFormFile("file", "interrupted.bin")
			part.Write(flRandomBlock(1, 1<<20))
			// The body stays open until the test closes the pipe.
		}()
		req, _ := http.NewRequest(http.MethodPost, base+"/files", pr)
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("x-client-id", clientID)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		done := make(chan error, 1)
		go func() {
			res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
			if err == nil {
				res.Body.Close()
				err = fmt.Errorf("the upload answered %d", res.StatusCode)
			}
			done <- err
		}()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if files := store.files(t, dataDir); len(files) > len(before) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no temporary file or upload appeared in the %s store", store.name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		pw.CloseWithError(io.ErrUnexpectedEOF)
		if err := <-done; err == nil || strings.Contains(err.Error(), "answered") {
			t.Errorf("the upload to a killed server: %v", err)
		}
		left := store.files(t, dataDir)
		recorded := slices.DeleteFunc(slices.Clone(left), func(f string) bool { return strings.HasPrefix(f, "tmp/") })
		if len(left) != len(before)+1 || !slices.Equal(recorded, before) {
			t.Fatalf("after the kill the store holds %v, want %v and one temporary file", left, before)
		}

		cfg, _, stderr := testConfig(dataDir)
		r := startServer(t, store.configure(cfg))
		if got := store.files(t, dataDir); !slices.Equal(got, before) {
			t.Errorf("after the restart the store holds %v, want %v", got, before)
		}
		if !strings.Contains(stderr.String(), `"msg":"removed unrecorded upload files","count":1`) {
			t.Errorf("the restart does not log the removal:\n%s", stderr.String())
		}
		if n := len(flRawStrings(t, filepath.Join(dataDir, "acctapi.db"), `SELECT id FROM files`)); n != len(seed.DemoDocuments) {
			t.Errorf("file records: got %d, want only the demo files", n)
		}
		id := flUpload(t, r.base, clientKey, clientID, workspaceID, "after.txt", []byte("after the crash"))
		flMustDownload(t, flLink(t, r.base, clientKey, clientID, id), []byte("after the crash"))
	})
}

func TestSigningRotateCommand(t *testing.T) {
	t.Run("rotates on an existing data dir", func(t *testing.T) {
		dir := t.TempDir()
		seedDataDir(t, dir, false)
		dbPath := filepath.Join(dir, "acctapi.db")
		first, previous := flSecrets(t, dbPath)
		if len(first) != 64 || previous != "" {
			t.Fatalf("after the first start: secret %q (want 32 bytes), previous %q (want none)", first, previous)
		}
		// A restart keeps the secret.
		seedDataDir(t, dir, false)
		if again, _ := flSecrets(t, dbPath); again != first {
			t.Errorf("a restart changed the secret")
		}
		out := mustExecute(t, "signing", "rotate", "--data-dir", dir)
		if out != "rotated the link-signing secret\n" {
			t.Errorf("stdout: %q", out)
		}
		second, previous := flSecrets(t, dbPath)
		if len(second) != 64 || second == first || previous != first {
			t.Errorf("after a rotation: secret %s, previous %s; want a new secret and the first as previous (%s)", second, previous, first)
		}
		mustExecute(t, "signing", "rotate", "--data-dir", dir)
		third, previous := flSecrets(t, dbPath)
		if third == second || third == first || previous != second {
			t.Errorf("after a second rotation: secret %s, previous %s; want a new one and %s", third, previous, second)
		}
	})
	t.Run("fails on a missing data dir", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		stderr := mustFail(t, "signing", "rotate", "--data-dir", missing)
		if !strings.Contains(stderr, "check --data-dir") {
			t.Errorf("stderr %q does not say to check --data-dir", stderr)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("the command created %s: %v", missing, err)
		}
	})
	t.Run("fails before the first start", func(t *testing.T) {
		dir := t.TempDir()
		mustExecute(t, "migrate", "--data-dir", dir)
		stderr := mustFail(t, "signing", "rotate", "--data-dir", dir)
		if !strings.Contains(stderr, "start acctapi serve once") {
			t.Errorf("stderr %q does not say to start the server once", stderr)
		}
		if current, previous := flSecrets(t, filepath.Join(dir, "acctapi.db")); current != "" || previous != "" {
			t.Errorf("a failed rotation stored secrets %q, %q", current, previous)
		}
	})
	t.Run("a running server follows", func(t *testing.T) {
		d := newFLDemo(t)
		clock := &flClock{now: time.Now()}
		cfg, _, _ := testConfig(d.dir)
		cfg.Now = clock.Now
		r := startServer(t, cfg)
		link0 := flLink(t, r.base, d.firstKey, d.clientID, d.demoFile)
		flMustDownload(t, link0, []byte(demoPDF))

		mustExecute(t, "signing", "rotate", "--data-dir", d.dir)
		clock.Advance(1500 * time.Millisecond) // the server re-reads its secrets each second
		link1 := flLink(t, r.base, d.firstKey, d.clientID, d.demoFile)
		flMustDownload(t, link0, []byte(demoPDF))
		flMustDownload(t, link1, []byte(demoPDF))

		mustExecute(t, "signing", "rotate", "--data-dir", d.dir)
		clock.Advance(1500 * time.Millisecond)
		status, _, body := flDo(t, http.MethodGet, link0, "", "", "", nil)
		if status != http.StatusForbidden || !strings.Contains(string(body), `"code":"invalid_signature"`) {
			t.Errorf("a link signed before two rotations: got %d %s, want 403 invalid_signature", status, body)
		}
		flMustDownload(t, link1, []byte(demoPDF))
		flMustDownload(t, flLink(t, r.base, d.firstKey, d.clientID, d.demoFile), []byte(demoPDF))
	})
}

// flVm reads a field (VmHWM, VmRSS) of /proc/<pid>/status, in KiB.
func flVm(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestServeRSS100MiB measures the peak resident memory of a real acctapi
// serve while a 100 MiB file is uploaded and then downloaded. Run with
// ACCTAPI_RSS=1 go test -run TestServeRSS100MiB -v ./cmd/
func TestServeRSS100MiB(t *testing.T) {
	if os.Getenv("ACCTAPI_RSS") != "1" {
		t.Skip("set ACCTAPI_RSS=1 to measure the memory of a real server")
	}
	const size = 100 << 20
	bin := buildBinary(t, t.TempDir())
	forEachStore(t, func(t *testing.T, store *testStore) {
		dataDir := filepath.Join(t.TempDir(), "data")
		p, base, clientKey, clientID, workspaceID := startDemoServer(t, bin, dataDir, store)
		pid := p.cmd.Process.Pid
		block := flRandomBlock(2, 1<<20)

		idle := flVm(t, pid, "VmHWM")
		start := time.Now()
		body, contentType := flUploadBody(workspaceID, "big.bin", &flRepeat{block: block, left: size})
		status, _, res := flDo(t, http.MethodPost, base+"/files", clientKey, clientID, contentType, body)
		upload := time.Since(start)
		if status != http.StatusCreated {
			t.Fatalf("upload: %d %s", status, res)
		}
		var f struct {
			ID   string `json:"id"`
			Size int64  `json:"size"`
		}
		if err := json.Unmarshal(res, &f); err != nil || f.Size != size {
			t.Fatalf("upload answered %s", res)
		}
		afterUpload := flVm(t, pid, "VmHWM")

		link := flLink(t, base, clientKey, clientID, f.ID)
		start = time.Now()
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		hash := sha256.New()
		n, err := io.Copy(hash, resp.Body)
		resp.Body.Close()
		download := time.Since(start)
		if err != nil || n != size || resp.StatusCode != http.StatusOK {
			t.Fatalf("download: %d, %d bytes, %v", resp.StatusCode, n, err)
		}
		want := sha256.New()
		io.Copy(want, &flRepeat{block: block, left: size})
		if !bytes.Equal(hash.Sum(nil), want.Sum(nil)) {
			t.Errorf("the download differs from the upload")
		}
		afterDownload := flVm(t, pid, "VmHWM")
		rss := flVm(t, pid, "VmRSS")

		// With a bucket the download goes from the bucket (versitygw, on the
		// same machine) to the client: acctapi only signs the link.
		report := fmt.Sprintf("acctapi serve, %s store, 100 MiB file: VmHWM idle %d KiB, after upload %d KiB (+%d), after download %d KiB (+%d); VmRSS now %d KiB; upload %v (%.0f MB/s), download %v (%.0f MB/s)",
			store.name, idle, afterUpload, afterUpload-idle, afterDownload, afterDownload-idle, rss,
			upload.Round(time.Millisecond), float64(size)/1e6/upload.Seconds(), download.Round(time.Millisecond), float64(size)/1e6/download.Seconds())
		t.Log(report)
		fmt.Println(report)
		if growth := afterDownload - idle; growth > 32<<10 {
			t.Errorf("peak RSS grew by %d KiB moving a 100 MiB file, want far less than the file (< 32 MiB)", growth)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not stop within 20 s of SIGTERM")
		}
	})
}

// TestServeSlowUploads measures a real acctapi serve under 200 uploads that
// each send a byte every 5 s, spread over 50 collect links: at most 128 run
// at once (the rest answer 429 at once), each is cut off once it falls
// behind the minimum rate after its grace, and the peak resident memory
// and open descriptors stay bounded. Run with ACCTAPI_RSS=1 (about 45 s).
func TestServeSlowUploads(t *testing.T) {
	if os.Getenv("ACCTAPI_RSS") != "1" {
		t.Skip("set ACCTAPI_RSS=1 to measure a real server under slow uploads")
	}
	const uploads, links = 200, 50
	bin := buildBinary(t, t.TempDir())
	p, base, clientKey, clientID, _ := startDemoServer(t, bin, filepath.Join(t.TempDir(), "data"), &testStore{name: "local"})
	pid := p.cmd.Process.Pid
	status, _, body := flDo(t, http.MethodGet, base+"/collects", clientKey, clientID, "", nil)
	var collects struct {
		Data []struct {
			ID    string
			Items []struct{ ID string }
		}
	}
	if err := json.Unmarshal(body, &collects); status != http.StatusOK || err != nil || len(collects.Data) == 0 {
		t.Fatalf("collects: %d %s", status, body)
	}
	collect := collects.Data[0]
	var tokens []string
	for range links {
		status, _, body := flDo(t, http.MethodPost, base+"/collects/"+collect.ID+"/sessions", clientKey, clientID, "application/json", strings.NewReader(`{}`))
		var s struct{ Token string }
		if err := json.Unmarshal(body, &s); status != http.StatusCreated || err != nil {
			t.Fatalf("session: %d %s", status, body)
		}
		tokens = append(tokens, s.Token)
	}
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	idleRSS, idleFDs := flVm(t, pid, "VmHWM"), fds()
	addr := strings.TrimPrefix(strings.TrimSuffix(base, "/v1"), "http://")
	const boundary = "slowslowslow"
	var refused, cut atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range uploads {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/collect-sessions/%s/items/%s/files HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: 1000000\r\n\r\n"+
				"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.pdf\"\r\n\r\n", tokens[i%links], collect.Items[0].ID, addr, boundary, boundary)
			answered := make(chan string, 1)
			go func() {
				conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
				line, _ := bufio.NewReader(conn).ReadString('\n')
				answered <- line
			}()
			for {
				select {
				case line := <-answered:
					if strings.Contains(line, " 429 ") {
						refused.Add(1)
					} else {
						cut.Add(1)
					}
					return
				case <-time.After(5 * time.Second):
					conn.Write([]byte("x"))
				}
			}
		})
	}
	var peakFDs int
	var peakRSS int64
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(250 * time.Millisecond):
			peakFDs = max(peakFDs, fds())
			peakRSS = max(peakRSS, flVm(t, pid, "VmRSS"))
		}
	}
	took := time.Since(start)
	// The server notices the clients that hung up on its next read.
	var after int
	for settle := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if after = fds(); after <= idleFDs+2 || time.Since(settle) > 10*time.Second {
			break
		}
	}
	report := fmt.Sprintf("acctapi serve, %d uploads of a byte every 5 s over %d links: %d refused at once (429), %d cut off by the minimum rate, all ended after %v; "+
		"VmHWM idle %d KiB, peak %d KiB; VmRSS peak %d KiB; open descriptors idle %d, peak %d, after %d",
		uploads, links, refused.Load(), cut.Load(), took.Round(time.Second), idleRSS, flVm(t, pid, "VmHWM"), peakRSS, idleFDs, peakFDs, after)
	t.Log(report)
	fmt.Println(report)
	if refused.Load() != uploads-128 || cut.Load() != 128 {
		t.Errorf("%d refused, %d cut off: want %d and 128", refused.Load(), cut.Load(), uploads-128)
	}
	if after > idleFDs+2 {
		t.Errorf("%d descriptors open after the uploads ended, want about the %d of an idle server", after, idleFDs)
	}
	if took > 90*time.Second {
		t.Errorf("the slow uploads took %v to end, want them cut off after the 30 s grace", took)
	}
}
