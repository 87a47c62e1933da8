package db_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/db"
)

// collectFixture is a firm with a client and a workspace to ask documents in.
type collectFixture struct {
	store  *db.DB
	clock  *clock
	firm   *db.Firm
	client *db.Client
	ws     string
	folder string
}

func newCollectFixture(t *testing.T) *collectFixture {
	t.Helper()
	c := newClock()
	store := mustOpenDBWith(t, db.Options{Now: c.Now, EncodeEvent: encodeEvent})
	firm := mustCreateFirm(t, store, "Kanzlei Muster")
	client := mustCreateClient(t, store, firm.ID, "Bäckerei Schmidt")
	ws := mustCreateWorkspace(t, store, client.ID, "Books")
	return &collectFixture{store: store, clock: c, firm: firm, client: client, ws: ws,
		folder: mustCreateFolder(t, store, client.ID, ws, "Bank")}
}

// mustCreateCollect creates a collect in the fixture's workspace with the
// items named, all required.
func (f *collectFixture) mustCreateCollect(t *testing.T, title string, items ...string) *db.Collect {
	t.Helper()
	in := db.CollectCreate{WorkspaceID: f.ws, Title: title}
	for _, it := range items {
		in.Items = append(in.Items, db.CollectItemCreate{Title: it, Required: true})
	}
	c, err := f.store.CreateCollect(context.Background(), f.client.ID, in)
	if err != nil {
		t.Fatalf("CreateCollect(%q): got %v, want nil", title, err)
	}
	return c
}

