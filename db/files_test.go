package db_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"acctapi/db"
)

// flFixture is a store with two clients of one firm and a client of another
// firm, each with a workspace, and a second workspace of client A.
type flFixture struct {
	d                        *db.DB
	clock                    *clock
	a, b, other              string // client ids
	wsA, wsA2, wsB, wsOther  string
	taskA, taskA2, taskB     string
	folderA, folderA2, fldB  string
	labelA1, labelA2, labelB string
	labelA2ws                string // a label of wsA2
}

func newFLFixture(t *testing.T) *flFixture {
	t.Helper()
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm")
	otherFirm := mustCreateFirm(t, d, "Other firm")
	f := &flFixture{d: d, clock: c}
	f.a = mustCreateClient(t, d, firm.ID, "A").ID
	f.b = mustCreateClient(t, d, firm.ID, "B").ID
	f.other = mustCreateClient(t, d, otherFirm.ID, "Other").ID
	f.wsA = mustCreateWorkspace(t, d, f.a, "A")
	f.wsA2 = mustCreateWorkspace(t, d, f.a, "A2")
	f.wsB = mustCreateWorkspace(t, d, f.b, "B")
	f.wsOther = mustCreateWorkspace(t, d, f.other, "Other")
	f.taskA = mustCreateTask(t, d, f.a, db.TaskCreate{WorkspaceID: f.wsA, Title: "a"}).ID
	f.taskA2 = mustCreateTask(t, d, f.a, db.TaskCreate{WorkspaceID: f.wsA2, Title: "a2"}).ID
	f.taskB = mustCreateTask(t, d, f.b, db.TaskCreate{WorkspaceID: f.wsB, Title: "b"}).ID
	f.folderA = mustCreateFolder(t, d, f.a, f.wsA, "a")
	f.folderA2 = mustCreateFolder(t, d, f.a, f.wsA2, "a2")
	f.fldB = mustCreateFolder(t, d, f.b, f.wsB, "b")
	label := func(clientID, workspaceID, name string) string {
		l, err := d.CreateLabel(ctx, clientID, workspaceID, name)
		if err != nil {
			t.Fatalf("CreateLabel: %v", err)
		}
		return l.ID
	}
	f.labelA1 = label(f.a, f.wsA, "one")
	f.labelA2 = label(f.a, f.wsA, "two")
	f.labelA2ws = label(f.a, f.wsA2, "elsewhere")
	f.labelB = label(f.b, f.wsB, "b")
	return f
}

func (f *flFixture) fileCount(t *testing.T) int {
	t.Helper()
	return count(t, mustOpenRaw(t, f.d.Path()), `SELECT count(*) FROM files`)
}

func flSum(s string) []byte { return hash(s) }

func TestCreateFile(t *testing.T) {
	ctx := context.Background()
	f := newFLFixture(t)
	now := f.clock.Now().UTC().Truncate(time.Second)
	doc := time.Date(2026, 1, 15, 10, 30, 15, 999_000_000, time.FixedZone("CET", 3600))
	labels := []string{f.labelA1, f.labelA2}
	slices.Sort(labels)
	in := db.FileCreate{
		ID: db.NewID(), WorkspaceID: f.wsA, TaskID: &f.taskA, FolderID: &f.folderA, LabelIDs: labels,
		Name: "../Müller \"Beleg\".pdf", MimeType: "application/pdf", Size: 1234, SHA256: flSum("content"), DocumentDate: &doc,
	}
	created, err := f.d.CreateFile(ctx, f.a, in)
	if err != nil {
		t.Fatalf("CreateFile: %v", err)
	}
	want := &db.File{
		ID: in.ID, ClientID: f.a, WorkspaceID: f.wsA, TaskID: &f.taskA, FolderID: &f.folderA, CreatedByID: nil,
		Name: in.Name, MimeType: "application/pdf", Size: 1234, SHA256: flSum("content"),
		DocumentDate: time.Date(2026, 1, 15, 9, 30, 15, 0, time.UTC), CreatedAt: now, UpdatedAt: now, LabelIDs: labels,
	}
	flWantFile(t, "CreateFile", created, want)
	found, err := f.d.FindFile(ctx, f.a, in.ID)
	if err != nil {
		t.Fatalf("FindFile: %v", err)
	}
	flWantFile(t, "FindFile", found, want)
	found, err = f.d.FindFileForDownload(ctx, in.ID)
	if err != nil {
		t.Fatalf("FindFileForDownload: %v", err)
	}
	flWantFile(t, "FindFileForDownload", found, want)

	t.Run("defaults", func(t *testing.T) {
		f.clock.Advance(90 * time.Second)
		now := f.clock.Now().UTC().Truncate(time.Second)
		id := db.NewID()
		created, err := f.d.CreateFile(ctx, f.a, db.FileCreate{ID: id, WorkspaceID: f.wsA, Name: "a", MimeType: "text/plain", SHA256: flSum("")})
		if err != nil {
			t.Fatal(err)
		}
		want := &db.File{ID: id, ClientID: f.a, WorkspaceID: f.wsA, Name: "a", MimeType: "text/plain", SHA256: flSum(""),
			DocumentDate: now, CreatedAt: now, UpdatedAt: now, LabelIDs: []string{}}
		flWantFile(t, "CreateFile", created, want)
		found, err := f.d.FindFile(ctx, f.a, id)
		if err != nil {
			t.Fatal(err)
		}
		flWantFile(t, "FindFile", found, want)
		if found.LabelIDs == nil {
			t.Errorf("FindFile: LabelIDs is nil, want an empty slice")
		}
	})
}

