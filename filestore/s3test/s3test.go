// Package s3test runs versitygw, Versity's S3 gateway, on 127.0.0.1 for the
// tests of the S3 file store: a real S3 server over its posix backend in a
// temporary directory, with fresh keys, stopped when the test ends.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
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

// Binary finds versitygw on PATH or where go install puts it ($GOBIN, else
// $(go env GOPATH)/bin). Without it the test is skipped with how to install
// it, or fails under CI=true, where it must be installed.
func Binary(t testing.TB) string {
	t.Helper()
	dirs := []string{}
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		// GOBIN's line is empty when it is not set.
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) == 2 {
			if lines[0] != "" {
				dirs = append(dirs, lines[0])
			}
			for _, p := range filepath.SplitList(lines[1]) {
				dirs = append(dirs, filepath.Join(p, "bin"))
			}
		}
	}
	if path, err := exec.LookPath("versitygw"); err == nil {
		return path
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, "versitygw")
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path
		}
	}
	msg := fmt.Sprintf("versitygw is not installed (on PATH or in %v), so the S3 file store is not tested; install it with: %s", dirs, Install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start runs versitygw until the test ends, on a free port of 127.0.0.1,
// and makes a bucket. It skips the test where versitygw is not installed,
// and fails it under CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	s := &Server{AccessKeyID: "test" + randomHex(8), SecretAccessKey: randomHex(20), Bucket: "acctapi-" + randomHex(4), Dir: t.TempDir()}
	port := freePort(t)
	s.Endpoint = "http://" + net.JoinHostPort("127.0.0.1", port)
	cmd := exec.Command(bin, "--access", s.AccessKeyID, "--secret", s.SecretAccessKey,
		"--port", net.JoinHostPort("127.0.0.1", port), "--quiet", "posix", s.Dir)
	out := &syncBuffer{}
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

// freePort is a port of 127.0.0.1 that nothing listened on a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// syncBuffer collects a process's output for the failure message.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