// mustCreateSession creates a session of the collect valid for an hour and
// returns its token hash.
func (f *collectFixture) mustCreateSession(t *testing.T, collectID, token string) ([]byte, *db.CollectSession) {
	t.Helper()
	h := hash(token)
	s, err := f.store.CreateCollectSession(context.Background(), f.client.ID, collectID,
		db.CollectSessionCreate{TokenHash: h, ExpiresAt: f.clock.Now().Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateCollectSession: got %v, want nil", err)
	}
	return h, s
}

// upload records a file uploaded through the session to the item.
func (f *collectFixture) upload(token []byte, itemID, name string) (*db.File, error) {
	return f.store.ReceiveCollectFile(context.Background(), token, itemID, db.FileCreate{
		ID: db.NewID(), Name: name, MimeType: "application/pdf", Size: 3, SHA256: hash(name)}, db.DefaultCollectBudget)
}

func collectIDs(cs []*db.Collect) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

func itemTitles(c *db.Collect) []string {
	titles := make([]string, len(c.Items))
	for i, it := range c.Items {
		titles[i] = it.Title
	}
	return titles
}

// mustFindCollect reads the client's collect back.
func (f *collectFixture) mustFindCollect(t *testing.T, id string) *db.Collect {
	t.Helper()
	c, err := f.store.FindCollect(context.Background(), f.client.ID, id)
	if err != nil {
		t.Fatalf("FindCollect(%s): got %v, want nil", id, err)
	}
	return c
}

// eventTypes are the types of the events written so far, in order.
func eventTypes(t *testing.T, store *db.DB) []string {
	t.Helper()
	var types []string
	for _, e := range whEvents(t, store) {
		types = append(types, e.Type)
	}
	return types
}

// subscribe makes every event of the firm be written to the outbox.
func (f *collectFixture) subscribe(t *testing.T) {
	t.Helper()
	if _, err := f.store.CreateWebhook(context.Background(), f.firm.ID, db.WebhookCreate{URL: "https://hook.example/",
		Events: []string{"*"}, Secret: "whsec_collects"}); err != nil {
		t.Fatalf("CreateWebhook: got %v, want nil", err)
	}
}

func TestCreateCollect(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	raw := mustOpenRaw(t, f.store.Path())
	f.subscribe(t)
	task := mustCreateTask(t, f.store, f.client.ID, db.TaskCreate{WorkspaceID: f.ws, Title: "March books"})
	ws2 := mustCreateWorkspace(t, f.store, f.client.ID, "Payroll")
	folder2 := mustCreateFolder(t, f.store, f.client.ID, ws2, "Elsewhere")
	taskWS2 := mustCreateTask(t, f.store, f.client.ID, db.TaskCreate{WorkspaceID: ws2, Title: "Other"})

	t.Run("fields and defaults", func(t *testing.T) {
		f.clock.Advance(1500 * time.Millisecond)
		due := time.Date(2026, 3, 31, 23, 59, 59, 500, time.FixedZone("CET", 3600))
		message, description := "Please upload by the end of the month.", "All accounts"
		c, err := f.store.CreateCollect(ctx, f.client.ID, db.CollectCreate{
			WorkspaceID: f.ws, TaskID: &task.ID, Title: "Documents for March", Message: &message, DueDate: &due,
			Items: []db.CollectItemCreate{
				{Title: "Bank statement", Description: &description, Required: true, FolderID: &f.folder},
				{Title: "Receipts", Required: true},
				{Title: "Payroll", Required: false},
			},
		})
		if err != nil {
			t.Fatalf("CreateCollect: got %v, want nil", err)
		}
		want := time.Date(2026, 3, 1, 10, 0, 1, 0, time.UTC)
		for name, got := range map[string]*db.Collect{"returned": c, "stored": f.mustFindCollect(t, c.ID)} {
			if got.ClientID != f.client.ID || got.WorkspaceID != f.ws || strp(got.TaskID) != task.ID || got.Title != "Documents for March" ||
				strp(got.Message) != message || got.Status != db.CollectOpen || got.Locale != "en" || got.SubmittedAt != nil {
				t.Errorf("%s: got %+v, want the fields given, status OPEN, locale en", name, got)
			}
			if got.DueDate == nil || !got.DueDate.Equal(time.Date(2026, 3, 31, 22, 59, 59, 0, time.UTC)) || got.DueDate.Location() != time.UTC {
				t.Errorf("%s due date: got %v, want 2026-03-31T22:59:59Z", name, timep(got.DueDate))
			}
			if !got.CreatedAt.Equal(want) || !got.UpdatedAt.Equal(want) {
				t.Errorf("%s times: got %v/%v, want %v", name, got.CreatedAt, got.UpdatedAt, want)
			}
			if titles := itemTitles(got); !slices.Equal(titles, []string{"Bank statement", "Receipts", "Payroll"}) {
				t.Fatalf("%s items: got %v, want them in the order given", name, titles)
			}
			first := got.Items[0]
			if first.ID == "" || first.CollectID != c.ID || strp(first.Description) != description || !first.Required ||
				strp(first.FolderID) != f.folder || first.Status != db.ItemPending || first.RejectionReason != nil ||
				first.FileIDs == nil || len(first.FileIDs) != 0 {
				t.Errorf("%s first item: got %+v, want the fields given, PENDING, no files (an empty list)", name, first)
			}
			if got.Items[2].Required || got.Items[1].Description != nil || got.Items[1].FolderID != nil {
				t.Errorf("%s items: got %+v and %+v, want the second without description or folder, the third optional", name, got.Items[1], got.Items[2])
			}
		}
		if !reflect.DeepEqual(c, f.mustFindCollect(t, c.ID)) {
			t.Errorf("CreateCollect returned %+v, FindCollect %+v: want the same", c, f.mustFindCollect(t, c.ID))
		}
		de := f.mustCreateCollectIn(t, db.CollectCreate{WorkspaceID: f.ws, Title: "Unterlagen", Locale: "de",
			Items: []db.CollectItemCreate{{Title: "Kontoauszug"}}})
		if de.Locale != "de" || de.TaskID != nil || de.Message != nil || de.DueDate != nil {
			t.Errorf("German collect: got %+v, want locale de and no task, message or due date", de)
		}
		if got := eventTypes(t, f.store); !slices.Equal(got[len(got)-2:], []string{db.EventCollectCreated, db.EventCollectCreated}) {
			t.Errorf("events: got %v, want collect.created for each", got)
		}
	})

	t.Run("refused input", func(t *testing.T) {
		before := count(t, raw, `SELECT count(*) FROM collects`)
		items := []db.CollectItemCreate{{Title: "x"}}
		otherClient := mustCreateClient(t, f.store, f.firm.ID, "Other")
		otherWS := mustCreateWorkspace(t, f.store, otherClient.ID, "Theirs")
		for _, tt := range []struct {
			name  string
			in    db.CollectCreate
			code  string
			field []any
		}{
			{"workspace of another client", db.CollectCreate{WorkspaceID: otherWS, Title: "x", Items: items}, db.ENOTFOUND, []any{"WorkspaceID"}},
			{"no such workspace", db.CollectCreate{WorkspaceID: db.NewID(), Title: "x", Items: items}, db.ENOTFOUND, []any{"WorkspaceID"}},
			{"task of another workspace", db.CollectCreate{WorkspaceID: f.ws, TaskID: &taskWS2.ID, Title: "x", Items: items}, db.ENOTFOUND, []any{"TaskID"}},
			{"folder of another workspace", db.CollectCreate{WorkspaceID: f.ws, Title: "x", Items: []db.CollectItemCreate{
				{Title: "a", FolderID: &f.folder}, {Title: "b", FolderID: &folder2}}}, db.ENOTFOUND, []any{"Items", 1, "FolderID"}},
			{"locale", db.CollectCreate{WorkspaceID: f.ws, Title: "x", Locale: "fr", Items: items}, db.EINVALID, []any{"Locale"}},
			{"no items", db.CollectCreate{WorkspaceID: f.ws, Title: "x"}, db.EINVALID, []any{"Items"}},
			{"51 items", db.CollectCreate{WorkspaceID: f.ws, Title: "x", Items: make([]db.CollectItemCreate, 51)}, db.EINVALID, []any{"Items"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := f.store.CreateCollect(ctx, f.client.ID, tt.in)
				assertError(t, err, tt.code, tt.field...)
			})
		}
		if after := count(t, raw, `SELECT count(*) FROM collects`); after != before {
			t.Errorf("collects after refused creates: got %d, want %d", after, before)
		}
		if n := count(t, raw, `SELECT count(*) FROM collect_items WHERE collect_id NOT IN (SELECT id FROM collects)`); n != 0 {
			t.Errorf("items without a collect: got %d, want 0", n)
		}
		c := f.mustCreateCollectIn(t, db.CollectCreate{WorkspaceID: f.ws, Title: "fifty", Items: make([]db.CollectItemCreate, 50)})
		if len(c.Items) != 50 {
			t.Errorf("items of a collect of 50: got %d, want 50", len(c.Items))
		}
	})

	t.Run("a deleted task leaves the collect without one, as it does a file", func(t *testing.T) {
		gone := mustCreateTask(t, f.store, f.client.ID, db.TaskCreate{WorkspaceID: f.ws, Title: "to delete"})
		c := f.mustCreateCollectIn(t, db.CollectCreate{WorkspaceID: f.ws, TaskID: &gone.ID, Title: "with task", Items: []db.CollectItemCreate{{Title: "a"}}})
		fileID := mustCreateFile(t, f.store, f.client.ID, f.ws, &gone.ID, "f.pdf")
		if _, err := f.store.DeleteTask(ctx, f.client.ID, gone.ID); err != nil {
			t.Fatalf("DeleteTask: got %v, want nil", err)
		}
		got := f.mustFindCollect(t, c.ID)
		file, err := f.store.FindFile(ctx, f.client.ID, fileID)
		if err != nil {
			t.Fatalf("FindFile: got %v, want nil", err)
		}
		if got.TaskID != nil || file.TaskID != nil {
			t.Errorf("after deleting the task: collect task %v, file task %v, want both <nil>", strp(got.TaskID), strp(file.TaskID))
		}
		page, err := f.store.ListCollects(ctx, f.client.ID, db.CollectFilter{TaskID: gone.ID}, db.PageRequest{Limit: 10, Sort: "createdAt"})
		if err != nil || len(page.Items) != 0 {
			t.Errorf("collects of the deleted task: got %v (%v), want none", page, err)
		}
	})
}

func (f *collectFixture) mustCreateCollectIn(t *testing.T, in db.CollectCreate) *db.Collect {
	t.Helper()
	c, err := f.store.CreateCollect(context.Background(), f.client.ID, in)
	if err != nil {
		t.Fatalf("CreateCollect(%q): got %v, want nil", in.Title, err)
	}
	return c
}

func TestListCollects(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	ws2 := mustCreateWorkspace(t, f.store, f.client.ID, "Payroll")
	task := mustCreateTask(t, f.store, f.client.ID, db.TaskCreate{WorkspaceID: f.ws, Title: "Books"})
	other := mustCreateClient(t, f.store, f.firm.ID, "Other")
	otherWS := mustCreateWorkspace(t, f.store, other.ID, "Theirs")
	if _, err := f.store.CreateCollect(ctx, other.ID, db.CollectCreate{WorkspaceID: otherWS, Title: "theirs",
		Items: []db.CollectItemCreate{{Title: "x"}}}); err != nil {
		t.Fatal(err)
	}

	// Eleven collects a second apart, with titles, due dates (some none),
	// workspaces, tasks and statuses mixed.
	var all []*db.Collect
	for i := range 11 {
		f.clock.Advance(time.Second)
		in := db.CollectCreate{WorkspaceID: f.ws, Title: fmt.Sprintf("%c collect", 'k'-i), Items: []db.CollectItemCreate{{Title: "item"}, {Title: "second"}}}
		if i%3 != 0 {
			due := time.Date(2026, 4, 1+i%4, 0, 0, 0, 0, time.UTC)
			in.DueDate = &due
		}
		if i%2 == 1 {
			in.WorkspaceID = ws2
		}
		if i%4 == 0 {
			in.TaskID = &task.ID
		}
		all = append(all, f.mustCreateCollectIn(t, in))
	}
	closed := db.CollectClosed
	for _, i := range []int{2, 5} {
		f.clock.Advance(time.Second)
		c, err := f.store.UpdateCollect(ctx, f.client.ID, all[i].ID, db.CollectUpdate{Status: db.Update[string]{Set: true, Value: &closed}})
		if err != nil {
			t.Fatal(err)
		}
		all[i] = c
	}
	// A deleted collect is in no list; a cursor naming it still finds its place.
	deleted := all[7]
	if _, err := f.store.DeleteCollect(ctx, f.client.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	live := slices.DeleteFunc(slices.Clone(all), func(c *db.Collect) bool { return c.ID == deleted.ID })

	sortKeys := map[string]func(a, b *db.Collect) int{
		"createdAt": func(a, b *db.Collect) int { return a.CreatedAt.Compare(b.CreatedAt) },
		"updatedAt": func(a, b *db.Collect) int { return a.UpdatedAt.Compare(b.UpdatedAt) },
		"title":     func(a, b *db.Collect) int { return strings.Compare(strings.ToLower(a.Title), strings.ToLower(b.Title)) },
	}
	filters := map[string]struct {
		f    db.CollectFilter
		keep func(*db.Collect) bool
	}{
		"none":      {db.CollectFilter{}, func(*db.Collect) bool { return true }},
		"workspace": {db.CollectFilter{WorkspaceID: ws2}, func(c *db.Collect) bool { return c.WorkspaceID == ws2 }},
		"task":      {db.CollectFilter{TaskID: task.ID}, func(c *db.Collect) bool { return strp(c.TaskID) == task.ID }},
		"status":    {db.CollectFilter{Status: db.CollectClosed}, func(c *db.Collect) bool { return c.Status == db.CollectClosed }},
		"workspace and status": {db.CollectFilter{WorkspaceID: ws2, Status: db.CollectOpen},
			func(c *db.Collect) bool { return c.WorkspaceID == ws2 && c.Status == db.CollectOpen }},
	}
	if !slices.Equal(db.CollectSorts, []string{"createdAt", "updatedAt", "dueDate", "title"}) {
		t.Fatalf("CollectSorts: got %v", db.CollectSorts)
	}
	for _, sortKey := range db.CollectSorts {
		for _, desc := range []bool{false, true} {
			for name, filter := range filters {
				t.Run(fmt.Sprintf("%s desc=%v filter=%s", sortKey, desc, name), func(t *testing.T) {
					var want []*db.Collect
					for _, c := range live {
						if filter.keep(c) {
							want = append(want, c)
						}
					}
					slices.SortFunc(want, func(a, b *db.Collect) int {
						var n int
						if sortKey == "dueDate" {
							// No due date sorts last both ways.
							switch {
							case a.DueDate == nil && b.DueDate == nil:
							case a.DueDate == nil:
								return 1
							case b.DueDate == nil:
								return -1
							default:
								n = a.DueDate.Compare(*b.DueDate)
							}
						} else {
							n = sortKeys[sortKey](a, b)
						}
						n = cmp.Or(n, strings.Compare(a.ID, b.ID))
						if desc {
							n = -n
						}
						return n
					})
					var got []*db.Collect
					var cursor string
					var previous []string
					for {
						page, err := f.store.ListCollects(ctx, f.client.ID, filter.f, db.PageRequest{Limit: 3, Cursor: cursor, Sort: sortKey, Desc: desc})
						if err != nil {
							t.Fatalf("ListCollects: got %v, want nil", err)
						}
						if page.Total != len(want) {
							t.Errorf("total: got %d, want %d", page.Total, len(want))
						}
						if (page.PreviousCursor == nil) != (cursor == "") ||
							page.PreviousCursor != nil && len(previous) > 0 && *page.PreviousCursor != previous[len(previous)-1] {
							t.Errorf("previous cursor: got %v, want the first item of the previous page", strp(page.PreviousCursor))
						}
						if len(page.Items) > 0 {
							previous = append(previous, page.Items[0].ID)
						}
						got = append(got, page.Items...)
						if page.NextCursor == nil {
							break
						}
						cursor = *page.NextCursor
					}
					if !slices.Equal(collectIDs(got), collectIDs(want)) {
						t.Fatalf("order: got %v, want %v", collectIDs(got), collectIDs(want))
					}
					for i := range got {
						if !reflect.DeepEqual(got[i], want[i]) {
							t.Errorf("collect %s in the list: got %+v, want %+v (with its items)", got[i].ID, got[i], want[i])
						}
					}
				})
			}
		}
	}

	t.Run("cursor naming a deleted collect", func(t *testing.T) {
		page, err := f.store.ListCollects(ctx, f.client.ID, db.CollectFilter{}, db.PageRequest{Limit: 2, Cursor: deleted.ID, Sort: "createdAt"})
		if err != nil {
			t.Fatalf("ListCollects: got %v, want nil", err)
		}
		if want := []string{all[8].ID, all[9].ID}; !slices.Equal(collectIDs(page.Items), want) {
			t.Errorf("page from a deleted collect's cursor: got %v, want %v (the ones after it)", collectIDs(page.Items), want)
		}
	})

	t.Run("cursor of another client", func(t *testing.T) {
		theirs, err := f.store.ListCollects(ctx, other.ID, db.CollectFilter{}, db.PageRequest{Limit: 10, Sort: "createdAt"})
		if err != nil || len(theirs.Items) != 1 {
			t.Fatalf("other client's list: got %v (%v), want its one collect", theirs, err)
		}
		_, err = f.store.ListCollects(ctx, f.client.ID, db.CollectFilter{}, db.PageRequest{Limit: 2, Cursor: theirs.Items[0].ID, Sort: "createdAt"})
		assertError(t, err, db.EINVALIDCURSOR, "Cursor")
	})
}

func TestUpdateCollect(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	f.subscribe(t)
	c := f.mustCreateCollect(t, "March", "Bank statement")
	token, _ := f.mustCreateSession(t, c.ID, "token")
	if _, err := f.upload(token, c.Items[0].ID, "s.pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.SubmitCollect(ctx, token); err != nil {
		t.Fatal(err)
	}
	submitted := f.mustFindCollect(t, c.ID)
	if submitted.Status != db.CollectSubmitted || submitted.SubmittedAt == nil {
		t.Fatalf("after submit: got %+v, want SUBMITTED with submittedAt", submitted)
	}

	f.clock.Advance(time.Minute)
	due := time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC)
	u, err := f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Title: val("April"), Message: val("Thanks"),
		DueDate: val(due), Status: val(db.CollectClosed)})
	if err != nil {
		t.Fatalf("UpdateCollect: got %v, want nil", err)
	}
	if u.Title != "April" || strp(u.Message) != "Thanks" || !u.DueDate.Equal(due) || u.Status != db.CollectClosed ||
		u.SubmittedAt == nil || !u.UpdatedAt.Equal(f.clock.Now()) || !u.CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("UpdateCollect: got %+v, want the new fields, submittedAt kept, updatedAt now", u)
	}
	if !reflect.DeepEqual(u, f.mustFindCollect(t, c.ID)) {
		t.Errorf("stored: got %+v, want %+v", f.mustFindCollect(t, c.ID), u)
	}

	u, err = f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Message: null[string](), DueDate: null[time.Time](), Status: val(db.CollectOpen)})
	if err != nil {
		t.Fatalf("UpdateCollect: got %v, want nil", err)
	}
	if u.Message != nil || u.DueDate != nil || u.Status != db.CollectOpen || u.SubmittedAt != nil || u.Title != "April" {
		t.Errorf("reopened: got %+v, want message and due date cleared, OPEN, submittedAt cleared, title kept", u)
	}
	if !reflect.DeepEqual(u, f.mustFindCollect(t, c.ID)) {
		t.Errorf("stored: got %+v, want %+v", f.mustFindCollect(t, c.ID), u)
	}

	for _, tt := range []struct {
		name  string
		u     db.CollectUpdate
		field string
	}{
		{"null title", db.CollectUpdate{Title: null[string]()}, "Title"},
		{"null status", db.CollectUpdate{Status: null[string]()}, "Status"},
		{"submitted by hand", db.CollectUpdate{Status: val(db.CollectSubmitted)}, "Status"},
		{"unknown status", db.CollectUpdate{Status: val("DONE")}, "Status"},
	} {
		_, err := f.store.UpdateCollect(ctx, f.client.ID, c.ID, tt.u)
		assertError(t, err, db.EINVALID, tt.field)
	}
	if got := f.mustFindCollect(t, c.ID); !reflect.DeepEqual(got, u) {
		t.Errorf("after refused updates: got %+v, want %+v", got, u)
	}
	_, err = f.store.UpdateCollect(ctx, f.client.ID, db.NewID(), db.CollectUpdate{Title: val("x")})
	assertError(t, err, db.ENOTFOUND)

	var changes [][]string
	for _, e := range whEvents(t, f.store) {
		if e.Type == db.EventCollectUpdated {
			changes = append(changes, e.Changes)
		}
	}
	if want := [][]string{{"Title", "Message", "DueDate", "Status"}, {"Message", "DueDate", "Status"}}; !reflect.DeepEqual(changes, want) {
		t.Errorf("collect.updated changes: got %v, want %v", changes, want)
	}
}