// flWantFile compares two files field by field.
func flWantFile(t *testing.T, what string, got, want *db.File) {
	t.Helper()
	if got.ID != want.ID || got.ClientID != want.ClientID || got.WorkspaceID != want.WorkspaceID ||
		strp(got.TaskID) != strp(want.TaskID) || strp(got.FolderID) != strp(want.FolderID) ||
		strp(got.CreatedByID) != strp(want.CreatedByID) || got.Name != want.Name || got.MimeType != want.MimeType ||
		got.Size != want.Size || !bytes.Equal(got.SHA256, want.SHA256) || !got.DocumentDate.Equal(want.DocumentDate) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) ||
		!reflect.DeepEqual(append([]string{}, got.LabelIDs...), append([]string{}, want.LabelIDs...)) {
		t.Errorf("%s:\n got %+v (task %s, folder %s)\nwant %+v (task %s, folder %s)", what,
			*got, strp(got.TaskID), strp(got.FolderID), *want, strp(want.TaskID), strp(want.FolderID))
	}
	if got.DocumentDate.Location() != time.UTC || got.CreatedAt.Location() != time.UTC {
		t.Errorf("%s: times not in UTC: %v, %v", what, got.DocumentDate, got.CreatedAt)
	}
}

// TestCreateFileMatchesFindFile: the record CreateFile returns is the one
// FindFile reads. Regression test: up to 29a4a03, CreateFile kept the order
// (and the duplicates) of in.LabelIDs, while findFile reads the labels ORDER
// BY label_id from file_labels, where INSERT OR IGNORE dropped duplicates;
// POST /v1/files thus answered labelIds in another order than GET (fixed in
// e4c241f: f.LabelIDs sorted and compacted).
func TestCreateFileMatchesFindFile(t *testing.T) {
	ctx := context.Background()
	f := newFLFixture(t)
	labels := []string{f.labelA1, f.labelA2}
	slices.Sort(labels)
	id := db.NewID()
	created, err := f.d.CreateFile(ctx, f.a, db.FileCreate{ID: id, WorkspaceID: f.wsA, Name: "a", MimeType: "text/plain",
		SHA256: flSum("a"), LabelIDs: []string{labels[1], labels[0], labels[1]}})
	if err != nil {
		t.Fatal(err)
	}
	found, err := f.d.FindFile(ctx, f.a, id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found.LabelIDs, labels) {
		t.Errorf("FindFile labels: got %v, want %v", found.LabelIDs, labels)
	}
	if !slices.Equal(created.LabelIDs, found.LabelIDs) {
		t.Errorf("CreateFile returned labels %v, FindFile reads %v",
			created.LabelIDs, found.LabelIDs)
	}
}

