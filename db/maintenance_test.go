package db_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acctapi/db"
)

func TestBackup(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	firm := mustCreateFirm(t, d, "Backed Up GmbH")

	t.Run("new path", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "backup.db")
		if err := d.Backup(ctx, dest); err != nil {
			t.Fatalf("Backup: got %v, want nil", err)
		}
		b := mustOpenEmptyDB(t, dest, db.Options{})
		if err := b.CheckSchema(ctx); err != nil {
			t.Errorf("CheckSchema of the backup: got %v, want nil", err)
		}
		got, err := b.DeploymentFirm(ctx)
		if err != nil {
			t.Fatalf("DeploymentFirm of the backup: got %v, want nil", err)
		}
		if got.ID != firm.ID || got.Name != firm.Name || !got.CreatedAt.Equal(firm.CreatedAt) {
			t.Errorf("firm in the backup: got %+v, want %+v", got, firm)
		}
	})

	t.Run("existing path", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "backup.db")
		content := []byte("not to be overwritten")
		if err := os.WriteFile(dest, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := d.Backup(ctx, dest); err == nil {
			t.Errorf("Backup to an existing file: got nil, want an error")
		}
		if got, _ := os.ReadFile(dest); !bytes.Equal(got, content) {
			t.Errorf("existing file after Backup: got %q, want %q", got, content)
		}
	})
}

func TestFileDigests(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	firm := mustCreateFirm(t, d, "Digest GmbH")
	client := mustCreateClient(t, d, firm.ID, "Client")
	ws := mustCreateWorkspace(t, d, client.ID, "Documents")
	var want []db.FileDigest
	for i, content := range []string{"", "one", "the third file"} {
		sum := sha256.Sum256([]byte(content))
		f, err := d.CreateFile(ctx, client.ID, db.FileCreate{ID: db.NewID(), WorkspaceID: ws,
			Name: "f", MimeType: "text/plain", Size: int64(len(content)), SHA256: sum[:]})
		if err != nil {
			t.Fatalf("CreateFile %d: %v", i, err)
		}
		want = append(want, db.FileDigest{ID: f.ID, Size: f.Size, SHA256: sum[:]})
	}
	slices.SortFunc(want, func(a, b db.FileDigest) int { return bytes.Compare([]byte(a.ID), []byte(b.ID)) })

	var got []db.FileDigest
	if err := d.FileDigests(ctx, func(f db.FileDigest) error { got = append(got, f); return nil }); err != nil {
		t.Fatalf("FileDigests: got %v, want nil", err)
	}
	if !slices.EqualFunc(got, want, func(a, b db.FileDigest) bool {
		return a.ID == b.ID && a.Size == b.Size && bytes.Equal(a.SHA256, b.SHA256)
	}) {
		t.Errorf("FileDigests: got %+v, want %+v", got, want)
	}

	stop := errors.New("stop")
	calls := 0
	err := d.FileDigests(ctx, func(db.FileDigest) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("FileDigests with fn failing: got %v after %d calls, want fn's error after 1", err, calls)
	}
}

func TestInUse(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	path := d.Path()
	if inUse, err := db.InUse(ctx, path); err != nil || !inUse {
		t.Errorf("InUse of an open store: got %v, %v, want true, nil", inUse, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if inUse, err := db.InUse(ctx, path); err != nil || inUse {
		t.Errorf("InUse of a closed store: got %v, %v, want false, nil", inUse, err)
	}
	// The check itself leaves nothing open: the store opens and writes again.
	d = mustOpenEmptyDB(t, path, db.Options{})
	mustCreateFirm(t, d, "After the check")
}

func TestCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	store := mustOpenDB(t)
	if err := store.Check(ctx); err != nil {
		t.Fatalf("Check on a new store: %v", err)
	}
	write, _ := store.Handles()
	if _, err := write.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		t.Fatal(err)
	}
	if _, err := write.ExecContext(ctx, `INSERT INTO clients (id, firm_id, name, slug, type, created_at, updated_at)
		VALUES ('corphan', 'cnofirm', 'Orphan', 'orphan', 'legal_person', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := store.Check(ctx); err == nil || !strings.Contains(err.Error(), "foreign key") {
		t.Fatalf("Check with a client of no firm = %v, want a foreign key problem", err)
	}
}

// TestDirectoryEntriesSynced: the database's directory is synced at every
// open, since SQLite syncs the database and its -wal but not their names,
// and a backup copy's directory once the copy is written.
func TestDirectoryEntriesSynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "acct.db")
	var synced []string
	d, err := db.OpenCounting(path, db.Options{}, func(d string) error {
		synced = append(synced, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if want := []string{dir}; !slices.Equal(synced, want) {
		t.Fatalf("synced opening a new database: %v, want %v", synced, want)
	}
	for _, name := range []string{"acct.db", "acct.db-wal"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s after Open: %v, want it made before the directory was synced", name, err)
		}
	}
	if err := d.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	copies := filepath.Join(t.TempDir(), "copies")
	if err := os.Mkdir(copies, 0o750); err != nil {
		t.Fatal(err)
	}
	synced = nil
	if err := d.Backup(context.Background(), filepath.Join(copies, "copy.db")); err != nil {
		t.Fatal(err)
	}
	if want := []string{copies}; !slices.Equal(synced, want) {
		t.Errorf("synced by Backup: %v, want %v", synced, want)
	}
}
