package filestore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"acctapi/filestore"
	"acctapi/filestore/s3test"
)

// mustOpenBucket opens a Bucket on a new versitygw with the prefix, its
// uploads limited to maxUpload bytes.
func mustOpenBucket(t *testing.T, prefix string, maxUpload int64, sweepAfter time.Duration) (*filestore.Bucket, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	b, err := filestore.OpenBucket(context.Background(), filestore.BucketOptions{
		Endpoint: srv.Endpoint, PathStyle: true, AccessKeyID: srv.AccessKeyID, SecretAccessKey: srv.SecretAccessKey,
		Bucket: srv.Bucket, Prefix: prefix, SweepAfter: sweepAfter,
	}, maxUpload)
	if err != nil {
		t.Fatalf("OpenBucket: %v", err)
	}
	return b, srv
}

// TestBucket streams uploads of several sizes (one part, several parts,
// empty) to versitygw, keeps them, and reads them back through the
// bucket's pre-signed GET, byte for byte, with the name and type it was
// asked to answer with.
func TestBucket(t *testing.T) {
	b, srv := mustOpenBucket(t, "tenant/a", 64<<20, time.Hour)
	if got := b.PartSize(); got != 8<<20 {
		t.Errorf("PartSize = %d, want 8 MiB", got)
	}
	for i, size := range []int{0, 1, 300 << 10, 8 << 20, 20<<20 + 7} {
		content := random(byte(i), size)
		p, err := b.Write(bytes.NewReader(content), 64<<20)
		if err != nil {
			t.Fatalf("Write %d bytes: %v", size, err)
		}
		sum := sha256.Sum256(content)
		if p.Size != int64(size) || !bytes.Equal(p.SHA256, sum[:]) || !bytes.Equal(p.Head, content[:min(size, 512)]) {
			t.Fatalf("Write %d bytes: pending of %d bytes, sha256 %x, head of %d bytes; want %x", size, p.Size, p.SHA256, len(p.Head), sum)
		}
		id := "cfile" + strings.Repeat("x", i) + "0000"
		if err := b.Keep(p, id, func() error { return nil }); err != nil {
			t.Fatalf("Keep: %v", err)
		}
		b.Discard(p) // after Keep, does nothing
		stat, err := b.Stat(context.Background(), id)
		if err != nil || stat.Size != int64(size) || !bytes.Equal(stat.SHA256, sum[:]) {
			t.Fatalf("Stat %s: %+v, %v; want %d bytes with sha256 %x", id, stat, err, size, sum)
		}
		link, err := b.SignedURL(context.Background(), id, 10*time.Minute, "application/pdf", `attachment; filename="Beleg 1.pdf"`)
		if err != nil {
			t.Fatalf("SignedURL: %v", err)
		}
		if !strings.Contains(link, "X-Amz-Expires=600") {
			t.Errorf("the link %s does not expire in 600 s", link)
		}
		res, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK || !bytes.Equal(got, content) {
			t.Fatalf("GET the pre-signed link of %d bytes: %d, %d bytes (%v)", size, res.StatusCode, len(got), err)
		}
		if ct, cd := res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"); ct != "application/pdf" || cd != `attachment; filename="Beleg 1.pdf"` {
			t.Errorf("the pre-signed GET answered Content-Type %q and Content-Disposition %q", ct, cd)
		}
	}
	if uploads := srv.Keys(t, "tenant/a/uploads/"); len(uploads) != 0 {
		t.Errorf("temporary objects left after Keep: %v", uploads)
	}
	if keys := srv.Keys(t, ""); len(keys) != 5 || !strings.HasPrefix(keys[0], "tenant/a/files/cfile") {
		t.Errorf("the bucket holds %v, want 5 objects under tenant/a/files/", keys)
	}
	if err := b.Reachable(context.Background()); err != nil {
		t.Errorf("Reachable: %v", err)
	}
}