func TestCreateFileReferences(t *testing.T) {
	ctx := context.Background()
	f := newFLFixture(t)
	const missing = "cmissingmissingmissing0001"
	for _, tc := range []struct {
		name     string
		clientID string
		in       db.FileCreate
		path     []any
	}{
		{"unknown workspace", f.a, db.FileCreate{WorkspaceID: missing}, []any{"WorkspaceID"}},
		{"workspace of another client", f.a, db.FileCreate{WorkspaceID: f.wsB}, []any{"WorkspaceID"}},
		{"workspace of another firm's client", f.a, db.FileCreate{WorkspaceID: f.wsOther}, []any{"WorkspaceID"}},
		{"own workspace, as another client", f.b, db.FileCreate{WorkspaceID: f.wsA}, []any{"WorkspaceID"}},
		{"unknown task", f.a, db.FileCreate{WorkspaceID: f.wsA, TaskID: ptr(missing)}, []any{"TaskID"}},
		{"task of another workspace", f.a, db.FileCreate{WorkspaceID: f.wsA, TaskID: &f.taskA2}, []any{"TaskID"}},
		{"task of another client", f.a, db.FileCreate{WorkspaceID: f.wsA, TaskID: &f.taskB}, []any{"TaskID"}},
		{"unknown folder", f.a, db.FileCreate{WorkspaceID: f.wsA, FolderID: ptr(missing)}, []any{"FolderID"}},
		{"folder of another workspace", f.a, db.FileCreate{WorkspaceID: f.wsA, FolderID: &f.folderA2}, []any{"FolderID"}},
		{"folder of another client", f.a, db.FileCreate{WorkspaceID: f.wsA, FolderID: &f.fldB}, []any{"FolderID"}},
		{"unknown label", f.a, db.FileCreate{WorkspaceID: f.wsA, LabelIDs: []string{missing}}, []any{"LabelIDs", 0}},
		{"label of another workspace", f.a, db.FileCreate{WorkspaceID: f.wsA, LabelIDs: []string{f.labelA1, f.labelA2ws}}, []any{"LabelIDs", 1}},
		{"label of another client", f.a, db.FileCreate{WorkspaceID: f.wsA, LabelIDs: []string{f.labelA1, f.labelA2, f.labelB}}, []any{"LabelIDs", 2}},
		{"the first bad reference is named", f.a, db.FileCreate{WorkspaceID: f.wsA, TaskID: &f.taskB, FolderID: &f.fldB, LabelIDs: []string{f.labelB}}, []any{"TaskID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.ID, in.Name, in.MimeType, in.SHA256 = db.NewID(), "x.pdf", "application/pdf", flSum("x")
			got, err := f.d.CreateFile(ctx, tc.clientID, in)
			if got != nil {
				t.Errorf("CreateFile returned a file: %+v", *got)
			}
			assertError(t, err, db.ENOTFOUND, tc.path...)
			if n := f.fileCount(t); n != 0 {
				t.Errorf("files: got %d, want 0", n)
			}
			if n := count(t, mustOpenRaw(t, f.d.Path()), `SELECT count(*) FROM file_labels`); n != 0 {
				t.Errorf("file labels: got %d, want 0", n)
			}
		})
	}
}