func TestDeleteCollect(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	c := f.mustCreateCollect(t, "March", "Bank statement")
	token, s := f.mustCreateSession(t, c.ID, "token")
	file, err := f.upload(token, c.Items[0].ID, "s.pdf")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.store.DeleteCollect(ctx, f.client.ID, c.ID)
	if err != nil || got.ID != c.ID || len(got.Items) != 1 || !slices.Equal(got.Items[0].FileIDs, []string{file.ID}) {
		t.Fatalf("DeleteCollect: got %+v, %v, want the collect as it was", got, err)
	}
	_, err = f.store.FindCollect(ctx, f.client.ID, c.ID)
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.DeleteCollect(ctx, f.client.ID, c.ID)
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Title: val("x")})
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.AddCollectItem(ctx, f.client.ID, c.ID, db.CollectItemCreate{Title: "x"})
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, c.Items[0].ID, db.CollectItemUpdate{Title: val("x")})
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.CreateCollectSession(ctx, f.client.ID, c.ID, db.CollectSessionCreate{TokenHash: hash("another"), ExpiresAt: f.clock.Now().Add(time.Hour)})
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.ListCollectSessions(ctx, f.client.ID, c.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.RevokeCollectSession(ctx, f.client.ID, c.ID, s.ID)
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.OpenCollectSession(ctx, token)
	assertError(t, err, db.ENOTFOUND)
	_, err = f.upload(token, c.Items[0].ID, "late.pdf")
	assertError(t, err, db.ENOTFOUND)
	_, err = f.store.SubmitCollect(ctx, token)
	assertError(t, err, db.ENOTFOUND)
	if _, err := f.store.FindFile(ctx, f.client.ID, file.ID); err != nil {
		t.Errorf("the uploaded file after its collect was deleted: got %v, want it kept", err)
	}
}

