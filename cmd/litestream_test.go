package cmd

import (
	"acctapi/server/servertest"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"acctapi/filestore/s3test"
	"acctapi/testprog"
)

// litestreamInstall installs the Litestream release TestLitestream runs the
// docs' recipe with; .ci/run runs it.
const litestreamInstall = "go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18"

// The docs' Litestream recipe: the configuration, and the restore commands.
// TestLitestream runs both as written, with only the data dir, the bucket
// and the endpoint replaced.
var (
	litestreamConfigBlock  = regexp.MustCompile("(?s)<!-- litestream-config[^>]*-->\n```yaml\n(.*?)```")
	litestreamRestoreBlock = regexp.MustCompile("(?s)<!-- litestream-restore[^>]*-->\n```sh\n(.*?)```")
)

// The docs' placeholders, which TestLitestream replaces.
const (
	litestreamDocsDataDir  = "/var/lib/acctapi"
	litestreamDocsBucket   = "my-bucket"
	litestreamDocsEndpoint = "https://s3.example.net"
)

const (
	// litestreamWriters write for litestreamLoad before the kill.
	litestreamWriters = 4
	litestreamLoad    = 6 * time.Second
	// litestreamWindow is the loss allowed: every write acknowledged
	// longer before the kill must survive it.
	litestreamWindow = 2 * time.Second
)

// litestreamWrite is a write the server acknowledged.
type litestreamWrite struct {
	file    bool   // an upload, else a task's create
	id      string // the task's or the file's
	content []byte // an upload's bytes
	acked   time.Time
}

// TestLitestreamPinnedInCI requires .ci/run to install the Litestream that
// TestLitestream names, so that CI runs the recipe with the pinned release.
func TestLitestreamPinnedInCI(t *testing.T) {
	script, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), litestreamInstall+"\n") {
		t.Errorf(".ci/run does not run %q", litestreamInstall)
	}
}