func TestFindFileScoping(t *testing.T) {
	ctx := context.Background()
	f := newFLFixture(t)
	id := db.NewID()
	if _, err := f.d.CreateFile(ctx, f.b, db.FileCreate{ID: id, WorkspaceID: f.wsB, Name: "b", MimeType: "text/plain", SHA256: flSum("b")}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.d.FindFile(ctx, f.b, id); err != nil || got.ID != id || got.ClientID != f.b {
		t.Fatalf("FindFile by its client: got %v, %v", got, err)
	}
	for _, clientID := range []string{f.a, f.other, "cmissingmissingmissing0002"} {
		got, err := f.d.FindFile(ctx, clientID, id)
		if got != nil {
			t.Errorf("FindFile by client %s returned %+v", clientID, *got)
		}
		assertCode(t, err, db.ENOTFOUND)
	}
	// The download finds any client's file: the signature was its credential.
	if got, err := f.d.FindFileForDownload(ctx, id); err != nil || got.ID != id || got.ClientID != f.b {
		t.Errorf("FindFileForDownload: got %v, %v", got, err)
	}
	_, err := f.d.FindFileForDownload(ctx, "cmissingmissingmissing0003")
	assertCode(t, err, db.ENOTFOUND)
	_, err = f.d.FindFile(ctx, f.b, "cmissingmissingmissing0003")
	assertCode(t, err, db.ENOTFOUND)

	t.Run("a deleted task leaves the file", func(t *testing.T) {
		id := db.NewID()
		if _, err := f.d.CreateFile(ctx, f.a, db.FileCreate{ID: id, WorkspaceID: f.wsA, TaskID: &f.taskA, Name: "a",
			MimeType: "text/plain", SHA256: flSum("a")}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.d.DeleteTask(ctx, f.a, f.taskA); err != nil {
			t.Fatal(err)
		}
		got, err := f.d.FindFile(ctx, f.a, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.TaskID != nil {
			t.Errorf("taskId: got %s, want nil", *got.TaskID)
		}
	})
}

func TestKnownFileIDs(t *testing.T) {
	ctx := context.Background()
	f := newFLFixture(t)
	raw := mustOpenRaw(t, f.d.Path())
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var known, unknown []string
	for i := range 1300 {
		id := fmt.Sprintf("cknown%019d", i)
		if i%3 == 0 {
			unknown = append(unknown, id)
			continue
		}
		known = append(known, id)
		if _, err := tx.Exec(`INSERT INTO files (id, client_id, workspace_id, name, mimetype, size, sha256, document_date, created_at, updated_at)
			VALUES (?, ?, ?, 'f', 'text/plain', 0, x'00', 0, 0, 0)`, id, f.a, f.wsA); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(known), unknown...)
	// Interleave known and unknown ids across batch borders.
	slices.SortFunc(all, func(a, b string) int { return -bytes.Compare([]byte(a), []byte(b)) })

	for _, n := range []int{0, 1, 499, 500, 501, 1000, 1001, len(all)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ids := all[:n]
			got, err := f.d.KnownFileIDs(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, id := range ids {
				if slices.Contains(known, id) {
					want[id] = true
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%d ids: got %d known, want %d", n, len(got), len(want))
			}
		})
	}
	t.Run("duplicates and files of every client", func(t *testing.T) {
		id := db.NewID()
		if _, err := f.d.CreateFile(ctx, f.other, db.FileCreate{ID: id, WorkspaceID: f.wsOther, Name: "o", MimeType: "text/plain", SHA256: flSum("o")}); err != nil {
			t.Fatal(err)
		}
		got, err := f.d.KnownFileIDs(ctx, []string{id, id, unknown[0], known[0], "../x"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]bool{id: true, known[0]: true}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
}

func TestLinkSigningSecrets(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	raw := mustOpenRaw(t, d.Path())
	s1, s2, s3, s4 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32)
	want := func(t *testing.T, current, previous []byte) {
		t.Helper()
		c, p, err := d.LinkSigningSecrets(ctx)
		if err != nil {
			t.Fatalf("LinkSigningSecrets: %v", err)
		}
		if !bytes.Equal(c, current) || !bytes.Equal(p, previous) || (previous == nil) != (p == nil) {
			t.Errorf("secrets: got current %x, previous %x; want %x, %x", c, p, current, previous)
		}
	}

	_, _, err := d.LinkSigningSecrets(ctx)
	assertCode(t, err, db.ENOTFOUND)
	assertCode(t, d.RotateLinkSigningSecret(ctx, s1), db.ENOTFOUND)
	if n := count(t, raw, `SELECT count(*) FROM settings`); n != 0 {
		t.Errorf("a rotation before the first secret wrote %d settings", n)
	}
	_, _, err = d.LinkSigningSecrets(ctx)
	assertCode(t, err, db.ENOTFOUND)

	if err := d.InitLinkSigningSecret(ctx, s1); err != nil {
		t.Fatal(err)
	}
	want(t, s1, nil)
	if err := d.InitLinkSigningSecret(ctx, s2); err != nil {
		t.Fatalf("a second InitLinkSigningSecret: %v", err)
	}
	want(t, s1, nil) // kept: a restart does not break links

	if err := d.RotateLinkSigningSecret(ctx, s2); err != nil {
		t.Fatal(err)
	}
	want(t, s2, s1)
	if err := d.InitLinkSigningSecret(ctx, s4); err != nil {
		t.Fatal(err)
	}
	want(t, s2, s1)
	if err := d.RotateLinkSigningSecret(ctx, s3); err != nil {
		t.Fatal(err)
	}
	want(t, s3, s2)
	if n := count(t, raw, `SELECT count(*) FROM settings WHERE name LIKE 'link_signing_secret%'`); n != 2 {
		t.Errorf("settings rows for the secrets: got %d, want 2", n)
	}
}
