package filestore_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"acctapi/filestore"
)

// mustOpen opens a store in a new directory and returns it with the directory.
func mustOpen(t *testing.T) (*filestore.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, dir
}

// tree lists every file (not directory) under dir, slash-separated and
// relative to dir.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	files := []string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func random(seed byte, n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

func mustWrite(t *testing.T, s *filestore.Store, content []byte) *filestore.Pending {
	t.Helper()
	p, err := s.Write(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return p
}

func mustCommit(t *testing.T, s *filestore.Store, content []byte, id string) {
	t.Helper()
	if err := s.Commit(mustWrite(t, s, content), id); err != nil {
		t.Fatalf("Commit(%s): %v", id, err)
	}
}

func readAll(t *testing.T, s *filestore.Store, id string) []byte {
	t.Helper()
	f, err := s.OpenFile(id)
	if err != nil {
		t.Fatalf("OpenFile(%s): %v", id, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const id1 = "cfilefilefilefilefile0001"

func TestRoundTrip(t *testing.T) {
	s, dir := mustOpen(t)
	if info, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || !info.IsDir() {
		t.Fatalf("Open made no tmp directory: %v", err)
	}
	content := random(1, 700<<10)
	p := mustWrite(t, s, content)
	sum := sha256.Sum256(content)
	if p.Size != int64(len(content)) || !bytes.Equal(p.SHA256, sum[:]) || !bytes.Equal(p.Head, content[:512]) {
		t.Errorf("pending: size %d, sha256 %x, head %d bytes; want %d, %x and the first 512 bytes", p.Size, p.SHA256, len(p.Head), len(content), sum)
	}
	tmp := tree(t, dir)
	if len(tmp) != 1 || !strings.HasPrefix(tmp[0], "tmp/") {
		t.Errorf("before Commit the store holds %v, want one file in tmp/", tmp)
	}
	if _, err := s.OpenFile(id1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile before Commit: got %v, want fs.ErrNotExist", err)
	}
	if err := s.Commit(p, id1); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := tree(t, dir); !slices.Equal(got, []string{"01/" + id1}) {
		t.Errorf("after Commit the store holds %v, want [01/%s]", got, id1)
	}
	if !bytes.Equal(readAll(t, s, id1), content) {
		t.Errorf("OpenFile returned other bytes")
	}
	// Discard after Commit (as the upload handler defers it) leaves the file.
	s.Discard(p)
	if !bytes.Equal(readAll(t, s, id1), content) {
		t.Errorf("Discard after Commit touched the committed file")
	}
	if err := s.Remove(id1); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := s.OpenFile(id1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile after Remove: got %v, want fs.ErrNotExist", err)
	}
	if err := s.Remove(id1); err != nil {
		t.Errorf("Remove of a removed file: got %v, want nil", err)
	}

	t.Run("small and empty", func(t *testing.T) {
		for i, content := range [][]byte{nil, []byte("x"), random(2, 511), random(3, 512), random(4, 513)} {
			p := mustWrite(t, s, content)
			if want := content[:min(len(content), 512)]; p.Size != int64(len(content)) || !bytes.Equal(p.Head, want) {
				t.Errorf("%d bytes: size %d, head %d bytes", len(content), p.Size, len(p.Head))
			}
			id := "csmall" + string(rune('a'+i)) + "0000000000000000000"
			if err := s.Commit(p, id); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, id); !bytes.Equal(got, content) {
				t.Errorf("%d bytes: read back %d", len(content), len(got))
			}
		}
	})
	t.Run("Commit replaces a file of the same id", func(t *testing.T) {
		mustCommit(t, s, []byte("first"), id1)
		mustCommit(t, s, []byte("second"), id1)
		if got := readAll(t, s, id1); string(got) != "second" {
			t.Errorf("got %q, want second", got)
		}
	})
}

func TestWriteLimit(t *testing.T) {
	s, dir := mustOpen(t)
	content := random(5, 10000)
	if _, err := s.Write(bytes.NewReader(content), int64(len(content))); err != nil {
		t.Fatalf("Write of exactly the limit: %v", err)
	}
	before := tree(t, dir)
	for _, max := range []int64{int64(len(content)) - 1, 0, 100} {
		p, err := s.Write(bytes.NewReader(content), max)
		if !errors.Is(err, filestore.ErrTooLarge) || p != nil {
			t.Errorf("Write of %d bytes with the limit %d: got %v, %v, want nil, ErrTooLarge", len(content), max, p, err)
		}
		if got := tree(t, dir); !slices.Equal(got, before) {
			t.Errorf("Write over the limit left %v (before: %v)", got, before)
		}
	}
}

// failingReader yields n bytes, then an error.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(p), f.n)
	for i := range p[:k] {
		p[i] = byte(i)
	}
	f.n -= k
	return k, nil
}

func TestWriteReaderFails(t *testing.T) {
	s, dir := mustOpen(t)
	boom := errors.New("connection reset")
	for _, n := range []int{0, 100, 1 << 20} {
		p, err := s.Write(&failingReader{n: n, err: boom}, 10<<20)
		if !errors.Is(err, boom) || p != nil {
			t.Errorf("after %d bytes: got %v, %v, want nil and the reader's error", n, p, err)
		}
		if got := tree(t, dir); len(got) != 0 {
			t.Errorf("a failed Write left %v", got)
		}
	}
	// io.ErrUnexpectedEOF, as a request body cut off gives, too.
	if _, err := s.Write(io.MultiReader(bytes.NewReader(random(6, 5000)), &failingReader{err: io.ErrUnexpectedEOF}), 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if got := tree(t, dir); len(got) != 0 {
		t.Errorf("a failed Write left %v", got)
	}
}

func TestDiscard(t *testing.T) {
	s, dir := mustOpen(t)
	p := mustWrite(t, s, random(7, 1000))
	if len(tree(t, dir)) != 1 {
		t.Fatalf("Write left %v, want one temporary file", tree(t, dir))
	}
	s.Discard(p)
	if got := tree(t, dir); len(got) != 0 {
		t.Errorf("Discard left %v", got)
	}
	s.Discard(p) // twice is harmless
	if err := s.Commit(p, id1); err == nil {
		t.Errorf("Commit of discarded content: got nil, want an error")
	}
	if got := tree(t, dir); len(got) != 0 {
		t.Errorf("Commit of discarded content left %v", got)
	}
}

func TestInvalidIDs(t *testing.T) {
	s, dir := mustOpen(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{
		"", "a", "abc", "../outside", "..", "ab/cd", "ab\\cd", "/etc/passwd", "CFILEFILEFILE0001", "cfile.pdf",
		"cfile file", "cfile\x00file", "cfile-file", "tmp/../../outside", "cfileé",
	} {
		p := mustWrite(t, s, []byte("content"))
		if err := s.Commit(p, id); err == nil {
			t.Errorf("Commit(%q): got nil, want an error", id)
		}
		if f, err := s.OpenFile(id); err == nil || errors.Is(err, fs.ErrNotExist) {
			if f != nil {
				f.Close()
			}
			t.Errorf("OpenFile(%q): got %v, want an invalid id error", id, err)
		}
		if err := s.Remove(id); err == nil {
			t.Errorf("Remove(%q): got nil, want an error", id)
		}
		s.Discard(p)
	}
	if got := tree(t, dir); len(got) != 0 {
		t.Errorf("the store holds %v, want nothing", got)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "secret" {
		t.Errorf("the file outside the store: %q, %v", b, err)
	}
	// Four lower-case characters are the shortest id.
	mustCommit(t, s, []byte("ok"), "abcd")
	if got := tree(t, dir); !slices.Equal(got, []string{"cd/abcd"}) {
		t.Errorf("the store holds %v, want [cd/abcd]", got)
	}
}

func TestClean(t *testing.T) {
	s, dir := mustOpen(t)
	known := []string{"cknownknownknownknown0a1", "cknownknownknownknown0b2", "cknownknownknownknown1a1"}
	orphans := []string{"corphanorphanorphanorp0a1", "corphanorphanorphanorpzz9", "corphanorphanorphanorp0b2"}
	for i, id := range append(slices.Clone(known), orphans...) {
		mustCommit(t, s, random(byte(10+i), 100), id)
	}
	mustWrite(t, s, random(20, 100)) // an upload in flight when the process died
	if err := os.WriteFile(filepath.Join(dir, "tmp", "upload-123"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Files at the top level are not the store's: left alone.
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	removed, err := s.Clean(func(ids []string) (map[string]bool, error) {
		asked = append(asked, ids...)
		out := map[string]bool{}
		for _, id := range ids {
			if slices.Contains(known, id) {
				out[id] = true
			}
		}
		return out, nil
	})
	if err != nil {
		t.Fatalf("Clean: %v", err)
	}
	if removed != len(orphans)+2 {
		t.Errorf("Clean removed %d, want %d (the orphans and two temporary files)", removed, len(orphans)+2)
	}
	sort.Strings(asked)
	all := append(slices.Clone(known), orphans...)
	sort.Strings(all)
	if !slices.Equal(asked, all) {
		t.Errorf("Clean asked about %v, want %v", asked, all)
	}
	want := []string{"README"}
	for _, id := range known {
		want = append(want, id[len(id)-2:]+"/"+id)
	}
	sort.Strings(want)
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Clean the store holds %v, want %v", got, want)
	}
	for i, id := range known {
		if !bytes.Equal(readAll(t, s, id), random(byte(10+i), 100)) {
			t.Errorf("the known file %s changed", id)
		}
	}

	t.Run("an error of known stops Clean", func(t *testing.T) {
		boom := errors.New("database locked")
		if _, err := s.Clean(func([]string) (map[string]bool, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("got %v, want the callback's error", err)
		}
		if got := tree(t, dir); !slices.Equal(got, want) {
			t.Errorf("a failed Clean removed files: %v", got)
		}
	})
	t.Run("nothing to clean", func(t *testing.T) {
		s, _ := mustOpen(t)
		n, err := s.Clean(func(ids []string) (map[string]bool, error) {
			t.Errorf("known called with %v on an empty store", ids)
			return nil, nil
		})
		if n != 0 || err != nil {
			t.Errorf("got %d, %v, want 0, nil", n, err)
		}
	})
}

// generator yields n pseudo-random bytes without holding them.
type generator struct {
	left int64
	rng  *rand.ChaCha8
}

func (g *generator) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.left)]
	g.rng.Read(p)
	g.left -= int64(len(p))
	return len(p), nil
}

func TestWriteMemoryStaysFlat(t *testing.T) {
	const size = 256 << 20
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	s, dir := mustOpen(t)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	p, err := s.Write(&generator{left: size, rng: rand.NewChaCha8([32]byte{9})}, size)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	defer s.Discard(p)
	if p.Size != size {
		t.Errorf("size %d, want %d", p.Size, size)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	heapGrowth := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("256 MiB written in %v: %d bytes allocated, heap in use grew by %d bytes", elapsed, allocated, heapGrowth)
	if allocated > 8<<20 {
		t.Errorf("Write of 256 MiB allocated %d bytes, want far less than the file (< 8 MiB)", allocated)
	}
	if heapGrowth > 8<<20 {
		t.Errorf("Write of 256 MiB grew the heap by %d bytes, want < 8 MiB", heapGrowth)
	}
	if got := tree(t, dir); len(got) != 1 {
		t.Errorf("the store holds %v, want the one temporary file", got)
	}
}

// A Discard deferred past a successful Commit removes nothing: by then the
// temporary name may belong to another upload.
func TestDiscardAfterCommit(t *testing.T) {
	s, dir := mustOpen(t)
	p := mustWrite(t, s, random(9, 100))
	temp := tree(t, dir)
	if len(temp) != 1 {
		t.Fatalf("Write left %v, want one temporary file", temp)
	}
	if err := s.Commit(p, id1); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, temp[0])
	if err := os.WriteFile(other, []byte("another upload"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Discard(p)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("Discard after Commit removed %s: %v", temp[0], err)
	}
	if got := readAll(t, s, id1); !bytes.Equal(got, random(9, 100)) {
		t.Errorf("committed content changed")
	}
}

// TestDirectoryEntriesSynced: every directory entry a stored file depends
// on is synced once it is made: the store's own directories at start, a new
// shard directory's entry in the store when it is made, the file's entry in
// its shard at every commit. A shard that exists costs no second sync of
// the store's directory.
func TestDirectoryEntriesSynced(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	dir := filepath.Join(root, "files")
	var synced []string
	s, err := filestore.OpenCounting(dir, func(d string) error {
		rel, _ := filepath.Rel(root, d)
		synced = append(synced, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"..", ".", "files", ".", "files"}
	if !slices.Equal(synced, want) {
		t.Errorf("synced at the first start: %v, want %v (the parents of the new data, files and tmp, then the data dir and files)", synced, want)
	}
	for _, step := range []struct {
		id   string
		want []string
	}{
		{"cfirst0000000001", []string{"files", "files/01"}},
		{"csecond000000001", []string{"files/01"}},
		{"cthird0000000002", []string{"files", "files/02"}},
	} {
		synced = nil
		if err := s.Commit(mustWrite(t, s, []byte(step.id)), step.id); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(synced, step.want) {
			t.Errorf("synced committing %s: %v, want %v", step.id, synced, step.want)
		}
	}
	synced = nil
	if _, err := filestore.OpenCounting(dir, func(d string) error {
		rel, _ := filepath.Rel(root, d)
		synced = append(synced, filepath.ToSlash(rel))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "files"}; !slices.Equal(synced, want) {
		t.Errorf("synced at a later start: %v, want %v", synced, want)
	}
}

// BenchmarkWriteAndCommit4KiB stores small files as uploads do, written,
// synced and put in place, spread over every shard: what an upload pays on
// the disk beside its row.
func BenchmarkWriteAndCommit4KiB(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	content := random(1, 4<<10)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p, err := s.Write(bytes.NewReader(content), int64(len(content)))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(p, fmt.Sprintf("cbench%010d", i)); err != nil {
			b.Fatal(err)
		}
	}
}
