package cmd

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"acctapi/filestore/s3test"
)

// TestStorageMigrate moves a data dir's files from the local store to a
// bucket and back: every file is copied and verified, a second run copies
// nothing, a run after objects were lost or damaged copies just those, and
// a server on the target serves every file byte for byte.
func TestStorageMigrate(t *testing.T) {
	bucket := &testStore{name: "s3", bucket: s3test.Start(t)}
	local := &testStore{name: "local"}
	d := newFLDemoIn(t, local)
	demo := d.contents(t)
	contents := maps.Clone(demo)
	srv := startServer(t, local.configure(mustConfig(t, d.dir)))
	for i, size := range []int{0, 1000, 9 << 20} {
		content := flRandomBlock(byte(i), size)
		contents[flUpload(t, srv.base, d.firstKey, d.clientID, d.workspaceID, "f.bin", content)] = content
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", bucket.bucket.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", bucket.bucket.SecretAccessKey)
	target := bucket.storage().Location
	toBucket := []string{"storage", "migrate", "--data-dir", d.dir, "--to", target, "--s3-endpoint", bucket.bucket.Endpoint, "--s3-path-style"}

	all := len(contents)
	out := mustExecute(t, toBucket...)
	if n := strings.Count(out, "copied and verified\n"); n != all || !strings.Contains(out, fmt.Sprintf("migrated %d files", all)) ||
		!strings.Contains(out, fmt.Sprintf("%d copied and verified, 0 already in place", all)) {
		t.Fatalf("the first migration printed:\n%s\nwant a line for each of the %d files copied and a summary", out, all)
	}
	if got, want := bucket.files(t, d.dir), flStoreFiles(t, d.dir); !slices.Equal(got, want) {
		t.Errorf("the bucket holds %v, want %v as the local store", got, want)
	}
	if out := mustExecute(t, toBucket...); !strings.Contains(out, fmt.Sprintf("0 copied and verified, %d already in place", all)) {
		t.Errorf("the second migration printed:\n%s\nwant nothing copied", out)
	}

	// One object lost, one replaced by other bytes: the next run copies
	// those two again, and only those.
	ctx := context.Background()
	var ids []string
	for id := range contents {
		if demo[id] == nil {
			ids = append(ids, id)
		}
	}
	// The 9 MiB file is damaged: bytes of the same size whose SHA-256
	// differs (and that carry none in their metadata); the empty one lost.
	slices.SortFunc(ids, func(a, b string) int { return len(contents[b]) - len(contents[a]) })
	key := func(id string) string { return testPrefix + "/files/" + id }
	if err := bucket.bucket.Client.RemoveObject(ctx, bucket.bucket.Bucket, key(ids[2]), minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	other := bytes.Repeat([]byte("x"), len(contents[ids[0]]))
	if _, err := bucket.bucket.Client.PutObject(ctx, bucket.bucket.Bucket, key(ids[0]), bytes.NewReader(other), int64(len(other)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := mustExecute(t, toBucket...); !strings.Contains(out, fmt.Sprintf("2 copied and verified, %d already in place", all-2)) {
		t.Errorf("the migration after the damage printed:\n%s\nwant the 2 damaged files copied", out)
	}

	// The server on the bucket serves every file.
	srv = startServer(t, bucket.configure(mustConfig(t, d.dir)))
	for id, content := range contents {
		flMustDownload(t, flLink(t, srv.base, d.firstKey, d.clientID, id), content)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}

	// And back, into a local store emptied.
	if err := os.RemoveAll(filepath.Join(d.dir, "files")); err != nil {
		t.Fatal(err)
	}
	back := []string{"storage", "migrate", "--data-dir", d.dir, "--storage", target, "--to", "local", "--s3-endpoint", bucket.bucket.Endpoint, "--s3-path-style"}
	if out := mustExecute(t, back...); !strings.Contains(out, fmt.Sprintf("%d copied and verified, 0 already in place", all)) {
		t.Errorf("the migration back printed:\n%s\nwant the %d files copied", out, all)
	}
	if out := mustExecute(t, back...); !strings.Contains(out, fmt.Sprintf("0 copied and verified, %d already in place", all)) {
		t.Errorf("the second migration back printed:\n%s\nwant nothing copied", out)
	}
	srv = startServer(t, local.configure(mustConfig(t, d.dir)))
	for id, content := range contents {
		flMustDownload(t, flLink(t, srv.base, d.firstKey, d.clientID, id), content)
	}

	if stderr := mustFail(t, "storage", "migrate", "--data-dir", d.dir, "--to", "local"); !strings.Contains(stderr, "is the store the files are in") {
		t.Errorf("a migration onto the store itself: %s", stderr)
	}
}

// mustConfig is testConfig's configuration alone.
func mustConfig(t *testing.T, dir string) *Config {
	t.Helper()
	cfg, _, _ := testConfig(dir)
	return cfg
}
