package seed_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/db/seed"
	"acctapi/document"
)

// The seeded documents are found as the API finds any: by a word of their
// text, their number and their vendor, in pages.
func TestSeedFiles(t *testing.T) {
	ctx := context.Background()
	spec := seedSpec
	spec.Files = 300
	d, _, seeded := mustSeed(t, spec)
	client := seeded.Clients[0].ID
	all, err := d.ListFiles(ctx, client, db.FileFilter{}, db.PageRequest{Limit: 100, Sort: "createdAt", Desc: true})
	if err != nil || all.Total != 300 {
		t.Fatalf("all files: %v, %v", all, err)
	}
	for _, q := range []string{"telekom", "Druckerpapier", "RE-2026", "kontoauszug", "Telekom rechnung"} {
		search, _ := db.ParseSearch(q)
		page, err := d.ListFiles(ctx, client, db.FileFilter{Query: search}, db.PageRequest{Limit: 100, Sort: db.SortRelevance, Desc: true})
		if err != nil || page.Total == 0 {
			t.Errorf("q=%s: %v, %v", q, page, err)
		}
	}
	f := all.Items[0]
	if f.Analysis.Status != db.AnalysisDone || f.Kind == nil || f.Analysis.Fields == nil || f.Analysis.Fields.Value(document.TotalAmount) == nil {
		t.Errorf("a seeded file: %+v", f)
	}
	if text, err := d.FindFileText(ctx, client, f.ID); err != nil || text.Text == "" {
		t.Errorf("a seeded file's text: %v, %v", text, err)
	}
	// The other clients hold none.
	if page, err := d.ListFiles(ctx, seeded.Clients[1].ID, db.FileFilter{}, db.PageRequest{Limit: 10, Sort: "createdAt"}); err != nil || page.Total != 0 {
		t.Errorf("another client's files: %v, %v", page, err)
	}
}

// openSearchStore opens the store BenchmarkSearchFiles searches: the
// seeded database named by ACCTAPI_BENCH_FILES_DB (made with acctapi seed
// --files), else one of 100,000 documents seeded for the run. It returns the
// client that holds the documents.
func openSearchStore(b *testing.B) (*db.DB, string) {
	path := os.Getenv("ACCTAPI_BENCH_FILES_DB")
	if path == "" {
		path = filepath.Join(b.TempDir(), "files.db")
		d, err := db.Open(path, db.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.MigrateUp(); err != nil {
			b.Fatal(err)
		}
		firm, err := d.CreateFirm(context.Background(), "Bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		if _, err := seed.Generate(context.Background(), path, firm.ID,
			seed.Spec{Clients: 2, Tasks: 10, Workspaces: 10, Files: 100_000}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	var client string
	if err := raw.QueryRow(`SELECT client_id FROM files GROUP BY client_id ORDER BY count(*) DESC LIMIT 1`).Scan(&client); err != nil {
		b.Fatal(err)
	}
	d, err := db.Open(path, db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d, client
}

// BenchmarkSearchFiles searches one client's 100,000 documents for one word,
// as GET /v1/files?q= does with its defaults (20 a page, newest first, with
// the total) and by relevance, for words from common to rare, and reports
// the median and the 99th percentile of one search.
func BenchmarkSearchFiles(b *testing.B) {
	d, client := openSearchStore(b)
	for _, word := range []string{"telekom", "rechnung", "druckerpapier", "praxis", "ozturk", "RE-2025-04711", "hetzn"} {
		for _, sort := range []string{"createdAt", db.SortRelevance} {
			b.Run(word+"/"+sort, func(b *testing.B) {
				search, _ := db.ParseSearch(word)
				req := db.PageRequest{Limit: 20, Sort: sort, Desc: true}
				var took []time.Duration
				total := 0
				for b.Loop() {
					start := time.Now()
					page, err := d.ListFiles(context.Background(), client, db.FileFilter{Query: search}, req)
					if err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
					total = page.Total
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(total), "matches")
			})
		}
	}
}
