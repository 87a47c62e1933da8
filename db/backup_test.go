package db_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	"acctapi/db"
)

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
