package cmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"acctapi/backup"
	"acctapi/filestore/s3test"
)

// TestBackupWithBucket backs up a data dir whose files are in a bucket: the
// database and objects.jsonl (key, size, sha256 of every file's object),
// no bytes; a missing object fails the backup; the restore verifies the
// list against the database, and a server on the restored data dir and
// the bucket serves every file.
func TestBackupWithBucket(t *testing.T) {
	store := &testStore{name: "s3", bucket: s3test.Start(t)}
	d := newFLDemoIn(t, store)
	contents := d.contents(t)
	srv := startServer(t, store.configure(mustConfig(t, d.dir)))
	content := flRandomBlock(9, 100<<10)
	contents[flUpload(t, srv.base, d.firstKey, d.clientID, d.workspaceID, "r.pdf", content)] = content
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", store.bucket.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", store.bucket.SecretAccessKey)
	flags := []string{"--storage", store.storage().Location, "--s3-endpoint", store.bucket.Endpoint, "--s3-path-style"}

	out := filepath.Join(t.TempDir(), "backup")
	res := mustExecute(t, append([]string{"backup", "--data-dir", d.dir, "--out", out, "--json"}, flags...)...)
	var m backup.Manifest
	if err := json.Unmarshal([]byte(res), &m); err != nil {
		t.Fatalf("backup --json printed %s: %v", res, err)
	}
	if m.Objects == nil || m.Objects.Location != "s3://"+store.bucket.Bucket+"/"+testPrefix+"/" || m.Files.Count != len(contents) {
		t.Fatalf("the manifest is %s, want the bucket's objects and %d files", res, len(contents))
	}
	if _, err := os.Stat(filepath.Join(out, "files")); !os.IsNotExist(err) {
		t.Errorf("the backup of a bucket's data dir holds files/ (%v)", err)
	}
	f, err := os.Open(filepath.Join(out, backup.ObjectsName))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for scan := bufio.NewScanner(f); scan.Scan(); lines++ {
		var line struct {
			Key    string `json:"key"`
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
		}
		if err := json.Unmarshal(scan.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		id := strings.TrimPrefix(line.Key, testPrefix+"/files/")
		sum := sha256.Sum256(contents[id])
		if contents[id] == nil || line.Size != int64(len(contents[id])) || line.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("objects.jsonl line %s, want the key, size and sha256 of a file", scan.Bytes())
		}
	}
	f.Close()
	if lines != len(contents) {
		t.Errorf("objects.jsonl has %d lines, want %d", lines, len(contents))
	}

	restored := filepath.Join(t.TempDir(), "restored")
	if res := mustExecute(t, "restore", "--from", out, "--data-dir", restored); !strings.Contains(res, "its files are in s3://"+store.bucket.Bucket) {
		t.Errorf("restore printed %s, want where the files are", res)
	}
	srv = startServer(t, store.configure(mustConfig(t, restored)))
	for id, content := range contents {
		flMustDownload(t, flLink(t, srv.base, d.firstKey, d.clientID, id), content)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	// A damaged list is refused before anything is restored.
	list, err := os.ReadFile(filepath.Join(out, backup.ObjectsName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, backup.ObjectsName), []byte(strings.Replace(string(list), `"size":`, `"size":1`, 1)), 0o640); err != nil {
		t.Fatal(err)
	}
	if stderr := mustFail(t, "restore", "--from", out, "--data-dir", filepath.Join(t.TempDir(), "again")); !strings.Contains(stderr, "is damaged") {
		t.Errorf("restore of a damaged list: %s", stderr)
	}

	// A file without its object fails the backup.
	if err := store.bucket.Client.RemoveObject(context.Background(), store.bucket.Bucket, testPrefix+"/files/"+d.demoFile, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	stderr := mustFail(t, append([]string{"backup", "--data-dir", d.dir, "--out", filepath.Join(t.TempDir(), "b2")}, flags...)...)
	if !strings.Contains(stderr, "holds no object of file "+d.demoFile) {
		t.Errorf("backup with an object missing: %s", stderr)
	}
}