func TestCollectItems(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	f.subscribe(t)
	c := f.mustCreateCollect(t, "March", "Bank statement", "Receipts")
	other := f.mustCreateCollect(t, "April", "Other item")
	ws2 := mustCreateWorkspace(t, f.store, f.client.ID, "Payroll")
	folder2 := mustCreateFolder(t, f.store, f.client.ID, ws2, "Elsewhere")

	t.Run("add", func(t *testing.T) {
		f.clock.Advance(time.Second)
		description := "Every page"
		got, err := f.store.AddCollectItem(ctx, f.client.ID, c.ID, db.CollectItemCreate{Title: "Payroll", Description: &description, FolderID: &f.folder})
		if err != nil {
			t.Fatalf("AddCollectItem: got %v, want nil", err)
		}
		if !slices.Equal(itemTitles(got), []string{"Bank statement", "Receipts", "Payroll"}) || !got.UpdatedAt.Equal(f.clock.Now()) {
			t.Fatalf("after adding: got items %v updated %v, want the new one last and updatedAt now", itemTitles(got), got.UpdatedAt)
		}
		added := got.Items[2]
		if added.Required || strp(added.Description) != description || strp(added.FolderID) != f.folder || added.Status != db.ItemPending {
			t.Errorf("added item: got %+v, want the fields given, PENDING", added)
		}
		if !reflect.DeepEqual(got, f.mustFindCollect(t, c.ID)) {
			t.Errorf("stored: got %+v, want %+v", f.mustFindCollect(t, c.ID), got)
		}
		_, err = f.store.AddCollectItem(ctx, f.client.ID, c.ID, db.CollectItemCreate{Title: "x", FolderID: &folder2})
		assertError(t, err, db.ENOTFOUND, "FolderID")
		for len(got.Items) < db.MaxCollectItems {
			if got, err = f.store.AddCollectItem(ctx, f.client.ID, other.ID, db.CollectItemCreate{Title: "more"}); err != nil {
				t.Fatalf("AddCollectItem: got %v, want nil", err)
			}
		}
		_, err = f.store.AddCollectItem(ctx, f.client.ID, other.ID, db.CollectItemCreate{Title: "one too many"})
		assertError(t, err, db.EINVALID, "Items")
		if n := len(f.mustFindCollect(t, other.ID).Items); n != db.MaxCollectItems {
			t.Errorf("items after the refused one: got %d, want %d", n, db.MaxCollectItems)
		}
	})

	t.Run("update", func(t *testing.T) {
		item := c.Items[1]
		f.clock.Advance(time.Second)
		got, err := f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, item.ID, db.CollectItemUpdate{
			Title: val("All receipts"), Description: val("Scans are fine"), Required: val(false), FolderID: val(f.folder)})
		if err != nil {
			t.Fatalf("UpdateCollectItem: got %v, want nil", err)
		}
		it := got.Items[1]
		if it.ID != item.ID || it.Title != "All receipts" || strp(it.Description) != "Scans are fine" || it.Required ||
			strp(it.FolderID) != f.folder || it.Status != db.ItemPending || !got.UpdatedAt.Equal(f.clock.Now()) {
			t.Errorf("updated item: got %+v (collect updated %v), want the new fields in place", it, got.UpdatedAt)
		}
		got, err = f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, item.ID, db.CollectItemUpdate{Description: null[string](), FolderID: null[string]()})
		if err != nil || got.Items[1].Description != nil || got.Items[1].FolderID != nil {
			t.Fatalf("clearing: got %+v, %v, want description and folder cleared", got.Items[1], err)
		}
		if !reflect.DeepEqual(got, f.mustFindCollect(t, c.ID)) {
			t.Errorf("stored: got %+v, want %+v", f.mustFindCollect(t, c.ID), got)
		}
	})

	t.Run("reject", func(t *testing.T) {
		item := c.Items[0]
		reason := "The statement is cut off"
		got, err := f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, item.ID, db.CollectItemUpdate{Status: val(db.ItemRejected), RejectionReason: val(reason)})
		if err != nil || got.Items[0].Status != db.ItemRejected || strp(got.Items[0].RejectionReason) != reason {
			t.Fatalf("rejecting: got %+v, %v, want REJECTED with the reason", got.Items[0], err)
		}
		got, err = f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, item.ID, db.CollectItemUpdate{RejectionReason: val("Page 2 is missing")})
		if err != nil || strp(got.Items[0].RejectionReason) != "Page 2 is missing" {
			t.Fatalf("changing the reason of a rejected item: got %+v, %v", got.Items[0], err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		before := f.mustFindCollect(t, c.ID)
		for _, tt := range []struct {
			name          string
			collect, item string
			u             db.CollectItemUpdate
			code          string
			field         []any
		}{
			{"null title", c.ID, c.Items[0].ID, db.CollectItemUpdate{Title: null[string]()}, db.EINVALID, []any{"Title"}},
			{"null required", c.ID, c.Items[0].ID, db.CollectItemUpdate{Required: null[bool]()}, db.EINVALID, []any{"Required"}},
			{"received by hand", c.ID, c.Items[0].ID, db.CollectItemUpdate{Status: val(db.ItemReceived)}, db.EINVALID, []any{"Status"}},
			{"pending by hand", c.ID, c.Items[0].ID, db.CollectItemUpdate{Status: val(db.ItemPending)}, db.EINVALID, []any{"Status"}},
			{"reason of an item not rejected", c.ID, c.Items[1].ID, db.CollectItemUpdate{RejectionReason: val("why")}, db.EINVALID, []any{"RejectionReason"}},
			{"folder of another workspace", c.ID, c.Items[0].ID, db.CollectItemUpdate{FolderID: val(folder2)}, db.ENOTFOUND, []any{"FolderID"}},
			{"item of another collect", c.ID, other.Items[0].ID, db.CollectItemUpdate{Title: val("x")}, db.ENOTFOUND, []any{"ItemID"}},
			{"no such item", c.ID, db.NewID(), db.CollectItemUpdate{Title: val("x")}, db.ENOTFOUND, []any{"ItemID"}},
			{"no such collect", db.NewID(), c.Items[0].ID, db.CollectItemUpdate{Title: val("x")}, db.ENOTFOUND, nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := f.store.UpdateCollectItem(ctx, f.client.ID, tt.collect, tt.item, tt.u)
				assertError(t, err, tt.code, tt.field...)
			})
		}
		if got := f.mustFindCollect(t, c.ID); !reflect.DeepEqual(got, before) {
			t.Errorf("after refused updates: got %+v, want %+v", got, before)
		}
	})
}

