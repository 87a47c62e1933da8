package db

import (
	"context"
	"strings"
	"testing"
)

// planRecorder runs the queries of a page on the read pool and records
// SQLite's plan of each.
type planRecorder struct {
	poolTx
	t     *testing.T
	plans []string
}

func (p *planRecorder) plan(ctx context.Context, query string, args []any) {
	rows, err := p.tx.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		p.t.Fatalf("explain %s: %v", query, err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			p.t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	p.plans = append(p.plans, query+"\n  "+strings.Join(steps, "\n  "))
}

func (p *planRecorder) QueryContext(ctx context.Context, query string, args ...any) (pageRows, error) {
	p.plan(ctx, query, args)
	return p.poolTx.QueryContext(ctx, query, args...)
}

func (p *planRecorder) QueryRowContext(ctx context.Context, query string, args ...any) scanner {
	p.plan(ctx, query, args)
	return p.poolTx.QueryRowContext(ctx, query, args...)
}

// Every sort of the file list walks an index from the client, with no
// sorting step, on page 1 and on a page past a cursor: a page's cost does
// not grow with its depth. A search starts from the full-text index.
func TestFileListPlans(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	firm, err := d.CreateFirm(ctx, "Firm")
	if err != nil {
		t.Fatal(err)
	}
	client, err := d.CreateClient(ctx, firm.ID, ClientCreate{Name: "Client", Type: ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := d.CreateWorkspace(ctx, client.ID, "Accounts")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 3 {
		f, err := d.CreateFile(ctx, client.ID, FileCreate{ID: NewID(), WorkspaceID: ws.ID, Name: "Telekom invoice.pdf",
			MimeType: "application/pdf", Size: int64(i), SHA256: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.ID)
	}
	explain := func(f FileFilter, req PageRequest, matches ...int) []string {
		t.Helper()
		tx, err := d.beginRead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		rec := &planRecorder{poolTx: poolTx{tx}, t: t}
		l := fileList(client.ID, f)
		if f.Query != nil {
			n, err := countMatches(ctx, rec, client.ID, f.Query)
			if err != nil {
				t.Fatal(err)
			}
			l = searchList(l, f, req, append(matches, n)[0])
		}
		if _, err := paginateFrom(ctx, rec, l, req, func(s scanner) (*File, string, error) {
			file, err := scanFile(s)
			if err != nil {
				return nil, "", err
			}
			return file, file.ID, nil
		}); err != nil {
			t.Fatal(err)
		}
		return rec.plans
	}
	indexes := map[string]string{"createdAt": "files_client_created", "updatedAt": "files_client_updated",
		"documentDate": "files_client_document_date", "name": "files_client_name", "size": "files_client_size"}
	for sort, index := range indexes {
		for _, desc := range []bool{false, true} {
			for _, cursor := range []string{"", ids[1]} {
				plans := explain(FileFilter{}, PageRequest{Limit: 1, Sort: sort, Desc: desc, Cursor: cursor})
				for _, plan := range plans {
					if strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN files") {
						t.Errorf("sort %s (desc %v, cursor %q) sorts or scans:\n%s", sort, desc, cursor, plan)
					}
				}
				// The page query, and the previous page's past a cursor.
				page := plans[len(plans)-2]
				if cursor != "" {
					page = plans[1]
				}
				if !strings.Contains(page, "USING INDEX "+index) && !strings.Contains(page, "USING COVERING INDEX "+index) {
					t.Errorf("sort %s (desc %v, cursor %q) does not walk %s:\n%s", sort, desc, cursor, index, page)
				}
			}
		}
	}
	// A search with few matches starts from the full-text index; so does
	// one by relevance. The count reads only the narrow rows of the index.
	search, _ := ParseSearch("telekom")
	for _, sort := range []string{"createdAt", "name", SortRelevance} {
		plans := explain(FileFilter{Query: search}, PageRequest{Limit: 2, Sort: sort, Desc: true})
		for _, plan := range plans {
			if !strings.Contains(plan, "VIRTUAL TABLE INDEX") || strings.Contains(plan, "SCAN files") {
				t.Errorf("a search by %s does not start from the index:\n%s", sort, plan)
			}
		}
		if !strings.Contains(plans[0], "SEARCH r USING INTEGER PRIMARY KEY") || strings.Contains(plans[0], "files") {
			t.Errorf("the count of a search reads more than its rows:\n%s", plans[0])
		}
	}
	// One with many walks the sort's index, as a list does.
	for sort, index := range indexes {
		plans := explain(FileFilter{Query: search}, PageRequest{Limit: 2, Sort: sort, Desc: true}, manyMatches+1)
		page := plans[1]
		if !strings.Contains(page, "INDEX "+index) || strings.Contains(page, "TEMP B-TREE") {
			t.Errorf("a search with many matches by %s does not walk %s:\n%s", sort, index, page)
		}
		if len(plans) != 2 {
			t.Errorf("a search with many matches counts them again: %d queries", len(plans))
		}
	}
}

// Lookups of a few files by id find them by id, not by walking all of a
// client's or a workspace's files along one of their indexes, which SQLite
// picks without statistics when a query names the client or workspace too.
func TestFileLookupPlans(t *testing.T) {
	d := openWriterTestDB(t)
	ctx := context.Background()
	tx, err := d.beginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rec := &planRecorder{poolTx: poolTx{tx}, t: t}
	rec.plan(ctx, collectViewFilesSQL, []any{"c", "c", "x"})
	rec.plan(ctx, assetFilesSQL+placeholders(3)+`)`, []any{"c", "w", "a", "b", "c"})
	for _, plan := range rec.plans {
		if !strings.Contains(plan, "SEARCH files USING INDEX sqlite_autoindex_files_1 (id=?)") {
			t.Errorf("not by id:\n%s", plan)
		}
	}
}