// TestLitestream proves the docs' disaster recovery with Litestream: acctapi
// serves with its files in one bucket of versitygw while Litestream, run
// with the docs' configuration, replicates the database to another; writers
// create tasks and upload files; acctapi and Litestream are killed with
// SIGKILL, as when the VM is lost, and the data dir is removed. The docs'
// restore commands bring the database back, and acctapi serves it with the
// same bucket: every write acknowledged more than litestreamWindow before
// the kill is there (files with their bytes), the database passes its
// integrity checks, and the objects of lost uploads are swept.
func TestLitestream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, Litestream and versitygw; skipped with -short")
	}
	started := time.Now()
	litestream := testprog.Find(t, "litestream", litestreamInstall)
	config, restore := litestreamDocs(t)
	store := &testStore{name: "s3", bucket: s3test.Start(t)}
	replicaBucket := "litestream-" + strings.TrimPrefix(store.bucket.Bucket, "acctapi-")
	if err := store.bucket.Client.MakeBucket(context.Background(), replicaBucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")

	// The environment of the docs' Litestream: its keys as LITESTREAM_*,
	// no AWS_* (AWS_CA_BUNDLE breaks 0.5.18's S3 client, and AWS_ACCESS_KEY_ID
	// would win over LITESTREAM_ACCESS_KEY_ID), the config where restore
	// finds it without -config, and the binary found on PATH.
	configPath := filepath.Join(tmp, "litestream.yml")
	config = strings.ReplaceAll(config, litestreamDocsDataDir, dataDir)
	config = strings.ReplaceAll(config, litestreamDocsBucket, replicaBucket)
	config = strings.ReplaceAll(config, litestreamDocsEndpoint, store.bucket.Endpoint)
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	var lsEnv []string
	for _, kv := range hermeticEnv() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "LITESTREAM_") && !strings.HasPrefix(kv, "PATH=") {
			lsEnv = append(lsEnv, kv)
		}
	}
	lsEnv = append(lsEnv, "LITESTREAM_ACCESS_KEY_ID="+store.bucket.AccessKeyID, "LITESTREAM_SECRET_ACCESS_KEY="+store.bucket.SecretAccessKey,
		"LITESTREAM_CONFIG="+configPath, "PATH="+filepath.Dir(litestream)+string(os.PathListSeparator)+os.Getenv("PATH"))

	// acctapi first, so that its first start makes the schema; then
	// Litestream, until its first changes are in the bucket.
	srv, base, _, clientID, workspaceID := startDemoServer(t, bin, dataDir, store)
	key := parseKeyJSON(t, mustExecute(t, "keys", "create", "--json", "--name", "litestream test", "--client", clientID,
		"--rate-limit-max", "1000000000", "--data-dir", dataDir)).str("key")
	ls := startProcessIn(t, lsEnv, litestream, "replicate")
	lsOutput := func() string { return ls.stdout.String() + ls.stderr.String() }
	pollUntil(t, 30*time.Second, "Litestream's first upload", func() bool {
		select {
		case <-ls.exited:
			t.Fatalf("litestream replicate exited (%v):\n%s", ls.waitErr, lsOutput())
		default:
		}
		return len(litestreamObjects(t, store.bucket, replicaBucket)) > 0
	})
	t.Logf("acctapi and Litestream replicating after %v", time.Since(started).Round(time.Millisecond))

	// The load, then the kill while it runs: Litestream first, so that
	// nothing acctapi acknowledges after it reaches the replica.
	var (
		mu     sync.Mutex
		writes []litestreamWrite
		killed atomic.Bool
		stop   = make(chan struct{})
		wg     sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: litestreamWriters}}
	defer client.CloseIdleConnections()
	for w := range litestreamWriters {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				write, err := litestreamSend(client, base, key, clientID, workspaceID, rng, w, i)
				if err != nil {
					if !killed.Load() {
						t.Errorf("writer %d, write %d: %v", w, i, err)
					}
					return
				}
				mu.Lock()
				writes = append(writes, write)
				mu.Unlock()
			}
		})
	}
	time.Sleep(litestreamLoad)
	killAt := time.Now()
	killed.Store(true)
	for _, p := range []*process{ls, srv} {
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	<-ls.exited
	<-srv.exited
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}

	// The docs' restore, as written but for the data dir.
	script := "set -euo pipefail\n" + strings.ReplaceAll(restore, litestreamDocsDataDir, dataDir)
	sh := exec.Command("bash", "-x", "-c", script)
	sh.Env = lsEnv
	restoreStart := time.Now()
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the docs' restore failed: %v\n%s\nLitestream's replicate output:\n%s", err, out, lsOutput())
	}
	t.Logf("the docs' restore took %v", time.Since(restoreStart).Round(time.Millisecond))

	// The docs' note holds: with AWS_CA_BUNDLE set, even to a good CA, this
	// Litestream cannot build its S3 client. When a release can, the note
	// goes.
	bundle := filepath.Join(tmp, "ca.pem")
	if err := os.WriteFile(bundle, servertest.NewCert(t, nil, true).CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	dry := exec.Command(litestream, "restore", "-dry-run", filepath.Join(dataDir, "acctapi.db"))
	dry.Env = append(slices.Clone(lsEnv), "AWS_CA_BUNDLE="+bundle)
	if out, err := dry.CombinedOutput(); err == nil || !strings.Contains(string(out), "cannot load aws config") {
		t.Errorf("litestream restore -dry-run with AWS_CA_BUNDLE set: %v\n%s\nwant the error the docs warn of; if it works now, drop the docs' note", err, out)
	}

	// The restored database, served with the same bucket.
	srv = startProcessEnv(t, store.env(), bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--log-format", "json"}, store.args()...)...)
	srv.waitStderr(t, 60*time.Second, "the listening log line on the restored database", func(s string) bool { return listeningAddr(s) != "" })
	base = "http://" + listeningAddr(srv.stderr.String()) + "/v1"

	objects := map[string]bool{}
	for _, k := range store.bucket.Keys(t, testPrefix+"/files/") {
		objects[strings.TrimPrefix(k, testPrefix+"/files/")] = true
	}
	var (
		tasks, files, required, lost int
		oldestLost, newestKept       time.Duration = 0, -1
	)
	for _, w := range writes {
		age := killAt.Sub(w.acked)
		kept := litestreamHas(t, base, key, clientID, w)
		switch {
		case kept && (newestKept < 0 || age < newestKept):
			newestKept = age
		case !kept:
			lost++
			oldestLost = max(oldestLost, age)
			if w.file && objects[w.id] {
				t.Errorf("file %s is lost, but its object is still in the bucket", w.id)
			}
		}
		if w.file {
			files++
		} else {
			tasks++
		}
		if age > litestreamWindow {
			required++
			if !kept {
				t.Errorf("the %s acknowledged %v before the kill is lost", litestreamKind(w), age.Round(time.Millisecond))
			}
		}
	}
	if required == 0 || tasks == 0 || files == 0 {
		t.Fatalf("%d tasks and %d files acknowledged, %d of them more than %v before the kill: too few to prove anything",
			tasks, files, required, litestreamWindow)
	}

	// The database passes SQLite's integrity_check and foreign_key_check,
	// and every file it records has its object: acctapi backup checks all
	// of that, beside the server.
	t.Setenv("AWS_ACCESS_KEY_ID", store.bucket.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", store.bucket.SecretAccessKey)
	mustExecute(t, "backup", "--data-dir", dataDir, "--out", filepath.Join(tmp, "backup"),
		"--storage", store.storage().Location, "--s3-endpoint", store.bucket.Endpoint, "--s3-path-style")

	// Litestream, started again as the docs say, carries on from the
	// restored database: a write made now reaches the replica, and a restore
	// brings it back.
	ls = startProcessIn(t, lsEnv, litestream, "replicate")
	after, err := litestreamSend(client, base, key, clientID, workspaceID, rand.New(rand.NewPCG(0, 1)), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(tmp, "again.db")
	carryStart := time.Now()
	pollUntil(t, 30*time.Second, "the write after the restore in a restore", func() bool {
		select {
		case <-ls.exited:
			t.Fatalf("litestream replicate exited (%v) on the restored database:\n%s", ls.waitErr, lsOutput())
		default:
		}
		c := exec.Command(litestream, "restore", "-force", "-o", again, filepath.Join(dataDir, "acctapi.db"))
		c.Env = lsEnv
		if out, err := c.CombinedOutput(); err != nil {
			t.Logf("litestream restore -o %s: %v\n%s", again, err, out)
			return false
		}
		return len(flRawStrings(t, again, `SELECT id FROM tasks WHERE id = ?`, after.id)) == 1
	})
	if out := lsOutput(); strings.Contains(out, "level=ERROR") {
		t.Errorf("litestream replicate logged errors on the restored database:\n%s", out)
	}
	t.Logf("Litestream, started again, had a new write in its replica after %v", time.Since(carryStart).Round(time.Millisecond))

	t.Logf("%d writes acknowledged in %v by %d writers (%d task creates, %d uploads); %d more than %v before the kill, all restored",
		len(writes), litestreamLoad, litestreamWriters, tasks, files, required, litestreamWindow)
	if lost == 0 {
		t.Logf("lag: none lost; the newest write was acknowledged %v before the kill", newestKept.Round(time.Millisecond))
	} else {
		t.Logf("lag: %d writes lost, the oldest acknowledged %v before the kill; the newest restored was acknowledged %v before it",
			lost, oldestLost.Round(time.Millisecond), newestKept.Round(time.Millisecond))
	}
	t.Logf("TestLitestream took %v", time.Since(started).Round(time.Millisecond))
}

// litestreamDocs returns the docs' Litestream configuration and restore
// commands, from README.md or the page under docs/ that holds them.
func litestreamDocs(t *testing.T) (config, restore string) {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, page := range append([]string{"../README.md"}, pages...) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		c := litestreamConfigBlock.FindAllSubmatch(text, -1)
		r := litestreamRestoreBlock.FindAllSubmatch(text, -1)
		if len(c) == 0 && len(r) == 0 {
			continue
		}
		if len(c) != 1 || len(r) != 1 {
			t.Fatalf("%s has %d litestream-config and %d litestream-restore blocks, want one of each", page, len(c), len(r))
		}
		found = append(found, page)
		config, restore = string(c[0][1]), string(r[0][1])
	}
	if len(found) != 1 {
		t.Fatalf("the Litestream recipe (a <!-- litestream-config --> yaml block and a <!-- litestream-restore --> sh block) is in %v, want one page", found)
	}
	for _, placeholder := range []string{litestreamDocsDataDir, litestreamDocsBucket, litestreamDocsEndpoint} {
		if !strings.Contains(config, placeholder) {
			t.Fatalf("the docs' Litestream configuration lacks %s, which the test replaces:\n%s", placeholder, config)
		}
	}
	if !strings.Contains(restore, litestreamDocsDataDir) {
		t.Fatalf("the docs' restore commands lack %s, which the test replaces:\n%s", litestreamDocsDataDir, restore)
	}
	return config, restore
}

// litestreamObjects lists the keys of the replica's bucket.
func litestreamObjects(t *testing.T, s *s3test.Server, bucket string) []string {
	t.Helper()
	var keys []string
	for obj := range s.Client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatalf("list %s: %v", bucket, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

// litestreamSend sends writer w's write i: a task's create or, every other
// time, an upload of up to 32 KiB. It returns the write once acknowledged.
func litestreamSend(client *http.Client, base, key, clientID, workspaceID string, rng *rand.Rand, w, i int) (litestreamWrite, error) {
	var (
		write       litestreamWrite
		body        []byte
		contentType string
		path        = "/tasks"
	)
	if i%2 == 1 {
		write.file, path = true, "/files"
		write.content = make([]byte, 512+rng.IntN(32<<10))
		for j := range write.content {
			write.content[j] = byte(rng.Uint32())
		}
		r, ct := flUploadBody(workspaceID, fmt.Sprintf("w%d-%d.bin", w, i), bytes.NewReader(write.content))
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(r); err != nil {
			return write, err
		}
		body, contentType = buf.Bytes(), ct
	} else {
		body, _ = json.Marshal(map[string]string{"title": fmt.Sprintf("writer %d, task %d", w, i), "workspaceId": workspaceID})
		contentType = "application/json"
	}
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return write, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("x-client-id", clientID)
	req.Header.Set("Content-Type", contentType)
	res, err := client.Do(req)
	if err != nil {
		return write, err
	}
	defer res.Body.Close()
	var answer struct {
		ID   string `json:"id"`
		Size int    `json:"size"`
	}
	if err := json.NewDecoder(res.Body).Decode(&answer); err != nil {
		return write, fmt.Errorf("POST /v1%s: %d, %v", path, res.StatusCode, err)
	}
	write.acked = time.Now()
	if res.StatusCode != http.StatusCreated || answer.ID == "" || write.file && answer.Size != len(write.content) {
		return write, fmt.Errorf("POST /v1%s: %d %+v", path, res.StatusCode, answer)
	}
	write.id = answer.ID
	return write, nil
}

// litestreamHas reports whether the server holds the write: the task, or the
// file with its bytes, downloaded through its link.
func litestreamHas(t *testing.T, base, key, clientID string, w litestreamWrite) bool {
	t.Helper()
	path := "/tasks/" + w.id
	if w.file {
		path = "/files/" + w.id + "/content"
	}
	status, _, body := flDo(t, http.MethodGet, base+path, key, clientID, "", nil)
	switch {
	case status == http.StatusNotFound:
		return false
	case status != http.StatusOK:
		t.Fatalf("GET /v1%s: %d %s", path, status, body)
	case w.file:
		flMustDownload(t, flLink(t, base, key, clientID, w.id), w.content)
	}
	return true
}

func litestreamKind(w litestreamWrite) string {
	if w.file {
		return "upload of file " + w.id
	}
	return "create of task " + w.id
}

// pollUntil polls done until it holds, failing the test after timeout.
func pollUntil(t *testing.T, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