func TestCollectSessions(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	c := f.mustCreateCollect(t, "March", "Bank statement")
	label := "Anna's phone"
	var sessions []*db.CollectSession
	for i := range 5 {
		f.clock.Advance(time.Second)
		in := db.CollectSessionCreate{TokenHash: hash(fmt.Sprint("token ", i)), ExpiresAt: f.clock.Now().Add(14 * 24 * time.Hour).Add(300 * time.Millisecond)}
		if i == 0 {
			in.Label = &label
		}
		s, err := f.store.CreateCollectSession(ctx, f.client.ID, c.ID, in)
		if err != nil {
			t.Fatalf("CreateCollectSession: got %v, want nil", err)
		}
		sessions = append(sessions, s)
	}
	first := sessions[0]
	if first.CollectID != c.ID || first.ClientID != f.client.ID || strp(first.Label) != label || first.RevokedAt != nil || first.LastUsedAt != nil ||
		!first.ExpiresAt.Equal(first.CreatedAt.Add(14*24*time.Hour)) {
		t.Errorf("session: got %+v, want its collect, client, label, expiry 14 days on (whole seconds), never used", first)
	}
	_, err := f.store.CreateCollectSession(ctx, f.client.ID, c.ID, db.CollectSessionCreate{TokenHash: []byte("short"), ExpiresAt: f.clock.Now()})
	if err == nil {
		t.Errorf("a session with a 5-byte token hash: got nil, want an error")
	}

	var listed []*db.CollectSession
	cursor := ""
	for {
		page, err := f.store.ListCollectSessions(ctx, f.client.ID, c.ID, db.PageRequest{Limit: 2, Cursor: cursor, Sort: "createdAt", Desc: true})
		if err != nil {
			t.Fatalf("ListCollectSessions: got %v, want nil", err)
		}
		if page.Total != 5 {
			t.Errorf("total: got %d, want 5", page.Total)
		}
		listed = append(listed, page.Items...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	want := slices.Clone(sessions)
	slices.Reverse(want)
	if !reflect.DeepEqual(listed, want) {
		t.Errorf("sessions newest first: got %+v, want %+v", listed, want)
	}

	f.clock.Advance(time.Second)
	revoked, err := f.store.RevokeCollectSession(ctx, f.client.ID, c.ID, first.ID)
	if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(f.clock.Now()) {
		t.Fatalf("RevokeCollectSession: got %+v, %v, want revokedAt now", revoked, err)
	}
	f.clock.Advance(time.Second)
	again, err := f.store.RevokeCollectSession(ctx, f.client.ID, c.ID, first.ID)
	if err != nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Errorf("revoking again: got %+v, %v, want the first revocation kept", again, err)
	}
	_, err = f.store.OpenCollectSession(ctx, hash("token 0"))
	assertError(t, err, db.ENOTFOUND)
	if _, err := f.store.OpenCollectSession(ctx, hash("token 1")); err != nil {
		t.Errorf("another session of the collect: got %v, want it still open", err)
	}
	_, err = f.store.RevokeCollectSession(ctx, f.client.ID, c.ID, db.NewID())
	assertError(t, err, db.ENOTFOUND, "SessionID")
	otherCollect := f.mustCreateCollect(t, "April", "x")
	_, err = f.store.RevokeCollectSession(ctx, f.client.ID, otherCollect.ID, sessions[1].ID)
	assertError(t, err, db.ENOTFOUND, "SessionID")
	page, err := f.store.ListCollectSessions(ctx, f.client.ID, otherCollect.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
	if err != nil || len(page.Items) != 0 || page.Total != 0 {
		t.Errorf("sessions of a collect with none: got %+v, %v, want none", page, err)
	}
	_, err = f.store.ListCollectSessions(ctx, f.client.ID, otherCollect.ID, db.PageRequest{Limit: 10, Cursor: sessions[1].ID, Sort: "createdAt"})
	assertError(t, err, db.EINVALIDCURSOR, "Cursor")
}

func TestCollectPublicSide(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	raw := mustOpenRaw(t, f.store.Path())
	task := mustCreateTask(t, f.store, f.client.ID, db.TaskCreate{WorkspaceID: f.ws, Title: "March books"})
	c := f.mustCreateCollectIn(t, db.CollectCreate{WorkspaceID: f.ws, TaskID: &task.ID, Title: "March", Items: []db.CollectItemCreate{
		{Title: "Bank statement", Required: true, FolderID: &f.folder},
		{Title: "Receipts", Required: true},
		{Title: "Payroll", Required: false},
	}})
	token, session := f.mustCreateSession(t, c.ID, "token")
	f.subscribe(t)

	t.Run("view", func(t *testing.T) {
		view, err := f.store.OpenCollectSession(ctx, token)
		if err != nil {
			t.Fatalf("OpenCollectSession: got %v, want nil", err)
		}
		if view.FirmName != "Kanzlei Muster" || view.ClientName != "Bäckerei Schmidt" || view.Session.ID != session.ID ||
			!reflect.DeepEqual(view.Collect, f.mustFindCollect(t, c.ID)) || len(view.Files) != 0 {
			t.Errorf("view: got %+v, want the names, the session and the collect, no files", view)
		}
		if view.Session.LastUsedAt == nil || !view.Session.LastUsedAt.Equal(f.clock.Now()) {
			t.Errorf("last used: got %v, want now", timep(view.Session.LastUsedAt))
		}
		// Within a minute the use is not written again.
		f.clock.Advance(30 * time.Second)
		if view, err = f.store.OpenCollectSession(ctx, token); err != nil || !view.Session.LastUsedAt.Equal(f.clock.Now().Add(-30*time.Second)) {
			t.Errorf("last used half a minute on: got %v (%v), want the first use", timep(view.Session.LastUsedAt), err)
		}
		f.clock.Advance(30 * time.Second)
		if view, err = f.store.OpenCollectSession(ctx, token); err != nil || !view.Session.LastUsedAt.Equal(f.clock.Now()) {
			t.Errorf("last used a minute on: got %v (%v), want now", timep(view.Session.LastUsedAt), err)
		}
		page, err := f.store.ListCollectSessions(ctx, f.client.ID, c.ID, db.PageRequest{Limit: 1, Sort: "createdAt"})
		if err != nil || page.Items[0].LastUsedAt == nil || !page.Items[0].LastUsedAt.Equal(f.clock.Now()) {
			t.Errorf("stored last use: got %+v (%v), want now", page.Items[0], err)
		}
	})

	t.Run("submit with required items missing", func(t *testing.T) {
		_, err := f.store.SubmitCollect(ctx, token)
		var missing *db.MissingItemsError
		if !errors.As(err, &missing) {
			t.Fatalf("SubmitCollect: got %v, want a *MissingItemsError", err)
		}
		if !slices.Equal(missing.ItemIDs, []string{c.Items[0].ID, c.Items[1].ID}) || !slices.Equal(missing.Positions, []int{0, 1}) {
			t.Errorf("missing: got %v at %v, want the two required items at 0 and 1", missing.ItemIDs, missing.Positions)
		}
		if msg := err.Error(); !strings.Contains(msg, `"Bank statement"`) || !strings.Contains(msg, `"Receipts"`) || strings.Contains(msg, "Payroll") {
			t.Errorf("message: got %q, want it to name both required items and not the optional one", msg)
		}
		assertError(t, err, db.EINVALID, "Items", 0)
	})

	var statement *db.File
	t.Run("upload", func(t *testing.T) {
		f.clock.Advance(time.Second)
		before := len(whEvents(t, f.store))
		file, err := f.upload(token, c.Items[0].ID, "statement.pdf")
		if err != nil {
			t.Fatalf("ReceiveCollectFile: got %v, want nil", err)
		}
		stored, err := f.store.FindFile(ctx, f.client.ID, file.ID)
		if err != nil {
			t.Fatalf("FindFile: got %v, want the uploaded file as an ordinary file", err)
		}
		if !reflect.DeepEqual(stored, file) {
			t.Errorf("stored file: got %+v, want %+v", stored, file)
		}
		if file.WorkspaceID != f.ws || strp(file.TaskID) != task.ID || strp(file.FolderID) != f.folder || file.CreatedByID != nil ||
			file.Name != "statement.pdf" || file.Size != 3 {
			t.Errorf("file: got %+v, want the collect's workspace and task, the item's folder, no creator", file)
		}
		got := f.mustFindCollect(t, c.ID)
		if it := got.Items[0]; it.Status != db.ItemReceived || !slices.Equal(it.FileIDs, []string{file.ID}) || !got.UpdatedAt.Equal(f.clock.Now()) {
			t.Errorf("item after the upload: got %+v (collect updated %v), want RECEIVED with the file", it, got.UpdatedAt)
		}
		if types := eventTypes(t, f.store)[before:]; !slices.Equal(types, []string{db.EventFileCreated, db.EventCollectItemReceived}) {
			t.Errorf("events: got %v, want file.created then collect.item_received", types)
		}
		statement = file
		// A file of an item with no folder has none.
		receipt, err := f.upload(token, c.Items[1].ID, "receipt.pdf")
		if err != nil || receipt.FolderID != nil {
			t.Fatalf("upload to an item without a folder: got %+v, %v, want a file with no folder", receipt, err)
		}
		view, err := f.store.OpenCollectSession(ctx, token)
		if err != nil || len(view.Files) != 2 || !reflect.DeepEqual(view.Files[file.ID], stored) {
			t.Errorf("view's files: got %+v (%v), want both uploads", view.Files, err)
		}
	})

	t.Run("refused uploads", func(t *testing.T) {
		files := count(t, raw, `SELECT count(*) FROM files`)
		other := f.mustCreateCollect(t, "April", "Other item")
		_, err := f.upload(token, other.Items[0].ID, "x.pdf")
		assertError(t, err, db.ENOTFOUND, "ItemID")
		_, err = f.upload(token, db.NewID(), "x.pdf")
		assertError(t, err, db.ENOTFOUND, "ItemID")
		if n := count(t, raw, `SELECT count(*) FROM files`); n != files {
			t.Errorf("files after refused uploads: got %d, want %d", n, files)
		}
	})

	t.Run("a rejected item is missing until a new upload", func(t *testing.T) {
		if _, err := f.store.UpdateCollectItem(ctx, f.client.ID, c.ID, c.Items[0].ID,
			db.CollectItemUpdate{Status: val(db.ItemRejected), RejectionReason: val("cut off")}); err != nil {
			t.Fatal(err)
		}
		_, err := f.store.SubmitCollect(ctx, token)
		var missing *db.MissingItemsError
		if !errors.As(err, &missing) || !slices.Equal(missing.Positions, []int{0}) {
			t.Fatalf("submit with the rejected item: got %v, want it missing", err)
		}
		view, err := f.store.OpenCollectSession(ctx, token)
		if err != nil || view.Collect.Items[0].Status != db.ItemRejected || strp(view.Collect.Items[0].RejectionReason) != "cut off" {
			t.Fatalf("the uploader's view: got %+v (%v), want the item rejected with its reason", view.Collect.Items[0], err)
		}
		again, err := f.upload(token, c.Items[0].ID, "statement-full.pdf")
		if err != nil {
			t.Fatal(err)
		}
		it := f.mustFindCollect(t, c.ID).Items[0]
		if it.Status != db.ItemReceived || it.RejectionReason != nil || !slices.Equal(it.FileIDs, []string{statement.ID, again.ID}) {
			t.Errorf("after the new upload: got %+v, want RECEIVED, no reason, both files oldest first", it)
		}
	})

	t.Run("submit", func(t *testing.T) {
		f.clock.Advance(time.Second)
		before := len(whEvents(t, f.store))
		view, err := f.store.SubmitCollect(ctx, token)
		if err != nil {
			t.Fatalf("SubmitCollect: got %v, want nil (the optional item may stay empty)", err)
		}
		if view.Collect.Status != db.CollectSubmitted || view.Collect.SubmittedAt == nil || !view.Collect.SubmittedAt.Equal(f.clock.Now()) || len(view.Files) != 3 {
			t.Errorf("view after submit: got %+v, want SUBMITTED now with three files", view.Collect)
		}
		if !reflect.DeepEqual(view.Collect, f.mustFindCollect(t, c.ID)) {
			t.Errorf("stored: got %+v, want %+v", f.mustFindCollect(t, c.ID), view.Collect)
		}
		if types := eventTypes(t, f.store)[before:]; !slices.Equal(types, []string{db.EventCollectSubmitted}) {
			t.Errorf("events: got %v, want collect.submitted", types)
		}
		// A submitted collect is still shown; uploads and submits conflict.
		if view, err := f.store.OpenCollectSession(ctx, token); err != nil || view.Collect.Status != db.CollectSubmitted {
			t.Errorf("view of a submitted collect: got %v, want it", err)
		}
		_, err = f.upload(token, c.Items[2].ID, "late.pdf")
		assertError(t, err, db.ECONFLICT)
		_, err = f.store.SubmitCollect(ctx, token)
		assertError(t, err, db.ECONFLICT)
		// Reopened, it takes uploads again.
		if _, err := f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Status: val(db.CollectOpen)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.upload(token, c.Items[2].ID, "payroll.pdf"); err != nil {
			t.Errorf("upload after reopening: got %v, want nil", err)
		}
	})

	t.Run("tokens that reach nothing", func(t *testing.T) {
		revokedToken, revoked := f.mustCreateSession(t, c.ID, "revoked")
		if _, err := f.store.RevokeCollectSession(ctx, f.client.ID, c.ID, revoked.ID); err != nil {
			t.Fatal(err)
		}
		deleted := f.mustCreateCollect(t, "Deleted", "x")
		deletedToken, _ := f.mustCreateSession(t, deleted.ID, "deleted")
		if _, err := f.store.DeleteCollect(ctx, f.client.ID, deleted.ID); err != nil {
			t.Fatal(err)
		}
		var messages []string
		for name, h := range map[string][]byte{"unknown": hash("unknown"), "revoked": revokedToken, "deleted collect": deletedToken,
			"empty": nil, "short": token[:31]} {
			for method, call := range map[string]func() error{
				"open":   func() error { _, err := f.store.OpenCollectSession(ctx, h); return err },
				"upload": func() error { _, err := f.upload(h, c.Items[0].ID, "x.pdf"); return err },
				"submit": func() error { _, err := f.store.SubmitCollect(ctx, h); return err },
			} {
				err := call()
				var e *db.Error
				if !errors.As(err, &e) || e.Code != db.ENOTFOUND || e.Field != nil {
					t.Errorf("%s token, %s: got %v, want ENOTFOUND naming no input", name, method, err)
					continue
				}
				messages = append(messages, e.Message)
			}
		}
		slices.Sort(messages)
		if messages = slices.Compact(messages); len(messages) != 1 {
			t.Errorf("messages: got %q, want one message for every token that reaches nothing", messages)
		}
	})

	t.Run("expired, closed and cancelled", func(t *testing.T) {
		expiring := f.mustCreateCollect(t, "Expiring", "x")
		h := hash("expiring")
		if _, err := f.store.CreateCollectSession(ctx, f.client.ID, expiring.ID, db.CollectSessionCreate{TokenHash: h,
			ExpiresAt: f.clock.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.OpenCollectSession(ctx, h); err != nil {
			t.Fatalf("a session a minute before it expires: got %v, want it open", err)
		}
		f.clock.Advance(time.Minute)
		assertExpired := func(t *testing.T, h []byte, itemID string) {
			t.Helper()
			_, err := f.store.OpenCollectSession(ctx, h)
			assertError(t, err, db.EEXPIRED)
			_, err = f.upload(h, itemID, "x.pdf")
			assertError(t, err, db.EEXPIRED)
			_, err = f.store.SubmitCollect(ctx, h)
			assertError(t, err, db.EEXPIRED)
		}
		assertExpired(t, h, expiring.Items[0].ID) // ExpiresAt == now
		for _, status := range []string{db.CollectClosed, db.CollectCancelled} {
			t.Run(status, func(t *testing.T) {
				if _, err := f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Status: val(status)}); err != nil {
					t.Fatal(err)
				}
				assertExpired(t, token, c.Items[0].ID)
			})
		}
		if _, err := f.store.UpdateCollect(ctx, f.client.ID, c.ID, db.CollectUpdate{Status: val(db.CollectOpen)}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.OpenCollectSession(ctx, token); err != nil {
			t.Errorf("after reopening: got %v, want the link to work again", err)
		}
	})
}

// TestCollectIsolation checks that nothing of a collect is reached from
// another client of the firm or a client of another firm: not by the
// collect's id, an item's id, a session's id, nor a token's hash with
// another item.
func TestCollectIsolation(t *testing.T) {
	ctx := context.Background()
	f := newCollectFixture(t)
	raw := mustOpenRaw(t, f.store.Path())
	c := f.mustCreateCollect(t, "March", "Bank statement")
	token, session := f.mustCreateSession(t, c.ID, "token")
	if _, err := f.upload(token, c.Items[0].ID, "s.pdf"); err != nil {
		t.Fatal(err)
	}
	sameFirm := mustCreateClient(t, f.store, f.firm.ID, "Same firm")
	otherFirm := mustCreateFirm(t, f.store, "Other firm")
	otherFirmClient := mustCreateClient(t, f.store, otherFirm.ID, "Other firm's client")
	before := f.mustFindCollect(t, c.ID)

	for _, other := range []*db.Client{sameFirm, otherFirmClient} {
		t.Run(other.Name, func(t *testing.T) {
			ws := mustCreateWorkspace(t, f.store, other.ID, "Theirs")
			folder := mustCreateFolder(t, f.store, other.ID, ws, "Theirs")
			theirs, err := f.store.CreateCollect(ctx, other.ID, db.CollectCreate{WorkspaceID: ws, Title: "Theirs",
				Items: []db.CollectItemCreate{{Title: "theirs", Required: true}}})
			if err != nil {
				t.Fatal(err)
			}
			theirToken := hash("their token " + other.ID)
			if _, err := f.store.CreateCollectSession(ctx, other.ID, theirs.ID, db.CollectSessionCreate{TokenHash: theirToken,
				ExpiresAt: f.clock.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}

			for name, err := range map[string]error{
				"find": func() error { _, err := f.store.FindCollect(ctx, other.ID, c.ID); return err }(),
				"update": func() error {
					_, err := f.store.UpdateCollect(ctx, other.ID, c.ID, db.CollectUpdate{Title: val("x")})
					return err
				}(),
				"add item": func() error {
					_, err := f.store.AddCollectItem(ctx, other.ID, c.ID, db.CollectItemCreate{Title: "x"})
					return err
				}(),
				"update item": func() error {
					_, err := f.store.UpdateCollectItem(ctx, other.ID, c.ID, c.Items[0].ID, db.CollectItemUpdate{Status: val(db.ItemRejected)})
					return err
				}(),
				"update item through their collect": func() error {
					_, err := f.store.UpdateCollectItem(ctx, other.ID, theirs.ID, c.Items[0].ID, db.CollectItemUpdate{Status: val(db.ItemRejected)})
					return err
				}(),
				"create session": func() error {
					_, err := f.store.CreateCollectSession(ctx, other.ID, c.ID, db.CollectSessionCreate{TokenHash: hash("x" + other.ID), ExpiresAt: f.clock.Now().Add(time.Hour)})
					return err
				}(),
				"list sessions": func() error {
					_, err := f.store.ListCollectSessions(ctx, other.ID, c.ID, db.PageRequest{Limit: 10, Sort: "createdAt"})
					return err
				}(),
				"revoke session": func() error {
					_, err := f.store.RevokeCollectSession(ctx, other.ID, c.ID, session.ID)
					return err
				}(),
				"revoke session through their collect": func() error {
					_, err := f.store.RevokeCollectSession(ctx, other.ID, theirs.ID, session.ID)
					return err
				}(),
				"their token, our item": func() error { _, err := f.upload(theirToken, c.Items[0].ID, "x.pdf"); return err }(),
				"our token, their item": func() error { _, err := f.upload(token, theirs.Items[0].ID, "x.pdf"); return err }(),
				"create with our workspace": func() error {
					_, err := f.store.CreateCollect(ctx, other.ID, db.CollectCreate{WorkspaceID: f.ws, Title: "x", Items: []db.CollectItemCreate{{Title: "x"}}})
					return err
				}(),
				"their item in our folder": func() error {
					_, err := f.store.AddCollectItem(ctx, other.ID, theirs.ID, db.CollectItemCreate{Title: "x", FolderID: &f.folder})
					return err
				}(),
				"our item in their folder": func() error {
					_, err := f.store.AddCollectItem(ctx, f.client.ID, c.ID, db.CollectItemCreate{Title: "x", FolderID: &folder})
					return err
				}(),
				"delete": func() error { _, err := f.store.DeleteCollect(ctx, other.ID, c.ID); return err }(),
			} {
				if db.ErrorCode(err) != db.ENOTFOUND {
					t.Errorf("%s: got %v, want ENOTFOUND", name, err)
				}
			}
			page, err := f.store.ListCollects(ctx, other.ID, db.CollectFilter{WorkspaceID: f.ws}, db.PageRequest{Limit: 10, Sort: "createdAt"})
			if err != nil || len(page.Items) != 0 || page.Total != 0 {
				t.Errorf("their list filtered by our workspace: got %+v, %v, want nothing", page, err)
			}
			page, err = f.store.ListCollects(ctx, other.ID, db.CollectFilter{}, db.PageRequest{Limit: 10, Sort: "createdAt"})
			if err != nil || !slices.Equal(collectIDs(page.Items), []string{theirs.ID}) {
				t.Errorf("their list: got %v, %v, want their collect alone", page, err)
			}
			view, err := f.store.OpenCollectSession(ctx, theirToken)
			if err != nil || view.Collect.ID != theirs.ID || view.ClientName != other.Name || len(view.Files) != 0 {
				t.Errorf("their view: got %+v, %v, want their collect alone", view, err)
			}
		})
	}
	if got := f.mustFindCollect(t, c.ID); !reflect.DeepEqual(got, before) {
		t.Errorf("our collect after the other clients' calls: got %+v, want %+v", got, before)
	}
	if n := count(t, raw, `SELECT count(*) FROM collect_sessions WHERE collect_id = ? AND revoked_at IS NOT NULL`, c.ID); n != 0 {
		t.Errorf("our revoked sessions: got %d, want 0", n)
	}
	if _, err := f.store.OpenCollectSession(ctx, token); err != nil {
		t.Errorf("our token: got %v, want it still working", err)
	}
}
