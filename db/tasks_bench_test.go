package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/db/seed"
)

// The benchmarks share one database, built on first use (so only when a
// benchmark runs, never in a plain `go test`) by seed.Generate in a temporary
// directory that TestMain removes: client A has 1,000,000 tasks in 100
// workspaces, the first holding 60% of them (so that a workspace list too
// has a page 5000); client B has 1,000.
const (
	benchTasks      = 1_000_000
	benchWorkspaces = 100
	benchLimit      = 100
	benchDeepPage   = 5000 // page 5000 starts 499,900 rows deep
)

type benchData struct {
	d         *db.DB
	client    string
	bigWS     string // the workspace with 60% of the tasks
	workspace []string
	// sample holds every 100th task of client A by id; parents, tasks of
	// the big workspace.
	sample, parents []string
	built           time.Duration
}

var bench struct {
	once sync.Once
	dir  string
	data *benchData
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.data != nil {
		if err := bench.data.d.Close(); err != nil {
			log.Printf("close the benchmark database: %v", err)
		}
	}
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

// benchDB returns the shared database, building it on first use.
func benchDB(b *testing.B) *benchData {
	b.Helper()
	bench.once.Do(func() {
		bench.dir, bench.err = os.MkdirTemp("", "acctapi-bench-")
		if bench.err == nil {
			bench.data, bench.err = buildBenchDB(filepath.Join(bench.dir, "bench.db"))
		}
		if bench.err == nil {
			log.Printf("benchmark database: %d tasks built in %v", benchTasks, bench.data.built.Round(time.Millisecond))
		}
	})
	if bench.err != nil {
		b.Fatalf("build the benchmark database: %v", bench.err)
	}
	return bench.data
}

func buildBenchDB(path string) (*benchData, error) {
	ctx := context.Background()
	start := time.Now()
	d, err := db.Open(path, db.Options{})
	if err != nil {
		return nil, err
	}
	if err := d.MigrateUp(); err != nil {
		d.Close()
		return nil, err
	}
	firm, err := d.CreateFirm(ctx, "Bench Firm")
	if err := errors.Join(err, d.Close()); err != nil {
		return nil, err
	}
	seeded, err := seed.Generate(ctx, path, firm.ID, seed.Spec{
		Clients: 2, Tasks: benchTasks, OtherTasks: 1000, Workspaces: benchWorkspaces, ClientUsers: 3, AccountantUsers: 2,
	}, time.Now())
	if err != nil {
		return nil, err
	}
	if d, err = db.Open(path, db.Options{}); err != nil {
		return nil, err
	}
	a := seeded.Clients[0]
	data := &benchData{d: d, client: a.ID, bigWS: a.Workspaces[0], workspace: a.Workspaces, built: time.Since(start)}
	_, read := d.Handles()
	if data.sample, err = benchIDs(read, `SELECT id FROM tasks WHERE client_id = ? AND rowid % 100 = 0`, a.ID); err == nil {
		data.parents, err = benchIDs(read, `SELECT id FROM tasks WHERE client_id = ? AND workspace_id = ? LIMIT 1000`, a.ID, data.bigWS)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return data, nil
}

func benchIDs(read *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := read.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// benchOrder is an ORDER BY for a sort, written from the order of lists in
// docs/decisions.md rather than taken from the store: the sort key, then id,
// null due dates last both ways, titles ASCII case-insensitively (NOCASE).
func benchOrder(sortKey string, desc bool) string {
	dir := "ASC"
	if desc {
		dir = "DESC"
	}
	switch sortKey {
	case "dueDate":
		return "due_date IS NULL ASC, due_date " + dir + ", id " + dir
	case "title":
		return "title COLLATE NOCASE " + dir + ", id " + dir
	}
	column := map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "status": "status"}[sortKey]
	return column + " " + dir + ", id " + dir
}

// deepCursor returns the id of the first task of the list's page 5000
// (OFFSET is fine here: it is the benchmark's setup).
func deepCursor(b *testing.B, data *benchData, f db.TaskFilter, sortKey string, desc bool) string {
	b.Helper()
	_, read := data.d.Handles()
	query := `SELECT id FROM tasks WHERE client_id = ?`
	args := []any{data.client}
	if f.WorkspaceID != "" {
		query += ` AND workspace_id = ?`
		args = append(args, f.WorkspaceID)
	}
	query += ` ORDER BY ` + benchOrder(sortKey, desc) + ` LIMIT 1 OFFSET ?`
	args = append(args, (benchDeepPage-1)*benchLimit)
	var id string
	if err := read.QueryRow(query, args...).Scan(&id); err != nil {
		b.Fatalf("deep cursor (%s): %v", query, err)
	}
	return id
}

// BenchmarkListTasks reads page 1 and page 5000 (a cursor 499,900 rows
// deep) of every sort and order, client-wide and in the big workspace.
// Keyset paging makes both cost the same.
func BenchmarkListTasks(b *testing.B) {
	data := benchDB(b)
	ctx := context.Background()
	for _, sortKey := range db.TaskSorts {
		for _, desc := range []bool{false, true} {
			order := map[bool]string{false: "asc", true: "desc"}[desc]
			for _, scope := range []struct {
				name string
				f    db.TaskFilter
			}{{"client", db.TaskFilter{}}, {"workspace", db.TaskFilter{WorkspaceID: data.bigWS}}} {
				for _, deep := range []bool{false, true} {
					page := "page1"
					if deep {
						page = fmt.Sprintf("page%d", benchDeepPage)
					}
					b.Run(fmt.Sprintf("%s/%s/%s/%s", sortKey, order, scope.name, page), func(b *testing.B) {
						req := db.PageRequest{Limit: benchLimit, Sort: sortKey, Desc: desc}
						if deep {
							req.Cursor = deepCursor(b, data, scope.f, sortKey, desc)
						}
						p, err := data.d.ListTasks(ctx, data.client, scope.f, req)
						if err != nil {
							b.Fatalf("ListTasks: %v", err)
						}
						if len(p.Items) != benchLimit || p.NextCursor == nil || (deep && (p.Items[0].ID != req.Cursor || p.PreviousCursor == nil)) {
							b.Fatalf("ListTasks(%+v): got %d items, next %v, prev %v, want a full page starting at the cursor",
								req, len(p.Items), p.NextCursor, p.PreviousCursor)
						}
						b.ReportAllocs()
						for b.Loop() { // the setup above is not timed
							if _, err := data.d.ListTasks(ctx, data.client, scope.f, req); err != nil {
								b.Fatalf("ListTasks: %v", err)
							}
						}
					})
				}
			}
		}
	}
}

func BenchmarkCreateTask(b *testing.B) {
	data := benchDB(b)
	ctx := context.Background()
	due := time.Now().Add(72 * time.Hour)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in := db.TaskCreate{WorkspaceID: data.workspace[i%benchWorkspaces], Title: fmt.Sprintf("Benchmark task %d", i)}
		if i%3 != 0 {
			in.DueDate = &due
		}
		if i%5 == 0 {
			parent := data.parents[i%len(data.parents)]
			in.WorkspaceID, in.ParentID = data.bigWS, &parent
		}
		if _, err := data.d.CreateTask(ctx, data.client, in); err != nil {
			b.Fatalf("CreateTask(%+v): %v", in, err)
		}
		i++
	}
}

func BenchmarkUpdateTask(b *testing.B) {
	data := benchDB(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		id := data.sample[i*7919%len(data.sample)] // spread over the table
		u := db.TaskUpdate{Status: val(db.TaskStatuses[i%len(db.TaskStatuses)])}
		if i%2 == 0 {
			u.Title = val(fmt.Sprintf("Renamed %d", i))
		}
		if _, err := data.d.UpdateTask(ctx, data.client, id, u); err != nil {
			b.Fatalf("UpdateTask(%s): %v", id, err)
		}
		i++
	}
}

// BenchmarkTaskTotal compares what a list's total would cost as a COUNT over
// the client's million tasks with the counter lookup ListTasks makes.
func BenchmarkTaskTotal(b *testing.B) {
	data := benchDB(b)
	raw := mustOpenRaw(b, data.d.Path())
	for _, bc := range []struct{ name, query, scope string }{
		{"count", `SELECT count(*) FROM tasks WHERE client_id = ?`, ""},
		{"counter", `SELECT n FROM task_counts WHERE client_id = ? AND scope = ?`, ""},
		{"count/workspace", `SELECT count(*) FROM tasks WHERE +client_id = ? AND workspace_id = ?`, data.bigWS},
		{"counter/workspace", `SELECT n FROM task_counts WHERE client_id = ? AND scope = 'w:' || ?`, data.bigWS},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := []any{data.client}
			if strings.Count(bc.query, "?") == 2 {
				args = append(args, bc.scope)
			}
			var n int
			for b.Loop() {
				if err := raw.QueryRow(bc.query, args...).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "tasks")
		})
	}
}
