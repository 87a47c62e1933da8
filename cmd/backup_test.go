package cmd

import (
	"acctapi/server/servertest"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acctapi/backup"
	"acctapi/db"
	"acctapi/db/seed"
)

// Phases of TestBackupUnderLoad: each write notes the phase it was sent in
// and the phase its answer came in.
const (
	bkBefore = iota // acctapi backup not started yet
	bkDuring        // acctapi backup running
	bkAfter         // acctapi backup returned
)

// bkWrite is one write the load made: a task or a file.
type bkWrite struct {
	file          bool
	id            string
	content       []byte // of a file
	sent, acked   int32  // phases
	acknowledged  bool
	requestFailed error
}

// bkLoad runs task creates and file uploads against a server until stopped,
// and keeps what each write was sent and answered in.
type bkLoad struct {
	base, key, clientID, workspaceID string
	phase                            atomic.Int32
	client                           *http.Client

	mu      sync.Mutex
	writes  []*bkWrite
	changed chan struct{}
}

// post sends one write and returns the new record's id.
func (l *bkLoad) post(path, contentType string, body io.Reader) (string, error) {
	req, err := http.NewRequest(http.MethodPost, l.base+path, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("x-client-id", l.clientID)
	req.Header.Set("Content-Type", contentType)
	res, err := l.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	var created struct {
		ID string `json:"id"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(data, &created) != nil || created.ID == "" {
		return "", fmt.Errorf("POST %s: %d %s", path, res.StatusCode, data)
	}
	return created.ID, nil
}

// run makes writes of one kind until stop is closed.
func (l *bkLoad) run(stop <-chan struct{}, files bool, seed int) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		w := &bkWrite{file: files, sent: l.phase.Load()}
		var err error
		if files {
			w.content = append([]byte(fmt.Sprintf("upload %d.%d\n", seed, i)), flRandomBlock(byte(seed*31+i), 1000+i*211%30000)...)
			body, contentType := flUploadBody(l.workspaceID, fmt.Sprintf("upload-%d.bin", i), bytes.NewReader(w.content))
			w.id, err = l.post("/files", contentType, body)
		} else {
			body := fmt.Sprintf(`{"title":"load %d.%d","workspaceId":%q}`, seed, i, l.workspaceID)
			w.id, err = l.post("/tasks", "application/json", strings.NewReader(body))
		}
		w.acked, w.acknowledged, w.requestFailed = l.phase.Load(), err == nil, err
		l.mu.Lock()
		l.writes = append(l.writes, w)
		l.mu.Unlock()
		select {
		case l.changed <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// waitFor waits until at least n writes of each kind were acknowledged
// after being sent in the phase.
func (l *bkLoad) waitFor(t *testing.T, sentIn int32, n int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		tasks, files := 0, 0
		l.mu.Lock()
		for _, w := range l.writes {
			if w.requestFailed != nil {
				l.mu.Unlock()
				t.Fatalf("a write of the load failed: %v", w.requestFailed)
			}
			if w.sent == sentIn && w.file {
				files++
			} else if w.sent == sentIn {
				tasks++
			}
		}
		l.mu.Unlock()
		if tasks >= n && files >= n {
			return
		}
		select {
		case <-l.changed:
		case <-deadline:
			t.Fatalf("only %d tasks and %d files written in phase %d within 60 s, want %d of each", tasks, files, sentIn, n)
		}
	}
}

// bkTasks lists every task of the client through the API and returns them
// by id, with the total the first page announced.
func bkTasks(t *testing.T, load *bkLoad, base string) (map[string]crashTask, int) {
	t.Helper()
	return (&crashAPI{base: base, key: load.key, clientID: load.clientID, http: load.client}).allTasks(t)
}

// bkServe starts the binary serving dataDir and returns its base URL.
func bkServe(t *testing.T, bin, dataDir string, extra ...string) (*process, string) {
	t.Helper()
	srv := startProcess(t, bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--log-format", "json"}, extra...)...)
	srv.waitStderr(t, 60*time.Second, "the listening log line", func(s string) bool { return listeningAddr(s) != "" })
	return srv, "http://" + listeningAddr(srv.stderr.String()) + "/v1"
}

// TestBackupUnderLoad backs up a real server's data dir while task creates
// and uploads run against it, restores the backup into a new data dir and
// serves it: every write answered before the backup started is there, none
// sent after it returned is, and the snapshot holds together.
func TestBackupUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir, backupDir, restoredDir := filepath.Join(tmp, "data"), filepath.Join(tmp, "backups", "b1"), filepath.Join(tmp, "restored")

	srv, base := bkServe(t, bin, dataDir, "--demo")
	srv.waitStderr(t, 60*time.Second, "the demo banner", func(s string) bool {
		return demoClientRE.MatchString(s) && flDemoWorkspaceRE.MatchString(s)
	})
	banner := srv.stderr.String()
	load := &bkLoad{base: base, key: keyRE.FindString(banner), clientID: demoClientRE.FindStringSubmatch(banner)[1],
		workspaceID: flDemoWorkspaceRE.FindStringSubmatch(banner)[1], changed: make(chan struct{}, 1),
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{}}}
	defer load.client.CloseIdleConnections()
	demoTasks, _ := bkTasks(t, load, base)

	stop := make(chan struct{})
	var writers sync.WaitGroup
	for i := range 4 {
		writers.Go(func() { load.run(stop, i == 0, i) })
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			close(stop)
			writers.Wait()
		}
	}
	defer stopLoad()

	load.waitFor(t, bkBefore, 10)
	load.phase.Store(bkDuring)
	var res backupJSON
	if err := json.Unmarshal([]byte(mustRunBinary(t, bin, "backup", "--data-dir", dataDir, "--out", backupDir, "--json")), &res); err != nil {
		t.Fatalf("backup --json: %v", err)
	}
	load.phase.Store(bkAfter)
	load.waitFor(t, bkAfter, 5)
	stopLoad()

	if res.Format != backup.Format || res.SchemaVersion != db.LatestVersion() || res.Dir != backupDir || res.Files.Count < 1 {
		t.Errorf("backup --json = %+v", res)
	}
	if names := bkNames(t, backupDir); !slices.Equal(names, []string{backup.DatabaseName, backup.ManifestName, backup.FilesName}) {
		t.Errorf("the backup holds %v, want only %s, %s and %s", names, backup.DatabaseName, backup.ManifestName, backup.FilesName)
	}
	if names := bkNames(t, filepath.Dir(backupDir)); !slices.Equal(names, []string{"b1"}) {
		t.Errorf("beside the backup: %v, want only the backup (no temporary directory)", names)
	}

	mustRunBinary(t, bin, "restore", "--from", backupDir, "--data-dir", restoredDir)
	restoredDB := filepath.Join(restoredDir, backup.DatabaseName)
	checked, err := db.Open(restoredDB, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := checked.Check(context.Background()); err != nil {
		t.Errorf("Check of the restored database: %v", err)
	}
	if err := checked.Close(); err != nil {
		t.Fatal(err)
	}
	fileRows := flRawStrings(t, restoredDB, `SELECT id || ' ' || lower(hex(sha256)) FROM files ORDER BY id`)
	if len(fileRows) != res.Files.Count {
		t.Errorf("the restored database records %d files, the backup's manifest %d", len(fileRows), res.Files.Count)
	}
	var storePaths []string
	for _, row := range fileRows {
		storePaths = append(storePaths, flStorePath(strings.Fields(row)[0]))
	}
	slices.Sort(storePaths)
	for _, dir := range []string{backupDir, restoredDir} {
		if got := flStoreFiles(t, dir); !slices.Equal(got, storePaths) {
			t.Errorf("the file store in %s holds %v, want exactly the files the backup's database records %v", dir, got, storePaths)
		}
	}

	_, restoredBase := bkServe(t, bin, restoredDir)
	restoredTasks, total := bkTasks(t, load, restoredBase)
	if total != len(restoredTasks) {
		t.Errorf("the restored task list announces a total of %d and lists %d tasks", total, len(restoredTasks))
	}
	known := map[string]bool{}
	for id := range demoTasks {
		known[id] = true
		if _, ok := restoredTasks[id]; !ok {
			t.Errorf("demo task %s is missing from the restore", id)
		}
	}
	contents := map[string][]byte{}
	counts := map[[2]int32]int{}
	for _, w := range load.writes {
		if !w.acknowledged {
			continue
		}
		counts[[2]int32{w.sent, w.acked}]++
		_, present := restoredTasks[w.id]
		if w.file {
			contents[w.id] = w.content
			present = slices.ContainsFunc(fileRows, func(row string) bool { return strings.HasPrefix(row, w.id+" ") })
		} else {
			known[w.id] = true
		}
		switch {
		case w.acked == bkBefore && !present:
			t.Errorf("write %s (file %v), answered before the backup started, is missing from the restore", w.id, w.file)
		case w.sent == bkAfter && present:
			t.Errorf("write %s (file %v), sent after the backup returned, is in the restore", w.id, w.file)
		}
	}
	t.Logf("writes by (sent, answered) phase: %v; the backup took %.2f s", counts, res.Seconds)
	for id := range restoredTasks {
		if !known[id] {
			t.Errorf("the restore lists task %s, which neither the demo nor the load wrote", id)
		}
	}
	demoDocs := map[string][]byte{}
	for _, doc := range seed.DemoDocuments {
		demoDocs[doc.Name] = []byte(doc.Data)
	}
	for _, row := range fileRows {
		id, sum, _ := strings.Cut(row, " ")
		want, ok := contents[id]
		if !ok {
			// Not the load's: a demo document, known by its name.
			want = demoDocs[flRawStrings(t, restoredDB, `SELECT name FROM files WHERE id = ?`, id)[0]]
		}
		got := sha256.Sum256(want)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("file %s: its row's sha256 %s is not that of the bytes uploaded", id, sum)
		}
		flMustDownload(t, flLink(t, restoredBase, load.key, load.clientID, id), want)
	}
}

// bkNames lists the names in dir, sorted.
func bkNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// bkTree maps every path under dir to its content's sha256, "dir" for a
// directory: a picture of dir to compare before and after.
func bkTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			tree[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(path)
		sum := sha256.Sum256(data)
		tree[rel] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// bkCopyTree copies the directory src to the new directory dst.
func bkCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o750)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o640)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func bkRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// bkFlipByte inverts the byte at the middle of the file.
func bkFlipByte(t *testing.T, path string) {
	t.Helper()
	data := bkRead(t, path)
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRestoreRefusals checks what backup and restore refuse, that a
// refused restore leaves the data dir as it was, and restore --force.
func TestBackupRestoreRefusals(t *testing.T) {
	d := newFLDemo(t)
	tmp := t.TempDir()
	backupDir := filepath.Join(tmp, "backup")
	if err := os.Mkdir(backupDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backupDir, "keep.txt"), []byte("mine"), 0o640); err != nil {
		t.Fatal(err)
	}
	stderr := mustFail(t, "backup", "--data-dir", d.dir, "--out", backupDir)
	if !strings.Contains(stderr, "not empty") {
		t.Errorf("backup into a non-empty dir: %s, want it refused as not empty", stderr)
	}
	if names := bkNames(t, backupDir); !slices.Equal(names, []string{"keep.txt"}) {
		t.Errorf("the refused --out holds %v, want only what it held", names)
	}
	if err := os.Remove(filepath.Join(backupDir, "keep.txt")); err != nil {
		t.Fatal(err)
	}
	// An empty --out is taken.
	out := mustExecute(t, "backup", "--data-dir", d.dir, "--out", backupDir)
	if !strings.Contains(out, fmt.Sprintf("files: %d (", len(d.demoFiles))) {
		t.Errorf("backup printed %q, want the %d demo files counted", out, len(d.demoFiles))
	}

	// The target: a data dir of its own, with a task and upload the backup
	// does not hold, and something that is not acctapi's.
	target := filepath.Join(tmp, "target")
	targetKey, targetClient := seedDataDir(t, target, true)
	if err := os.WriteFile(filepath.Join(target, "notes.txt"), []byte("operator's notes"), 0o640); err != nil {
		t.Fatal(err)
	}
	before := bkTree(t, target)
	unchanged := func(what string) {
		t.Helper()
		if after := bkTree(t, target); !maps.Equal(after, before) {
			t.Errorf("%s changed the data dir: %v, want %v", what, after, before)
		}
		if names := bkNames(t, tmp); !slices.Equal(names, []string{"backup", "target"}) {
			t.Errorf("after %s, %s holds %v, want no temporary directory left", what, tmp, names)
		}
	}

	stderr = mustFail(t, "restore", "--from", backupDir, "--data-dir", target)
	if !strings.Contains(stderr, "--force") {
		t.Errorf("restore into a non-empty data dir: %s, want it refused, naming --force", stderr)
	}
	unchanged("a restore without --force")

	damaged := []struct {
		name, want string
		damage     func(dir string)
	}{
		{"flipped byte in a file", "do not match its row", func(dir string) {
			bkFlipByte(t, filepath.Join(dir, backup.FilesName, filepath.FromSlash(flStorePath(d.demoFile))))
		}},
		{"missing file", d.demoFile, func(dir string) {
			if err := os.Remove(filepath.Join(dir, backup.FilesName, filepath.FromSlash(flStorePath(d.demoFile)))); err != nil {
				t.Fatal(err)
			}
		}},
		{"flipped byte in the database", "sha256", func(dir string) { bkFlipByte(t, filepath.Join(dir, backup.DatabaseName)) }},
		{"manifest of another backup", "manifest says", func(dir string) {
			// A database that is sound and matches the manifest's sha256,
			// but records fewer files than the manifest counts.
			// (Every row that names a file goes too, as the demo statement's
			// link to its collect item, or the foreign key check would find
			// the database damaged.)
			dbPath := filepath.Join(dir, backup.DatabaseName)
			for _, table := range []string{"collect_item_files", "analysis_jobs", "file_labels", "file_search_rows", "file_texts", "task_asset_files"} {
				rawExec(t, dbPath, `DELETE FROM `+table)
			}
			rawExec(t, dbPath, `DELETE FROM files`)
			var m backup.Manifest
			if err := json.Unmarshal(bkRead(t, filepath.Join(dir, backup.ManifestName)), &m); err != nil {
				t.Fatal(err)
			}
			data := bkRead(t, dbPath)
			sum := sha256.Sum256(data)
			m.Database = backup.DatabaseDigest{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
			manifest, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, backup.ManifestName), manifest, 0o640); err != nil {
				t.Fatal(err)
			}
		}},
		{"manifest without its digests", "is incomplete: its manifest backup.json lacks schemaVersion, database, files", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, backup.ManifestName), []byte(`{"format":1,"createdAt":"2026-11-21T12:00:00Z"}`), 0o640); err != nil {
				t.Fatal(err)
			}
		}},
		{"manifest with an empty database digest", "lacks the database's size and sha256", func(dir string) {
			manifest := `{"format":1,"createdAt":"2026-11-21T12:00:00Z","schemaVersion":1,"database":{},"files":{"count":0,"bytes":0}}`
			if err := os.WriteFile(filepath.Join(dir, backup.ManifestName), []byte(manifest), 0o640); err != nil {
				t.Fatal(err)
			}
		}},
		{"no manifest", backup.ManifestName, func(dir string) {
			if err := os.Remove(filepath.Join(dir, backup.ManifestName)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range damaged {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "damaged")
			bkCopyTree(t, backupDir, dir)
			c.damage(dir)
			stderr := mustFail(t, "restore", "--from", dir, "--data-dir", target, "--force")
			if !strings.Contains(stderr, c.want) {
				t.Errorf("restore of a backup with a %s: %s, want an error naming %q", c.name, stderr, c.want)
			}
			unchanged("a restore of a damaged backup")
		})
	}

	// A server on the target: refused.
	cfg, _, _ := testConfig(target)
	r := startServer(t, cfg)
	stderr = mustFail(t, "restore", "--from", backupDir, "--data-dir", target, "--force")
	if !strings.Contains(stderr, "open in another process") {
		t.Errorf("restore over a served data dir: %s, want it refused as in use", stderr)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	before = bkTree(t, target)
	unchanged("a restore over a served data dir")

	// --force replaces the whole data dir with the backup's.
	mustExecute(t, "restore", "--from", backupDir, "--data-dir", target, "--force")
	if names := bkNames(t, target); !slices.Equal(names, []string{backup.DatabaseName, backup.FilesName}) {
		t.Errorf("the restored data dir holds %v, want only %s and %s (no stale -wal or -shm, nothing of the old one)", names, backup.DatabaseName, backup.FilesName)
	}
	if names := bkNames(t, tmp); !slices.Equal(names, []string{"backup", "target"}) {
		t.Errorf("after restore --force, %s holds %v, want no temporary directory left", tmp, names)
	}
	cfg, _, _ = testConfig(target)
	r = startServer(t, cfg)
	if p := me(t, r.base, d.firstKey); p.Type != "accountant" {
		t.Errorf("the backup's key on the restored data dir: %+v", p)
	}
	if status, _, _ := servertest.Get(t, r.base+"/me", targetKey); status != http.StatusUnauthorized {
		t.Errorf("the replaced data dir's key: %d, want 401", status)
	}
	flMustDownload(t, flLink(t, r.base, d.firstKey, d.clientID, d.demoFile), []byte(demoPDF))
	status, _, _ := flDo(t, http.MethodGet, r.base+"/tasks", d.firstKey, targetClient, "", nil)
	if status != http.StatusNotFound {
		t.Errorf("the replaced data dir's client: %d, want 404", status)
	}

	// Stored bytes that no longer match their row fail the backup, which
	// leaves nothing behind.
	bkFlipByte(t, filepath.Join(d.dir, backup.FilesName, filepath.FromSlash(flStorePath(d.demoFile))))
	stderr = mustFail(t, "backup", "--data-dir", d.dir, "--out", filepath.Join(tmp, "backup2"))
	if !strings.Contains(stderr, "do not match its row") {
		t.Errorf("backup of a damaged file store: %s, want the file's mismatch named", stderr)
	}
	if names := bkNames(t, tmp); !slices.Equal(names, []string{"backup", "target"}) {
		t.Errorf("after a failed backup, %s holds %v, want no backup and no temporary directory", tmp, names)
	}
}