// TestBucketAbort requires that an upload over the limit, or whose body
// fails, or that Keep refuses or that is discarded, leaves no object and no
// multipart upload behind.
func TestBucketAbort(t *testing.T) {
	b, srv := mustOpenBucket(t, "", 20<<20, time.Hour)
	if _, err := b.Write(bytes.NewReader(random(1, 20<<20+1)), 20<<20); !errors.Is(err, filestore.ErrTooLarge) {
		t.Errorf("Write over the limit: %v, want ErrTooLarge", err)
	}
	errBodyBroke := errors.New("the body broke")
	if _, err := b.Write(&failingReader{n: 9 << 20, err: errBodyBroke}, 20<<20); !errors.Is(err, errBodyBroke) {
		t.Errorf("Write of a failing body: %v, want its error", err)
	}
	// A body cut short is no short last part: the upload is aborted.
	if _, err := b.Write(&failingReader{n: 100, err: io.ErrUnexpectedEOF}, 20<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Write of a body cut short: %v, want io.ErrUnexpectedEOF", err)
	}
	p, err := b.Write(bytes.NewReader(random(3, 100)), 20<<20)
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("no row")
	if err := b.Keep(p, "crefused0000", func() error { return refused }); !errors.Is(err, refused) {
		t.Errorf("Keep with a failing record: %v, want its error", err)
	}
	p, err = b.Write(bytes.NewReader(random(4, 100)), 20<<20)
	if err != nil {
		t.Fatal(err)
	}
	b.Discard(p)
	if keys := srv.Keys(t, ""); len(keys) != 0 {
		t.Errorf("objects left: %v", keys)
	}
	if uploads := srv.Uploads(t, ""); len(uploads) != 0 {
		t.Errorf("multipart uploads left: %v", uploads)
	}
}

// TestBucketClean leaves what a crash leaves (an upload never completed, a
// temporary object, objects without a row) and requires Clean to remove it
// all but the recorded objects, and to leave recent leftovers for later.
func TestBucketClean(t *testing.T) {
	b, srv := mustOpenBucket(t, "p", 20<<20, 0)
	ctx := context.Background()
	core := srv.Client
	if _, err := core.PutObject(ctx, srv.Bucket, "p/uploads/crashed", bytes.NewReader([]byte("half")), 4, putOptions()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"crecorded0000", "corphan00000"} {
		p, err := b.Write(bytes.NewReader([]byte(id)), 20<<20)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Keep(p, id, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// A multipart upload started and never completed, as a kill leaves it.
	if _, err := newMultipart(ctx, srv, "p/uploads/killed"); err != nil {
		t.Fatal(err)
	}
	if _, err := core.PutObject(ctx, srv.Bucket, "elsewhere/file", bytes.NewReader([]byte("not ours")), 8, putOptions()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the objects' times have whole seconds
	removed, err := b.Clean(func(ids []string) (map[string]bool, error) {
		return map[string]bool{"crecorded0000": slices.Contains(ids, "crecorded0000")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3 {
		t.Errorf("Clean removed %d, want 3 (the upload, the temporary object, the orphan)", removed)
	}
	if keys := srv.Keys(t, ""); !slices.Equal(keys, []string{"elsewhere/file", "p/files/crecorded0000"}) {
		t.Errorf("after Clean the bucket holds %v", keys)
	}
	if uploads := srv.Uploads(t, ""); len(uploads) != 0 {
		t.Errorf("after Clean multipart uploads are left: %v", uploads)
	}

	young, _ := mustOpenBucketOn(t, srv, "p", time.Hour)
	p, err := young.Write(bytes.NewReader([]byte("young")), 20<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := young.Keep(p, "cyoung000000", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if removed, err := young.Clean(func([]string) (map[string]bool, error) { return nil, nil }); err != nil || removed != 0 {
		t.Errorf("Clean with a sweep age of an hour removed %d (%v), want 0", removed, err)
	}
}

// mustOpenBucketOn opens a Bucket on a running versitygw.
func mustOpenBucketOn(t *testing.T, srv *s3test.Server, prefix string, sweepAfter time.Duration) (*filestore.Bucket, *s3test.Server) {
	t.Helper()
	b, err := filestore.OpenBucket(context.Background(), filestore.BucketOptions{
		Endpoint: srv.Endpoint, PathStyle: true, AccessKeyID: srv.AccessKeyID, SecretAccessKey: srv.SecretAccessKey,
		Bucket: srv.Bucket, Prefix: prefix, SweepAfter: sweepAfter,
	}, 20<<20)
	if err != nil {
		t.Fatalf("OpenBucket: %v", err)
	}
	return b, srv
}

func putOptions() minio.PutObjectOptions { return minio.PutObjectOptions{} }

// newMultipart starts a multipart upload of the key and uploads one part.
func newMultipart(ctx context.Context, srv *s3test.Server, key string) (string, error) {
	core := &minio.Core{Client: srv.Client}
	id, err := core.NewMultipartUpload(ctx, srv.Bucket, key, minio.PutObjectOptions{})
	if err != nil {
		return "", err
	}
	part := bytes.Repeat([]byte("p"), 5<<20)
	_, err = core.PutObjectPart(ctx, srv.Bucket, key, id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{})
	return id, err
}
