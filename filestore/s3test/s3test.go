// Package s3test runs versitygw, Versity's S3 gateway, on 127.0.0.1 for the
// tests of the S3 file store: a real S3 server over its posix backend in a
// temporary directory, with fresh keys, stopped when the test ends.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"acctapi/testprog"
)

// Version is the versitygw release the tests run against; .ci/run installs
// it.
const Version = "v1.8.0"

// Install is how to install versitygw.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@" + Version

// Server is a running versitygw with one bucket.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string
	// AccessKeyID and SecretAccessKey are the root user's keys.
	AccessKeyID, SecretAccessKey string
	// Bucket is the bucket made for the test.
	Bucket string
	// Client speaks to the server as the root user, for the test's checks.
	Client *minio.Client
	// Dir is the posix backend's directory: Dir/Bucket holds the objects.
	Dir string

	stop func()
}

// Stop stops the server before the test ends, as an outage would.
func (s *Server) Stop() { s.stop() }

// Start runs versitygw until the test ends, on a free port of 127.0.0.1,
// and makes a bucket. It skips the test where versitygw is not installed,
// and fails it under CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := testprog.Find(t, "versitygw", Install)
	s := &Server{AccessKeyID: "test" + randomHex(8), SecretAccessKey: randomHex(20), Bucket: "acctapi-" + randomHex(4), Dir: t.TempDir()}
	port := strconv.Itoa(testprog.FreePort(t))
	s.Endpoint = "http://" + net.JoinHostPort("127.0.0.1", port)
	cmd := exec.Command(bin, "--access", s.AccessKeyID, "--secret", s.SecretAccessKey,
		"--port", net.JoinHostPort("127.0.0.1", port), "--quiet", "posix", s.Dir)
	out := &testprog.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.stop = func() {
		cmd.Process.Kill()
		<-exited
	}
	t.Cleanup(s.stop)
	client, err := minio.New(net.JoinHostPort("127.0.0.1", port), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""), BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Client = client
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{})
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-exited:
			t.Fatalf("versitygw exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not make a bucket within 30 s: %v; its output: %s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Keys lists the keys of the bucket's objects under prefix.
func (s *Server) Keys(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for obj := range s.Client.ListObjects(context.Background(), s.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			t.Fatalf("list %s: %v", prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

// Uploads lists the keys of the multipart uploads under prefix that were
// started and neither completed nor aborted.
func (s *Server) Uploads(t testing.TB, prefix string) []string {
	t.Helper()
	var keys []string
	for u := range s.Client.ListIncompleteUploads(context.Background(), s.Bucket, prefix, true) {
		if u.Err != nil {
			t.Fatalf("list the uploads of %s: %v", prefix, u.Err)
		}
		keys = append(keys, u.Key)
	}
	return keys
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
