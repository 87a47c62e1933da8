package db_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"acctapi/db"
)

// Within a lane clients take turns: a client's file queued after another
// client's hundred is claimed before their fourth. A file the fast lane
// hands to the OCR lane takes its turn there. The order survives a restart.
func TestAnalysisTurns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "acct.db")
	store, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	newClient := func(name string) (clientID, ws string) {
		t.Helper()
		c, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
		if err != nil {
			t.Fatal(err)
		}
		w, err := store.CreateWorkspace(ctx, c.ID, "Accounts")
		if err != nil {
			t.Fatal(err)
		}
		return c.ID, w.ID
	}
	upload := func(clientID, ws string) string {
		t.Helper()
		f, err := store.CreateFile(ctx, clientID, db.FileCreate{ID: db.NewID(), WorkspaceID: ws, Name: "scan.jpg",
			MimeType: "image/jpeg", Size: 1, SHA256: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	claim := func(store *db.DB, lane string, n int) []string {
		t.Helper()
		jobs, err := store.ClaimAnalyses(ctx, lane, n)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			if j.Lane != lane {
				t.Errorf("job claimed in lane %s says lane %s", lane, j.Lane)
			}
			ids = append(ids, j.FileID)
		}
		return ids
	}
	aClient, aWS := newClient("A")
	bClient, bWS := newClient("B")
	var a []string
	for range 100 {
		a = append(a, upload(aClient, aWS))
	}
	jobs, err := store.ClaimAnalyses(ctx, db.LaneFast, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{jobs[0].FileID, jobs[1].FileID, jobs[2].FileID}; !slices.Equal(got, a[:3]) {
		t.Fatalf("first claims %v, want A's oldest %v", got, a[:3])
	}
	b := upload(bClient, bWS)
	bJobs, err := store.ClaimAnalyses(ctx, db.LaneFast, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(bJobs) != 1 || bJobs[0].FileID != b {
		t.Fatalf("after B's upload the fast lane claims %v, want B's file first", bJobs)
	}
	for _, j := range append(jobs, bJobs[0]) {
		if err := store.HandOffAnalysis(ctx, j, db.LaneOCR); err != nil {
			t.Fatal(err)
		}
	}
	if got := claim(store, db.LaneOCR, 2); !slices.Contains(got, b) {
		t.Errorf("the OCR lane claims %v first, want B's file among the first two", got)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	store = mustOpenEmptyDB(t, path, db.Options{})
	if err := store.ReleaseAnalysisClaims(ctx); err != nil {
		t.Fatal(err)
	}
	if got := claim(store, db.LaneFast, 200); !slices.Equal(got, a[3:]) {
		t.Errorf("after a restart the fast lane claims %d files, want A's 97 left in their order", len(got))
	}
	got := claim(store, db.LaneOCR, 10)
	if len(got) != 4 || !slices.Equal(got[2:], a[1:3]) || !slices.Contains(got[:2], b) || !slices.Contains(got[:2], a[0]) {
		t.Errorf("after a restart the OCR lane claims %v, want A's first and B's file, then A's second and third %v", got, a[1:3])
	}
}

// acctapi analyze queues the files again in the fast lane, each client's
// oldest first, clients taking turns with the lane's.
func TestQueueAnalysesTakesTurns(t *testing.T) {
	ctx := context.Background()
	store := mustOpenDB(t)
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]string{}
	var clients []string
	for i, name := range []string{"A", "B"} {
		c, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
		if err != nil {
			t.Fatal(err)
		}
		w, err := store.CreateWorkspace(ctx, c.ID, "Accounts")
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c.ID)
		for range 3 - 2*i {
			f, err := store.CreateFile(ctx, c.ID, db.FileCreate{ID: db.NewID(), WorkspaceID: w.ID, Name: "scan.jpg",
				MimeType: "image/jpeg", Size: 1, SHA256: make([]byte, 32)})
			if err != nil {
				t.Fatal(err)
			}
			files[c.ID] = append(files[c.ID], f.ID)
			// Files of one second are taken by id, whose clock counts
			// milliseconds.
			time.Sleep(2 * time.Millisecond)
		}
	}
	a, b := files[clients[0]], files[clients[1]][0]
	jobs, err := store.ClaimAnalyses(ctx, db.LaneFast, 10)
	if err != nil || len(jobs) != 4 {
		t.Fatalf("ClaimAnalyses: %d jobs, %v", len(jobs), err)
	}
	for _, j := range jobs {
		if _, ok, err := store.FinishAnalysis(ctx, j, db.AnalysisResult{Status: db.AnalysisSkipped}); err != nil || !ok {
			t.Fatalf("FinishAnalysis: %v, %v", ok, err)
		}
	}
	if n, err := store.QueueAnalyses(ctx, []string{db.AnalysisSkipped}); err != nil || n != 4 {
		t.Fatalf("QueueAnalyses: %d, %v", n, err)
	}
	jobs, err = store.ClaimAnalyses(ctx, db.LaneFast, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.FileID)
	}
	if len(got) != 4 || !slices.Contains(got[:2], b) || !slices.Equal(slices.DeleteFunc(got, func(id string) bool { return id == b }), a) {
		t.Errorf("claims after analyze %v, want B's file among the first two and A's %v in their order", got, a)
	}
}
