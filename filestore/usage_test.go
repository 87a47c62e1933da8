package filestore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"acctapi/filestore"
)

func TestUsage(t *testing.T) {
	s, _ := mustOpen(t)
	usage := func() (int, int64) {
		t.Helper()
		files, bytes, err := s.Usage()
		if err != nil {
			t.Fatal(err)
		}
		return files, bytes
	}
	if files, bytes := usage(); files != 0 || bytes != 0 {
		t.Fatalf("empty store: got %d files, %d bytes, want none", files, bytes)
	}
	var want int64
	for i := range 5 {
		content := random(byte(i), 1000*(i+1))
		mustCommit(t, s, content, fmt.Sprintf("cfilefilefilefilefile%04d", i))
		want += int64(len(content))
	}
	// An upload in progress is not stored yet.
	mustWrite(t, s, random(9, 4096))
	if files, bytes := usage(); files != 5 || bytes != want {
		t.Errorf("after five files: got %d files, %d bytes, want 5, %d", files, bytes, want)
	}
	if err := s.Remove("cfilefilefilefilefile0004"); err != nil {
		t.Fatal(err)
	}
	if files, bytes := usage(); files != 4 || bytes != want-5000 {
		t.Errorf("after a removal: got %d files, %d bytes, want 4, %d", files, bytes, want-5000)
	}
}

// BenchmarkUsage walks a store of 10,000 files, as a scrape of the metrics
// does (go test ./filestore -run '^$' -bench Usage -benchtime 20x).
func BenchmarkUsage(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "files")
	s, err := filestore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	// The files are written in the store's layout directly: committing
	// 10,000 uploads would sync each.
	const n = 10000
	for i := range n {
		id := fmt.Sprintf("cbenchbenchbenchbench%04d", i)
		shard := filepath.Join(dir, id[len(id)-2:])
		if err := os.MkdirAll(shard, 0o750); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shard, id), random(1, 100), 0o640); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if files, _, err := s.Usage(); err != nil || files != n {
			b.Fatalf("Usage: %d files, %v, want %d", files, err, n)
		}
	}
}
