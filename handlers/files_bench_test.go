package handlers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/filestore"
)

// flBenchSize is the size of the file the benchmarks move: 100 MiB.
const flBenchSize = 100 << 20

// flBenchServer is the real handler on a real database and file store,
// served by httptest, with an upload limit above flBenchSize.
type flBenchServer struct {
	server      *httptest.Server
	files       *filestore.Store
	key         string
	clientID    string
	workspaceID string
}

func newFLBenchServer(b *testing.B) *flBenchServer {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	store, err := db.Open(filepath.Join(dir, "acctapi.db"), db.Options{EncodeEvent: EncodeEvent, IdempotencyKey: IdempotencyKeyOf})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	if err := store.MigrateUp(); err != nil {
		b.Fatal(err)
	}
	if err := store.InitLinkSigningSecret(ctx, auth.NewSecret()); err != nil {
		b.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		b.Fatal(err)
	}
	firm, err := store.CreateFirm(ctx, "Bench firm")
	if err != nil {
		b.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Bench client", Type: db.ClientLegalPerson})
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := auth.MintKey(ctx, store, firm.ID, auth.KeySpec{ClientID: client.ID, RateLimitMax: 1 << 30, RateLimitWindow: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	s := &flBenchServer{files: files, key: key, clientID: client.ID, workspaceID: ws.ID}
	var h *Handler
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	b.Cleanup(s.server.Close)
	h, err = New(Config{
		Store:          store,
		Auth:           auth.NewAuthenticator(store, nil),
		Limiter:        flUnmetered(),
		BaseURL:        s.server.URL + "/v1",
		Version:        "bench",
		Files:          files,
		Signer:         auth.NewSigner(store, nil),
		MaxUploadBytes: 128 << 20,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// flRepeat yields n bytes cycling through block, never holding more.
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

// upload streams a file of size bytes (cycling through block) as a
// multipart upload with its exact Content-Length, and returns the File.
func (s *flBenchServer) upload(b *testing.B, block []byte, size int64) flFile {
	b.Helper()
	// Parts are read once: each body gets its own.
	overhead := len(flBody(b, flField("workspaceId", s.workspaceID), flFilePart("bench.bin", "application/octet-stream", nil)))
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(flWriteParts(pw, flField("workspaceId", s.workspaceID),
			flFileStream("bench.bin", "application/octet-stream", &flRepeat{block: block, left: size})))
	}()
	req, err := http.NewRequest(http.MethodPost, s.server.URL+"/v1/files", pr)
	if err != nil {
		b.Fatal(err)
	}
	req.ContentLength = int64(overhead) + size
	req.Header.Set("Content-Type", flMultipart)
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("x-client-id", s.clientID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		b.Fatalf("upload: %d %s", res.StatusCode, body)
	}
	var f flFile
	if err := json.Unmarshal(body, &f); err != nil {
		b.Fatal(err)
	}
	if f.Size != size {
		b.Fatalf("uploaded %d bytes, want %d", f.Size, size)
	}
	return f
}

// link returns a download link of the file.
func (s *flBenchServer) link(b *testing.B, id string) string {
	b.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.server.URL+"/v1/files/"+id+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("x-client-id", s.clientID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var link flLinkBody
	if err := json.NewDecoder(res.Body).Decode(&link); err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("content link: %d %v", res.StatusCode, err)
	}
	return link.URL
}

// BenchmarkUpload100MiB uploads a 100 MiB file per iteration through a real
// HTTP server: multipart parsing, SHA-256, temp file, fsync, rename, record.
// MB/s and allocations are those of client and server together.
func BenchmarkUpload100MiB(b *testing.B) {
	s := newFLBenchServer(b)
	block := flRandom(99, 1<<20)
	b.SetBytes(flBenchSize)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f := s.upload(b, block, flBenchSize)
		b.StopTimer()
		if err := s.files.Remove(f.ID); err != nil { // keep the disk from filling up
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkDownload100MiB downloads a 100 MiB file per iteration with a
// signed link: the server checked its SHA-256 at the first download, and
// streams it.
func BenchmarkDownload100MiB(b *testing.B) {
	s := newFLBenchServer(b)
	f := s.upload(b, flRandom(98, 1<<20), flBenchSize)
	link := s.link(b, f.ID)
	b.SetBytes(flBenchSize)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := http.Get(link)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil || n != flBenchSize || res.StatusCode != http.StatusOK {
			b.Fatalf("download: %d, %d bytes, %v", res.StatusCode, n, err)
		}
	}
}

// BenchmarkDownloadRange1KiB fetches 1 KiB of a 100 MiB file: the file was
// hashed at its first download, so each range reads only its bytes.
func BenchmarkDownloadRange1KiB(b *testing.B) {
	s := newFLBenchServer(b)
	f := s.upload(b, flRandom(97, 1<<20), flBenchSize)
	link := s.link(b, f.ID)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest(http.MethodGet, link, nil)
		req.Header.Set("Range", "bytes=1000-2023")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusPartialContent || len(body) != 1024 {
			b.Fatalf("range: %d, %d bytes, %v", res.StatusCode, len(body), err)
		}
	}
}

// BenchmarkDownloadNotModified revalidates a 100 MiB file by its ETag: the
// answer is a 304 without a body, and reads none of the file.
func BenchmarkDownloadNotModified(b *testing.B) {
	s := newFLBenchServer(b)
	f := s.upload(b, flRandom(96, 1<<20), flBenchSize)
	link := s.link(b, f.ID)
	res, err := http.Get(link)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	etag := res.Header.Get("ETag")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest(http.MethodGet, link, nil)
		req.Header.Set("If-None-Match", etag)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotModified {
			b.Fatalf("revalidation: %d, want 304", res.StatusCode)
		}
	}
}
