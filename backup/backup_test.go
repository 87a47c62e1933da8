package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acctapi/db"
	"acctapi/durable"
	"acctapi/filestore"
)

// mustOpenStore opens a file store in a new temp dir.
func mustOpenStore(tb testing.TB) (*filestore.Store, string) {
	tb.Helper()
	dir := tb.TempDir()
	s, err := filestore.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s, dir
}

// TestCopyStoredFile checks that bytes matching their row are copied and
// that bytes which do not match, or are missing, leave nothing in the
// destination store.
func TestCopyStoredFile(t *testing.T) {
	content := []byte("the stored bytes")
	sum := sha256.Sum256(content)
	src, _ := mustOpenStore(t)
	id := db.NewID()
	p, err := src.Write(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Commit(p, id); err != nil {
		t.Fatal(err)
	}
	other := sha256.Sum256([]byte("other bytes"))

	t.Run("match", func(t *testing.T) {
		dst, _ := mustOpenStore(t)
		if err := migrateFile(context.Background(), src, dst, db.FileDigest{ID: id, Size: int64(len(content)), SHA256: sum[:]}); err != nil {
			t.Fatalf("migrateFile: got %v, want nil", err)
		}
		f, err := dst.OpenFile(id)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if got, err := io.ReadAll(f); err != nil || !bytes.Equal(got, content) {
			t.Errorf("the copy: got %q, %v, want %q", got, err, content)
		}
	})

	refused := []struct {
		name, want string
		row        db.FileDigest
	}{
		{"other sha256", "do not match its row", db.FileDigest{ID: id, Size: int64(len(content)), SHA256: other[:]}},
		{"longer than its row", "are longer than the 4 bytes its row records", db.FileDigest{ID: id, Size: 4, SHA256: sum[:]}},
		{"shorter than its row", "do not match its row", db.FileDigest{ID: id, Size: 100, SHA256: sum[:]}},
		{"missing", "the bytes of file", db.FileDigest{ID: db.NewID(), Size: 1, SHA256: sum[:]}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			dst, dir := mustOpenStore(t)
			err := migrateFile(context.Background(), src, dst, c.row)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("migrateFile: got %v, want an error naming %q", err, c.want)
			}
			if f, err := dst.OpenFile(c.row.ID); err == nil {
				f.Close()
				t.Errorf("the refused bytes are in the destination store")
			}
			if tmp, err := os.ReadDir(filepath.Join(dir, "tmp")); err != nil || len(tmp) != 0 {
				t.Errorf("the destination's tmp holds %v, %v, want nothing", tmp, err)
			}
		})
	}
}

// TestNewParentsSynced: a backup or restore into a directory whose parents
// do not exist yet makes them, and syncs the parent of each it made, then
// the directory that takes the renamed result.
func TestNewParentsSynced(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "a", "b", "out")
	var synced []string
	dirs := durable.Syncer{Sync: func(d string) error {
		synced = append(synced, d)
		return nil
	}}
	tmp, err := tempDirBeside(dirs, out, "partial")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{root, filepath.Join(root, "a")}; !slices.Equal(synced, want) {
		t.Errorf("synced making the parents: %v, want %v", synced, want)
	}
	synced = nil
	if err := moveInto(dirs, tmp, out, false); err != nil {
		t.Fatal(err)
	}
	if want := []string{tmp, filepath.Join(root, "a", "b")}; !slices.Equal(synced, want) {
		t.Errorf("synced moving into place: %v, want %v", synced, want)
	}
}
