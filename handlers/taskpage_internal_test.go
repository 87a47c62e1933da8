package handlers

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"acctapi/db"
)

// reflectTaskPage is the task page as encoding/json writes it through
// writeJSON's other path: what taskPageResponse must equal.
func reflectTaskPage(t *testing.T, page *db.Page[*db.Task]) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(newListResponse(page, newTaskResponse)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func appendedTaskPage(page *db.Page[*db.Task]) []byte {
	return append(newTaskPageResponse(page).appendJSON(nil), '\n')
}

func sampleTask(title string, text *string) *db.Task {
	due := time.Date(2026, 3, 31, 23, 59, 59, 0, time.FixedZone("CET", 3600))
	return &db.Task{
		ID: db.NewID(), ClientID: db.NewID(), WorkspaceID: db.NewID(), ParentID: ptr(db.NewID()),
		Title: title, Text: text, Status: "IN_REVIEW", DueDate: &due, CreatedByID: ptr(db.NewID()),
		ActorType: db.ActorUser, DestinationFolderID: ptr(db.NewID()),
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Unix(1790000000, 0),
	}
}

func TestTaskPageJSON(t *testing.T) {
	bare := &db.Task{ID: db.NewID(), WorkspaceID: db.NewID(), Title: "t", Status: "OPEN", ActorType: db.ActorAPI}
	var strs []string
	for c := range 0x80 {
		strs = append(strs, "a"+string(rune(c))+"b")
	}
	strs = append(strs, "", "<script>&amp;</script>", "Grüße, 東京, 🎉", "line\u2028sep\u2029end", "\xff\xfe bad \xc3",
		"\u007f\u0080\u00a0", strings.Repeat("long ", 1000), `"quoted" \back\slash/`)
	var tasks []*db.Task
	for _, s := range strs {
		tasks = append(tasks, sampleTask(s, &s))
	}
	for _, page := range []*db.Page[*db.Task]{
		{Items: []*db.Task{}, Limit: 20},
		{Items: []*db.Task{bare}, Limit: 1, Total: 1},
		{Items: tasks, Limit: 100, Total: 1_000_000, NextCursor: ptr(db.NewID()), PreviousCursor: ptr(db.NewID())},
	} {
		if got, want := appendedTaskPage(page), reflectTaskPage(t, page); !bytes.Equal(got, want) {
			t.Errorf("task page of %d items:\n got %s\nwant %s", len(page.Items), got, want)
		}
	}
}

// FuzzTaskPageJSON: for any title and text, the written page is the one
// encoding/json writes.
func FuzzTaskPageJSON(f *testing.F) {
	f.Add("Q3 VAT return", "see <attached> & \"signed\"")
	f.Add("\u2028\x00\x1f", "\xed\xa0\x80 surrogate, \xf4\x90\x80\x80 too large")
	f.Fuzz(func(t *testing.T, title, text string) {
		page := &db.Page[*db.Task]{Items: []*db.Task{sampleTask(title, &text)}, Limit: 1, Total: 1}
		if got, want := appendedTaskPage(page), reflectTaskPage(t, page); !bytes.Equal(got, want) {
			t.Errorf("title %q text %q:\n got %s\nwant %s", title, text, got, want)
		}
	})
}
