package db_test

import (
	"context"
	"testing"

	"acctapi/db"
)

// FuzzSearch: every search ParseSearch takes runs, and finds nothing it
// should not: a term the index's tokenizer reads differently (combining
// marks alone, scripts without spaces) must not turn into a syntax error.
func FuzzSearch(f *testing.F) {
	for _, seed := range []string{"telekom", `"two words"`, "RE-2026-0042", "müller", "e\u0301", "\u0301", "日本語",
		`a"b`, `"""`, "*", "a*b", "NEAR(a b)", "x:y", "-a", "^a", "a AND", "\u00ad", "ﬁ", "ǅ", "\U0001F600a"} {
		f.Add(seed)
	}
	store, err := db.Open(f.TempDir()+"/acct.db", db.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	if err := store.MigrateUp(); err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	firm, err := store.CreateFirm(ctx, "Firm")
	if err != nil {
		f.Fatal(err)
	}
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Client", Type: db.ClientLegalPerson})
	if err != nil {
		f.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Accounts")
	if err != nil {
		f.Fatal(err)
	}
	if _, err := store.CreateFile(ctx, client.ID, db.FileCreate{ID: db.NewID(), WorkspaceID: ws.ID,
		Name: "Telekom Müller RE-2026-0042 日本語.pdf", MimeType: "application/pdf", Size: 1, SHA256: make([]byte, 32)}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		search, ok := db.ParseSearch(q)
		if !ok {
			return
		}
		for _, sort := range []string{"createdAt", db.SortRelevance} {
			if _, err := store.ListFiles(ctx, client.ID, db.FileFilter{Query: search}, db.PageRequest{Limit: 5, Sort: sort, Desc: true}); err != nil {
				t.Fatalf("q=%q (sort %s): %v", q, sort, err)
			}
		}
	})
}
