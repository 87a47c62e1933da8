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
)

// The benchmarks share one database of a million tasks, built on first use
// (so only when a benchmark runs, never in a plain `go test`) in a temporary
// directory that TestMain removes.
//
// Client A has 1,000,000 tasks in 100 workspaces: the first workspace holds
// 60% of them (so that a workspace list too has a page 5000), the other 99
// about 4,000 each. About 20% of the tasks have a parent (in their own
// workspace), 30% have no due date, statuses and titles (with case variants
// and ties) are spread by a hash of the task's number, created_at grows with
// it (four tasks a second). Client B has 1,000 tasks in one workspace.
const (
	benchTasks      = 1_000_000
	benchWorkspaces = 100
	benchOtherTasks = 1_000
	benchLimit      = 100
	benchDeepPage   = 5000 // page 5000 starts 499,900 rows deep
)

type benchData struct {
	d         *db.DB
	client    string
	other     string
	bigWS     string // the workspace with 60% of the tasks
	workspace []string
	built     time.Duration
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
			log.Printf("benchmark database: %d + %d tasks built in %v", benchTasks, benchOtherTasks, bench.data.built.Round(time.Millisecond))
		}
	})
	if bench.err != nil {
		b.Fatalf("build the benchmark database: %v", bench.err)
	}
	return bench.data
}

// benchWorkspaceID and benchTaskID are the ids of the generated rows: cuid
// format ("c" and 24 of [0-9a-z]).
func benchWorkspaceID(k int) string { return fmt.Sprintf("cw%023d", k) }
func benchTaskID(n int) string      { return fmt.Sprintf("c%024d", n) }

func buildBenchDB(path string) (*benchData, error) {
	ctx := context.Background()
	start := time.Now()

	// The store makes the schema and the tenants, then lets go of the file.
	d, err := db.Open(path, db.Options{})
	if err != nil {
		return nil, err
	}
	if err := d.MigrateUp(); err != nil {
		d.Close()
		return nil, err
	}
	var firm *db.Firm
	var client, other *db.Client
	firm, err = d.CreateFirm(ctx, "Bench Firm")
	if err == nil {
		client, err = d.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Big Client", Type: db.ClientLegalPerson})
	}
	if err == nil {
		other, err = d.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Small Client", Type: db.ClientLegalPerson})
	}
	if err := errors.Join(err, d.Close()); err != nil {
		return nil, err
	}
	if err := bulkLoad(ctx, path, client.ID, other.ID); err != nil {
		return nil, err
	}

	if d, err = db.Open(path, db.Options{}); err != nil {
		return nil, err
	}
	data := &benchData{d: d, client: client.ID, other: other.ID, bigWS: benchWorkspaceID(0), built: time.Since(start)}
	for k := range benchWorkspaces {
		data.workspace = append(data.workspace, benchWorkspaceID(k))
	}

	// The counters the triggers kept must add up.
	_, read := d.Handles()
	var total, inWorkspaces, inParents, withParent int
	err = read.QueryRowContext(ctx, `SELECT
			(SELECT n FROM task_counts WHERE client_id = ?1 AND scope = ''),
			(SELECT sum(n) FROM task_counts WHERE client_id = ?1 AND scope LIKE 'w:%'),
			(SELECT sum(n) FROM task_counts WHERE client_id = ?1 AND scope LIKE 'p:%'),
			(SELECT count(*) FROM tasks WHERE parent_id IS NOT NULL)`, client.ID).
		Scan(&total, &inWorkspaces, &inParents, &withParent)
	if err == nil && (total != benchTasks || inWorkspaces != benchTasks || inParents != withParent || withParent < benchTasks/6) {
		err = fmt.Errorf("task_counts: client %d, workspaces %d, parents %d, want %d, %d, %d (about 20%%)",
			total, inWorkspaces, inParents, benchTasks, benchTasks, withParent)
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return data, nil
}

// bulkLoad inserts the generated rows on a connection of its own: no
// journal, no fsync, a big cache, and the task indexes dropped for the load
// and rebuilt after it (one sort per index instead of a million random
// inserts into each). The triggers keep task_counts as they do in use.
func bulkLoad(ctx context.Context, path, clientID, otherID string) error {
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)"+
		"&_pragma=foreign_keys(1)&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)&_pragma=threads(2)")
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()

	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema
		WHERE type = 'index' AND tbl_name = 'tasks' AND sql IS NOT NULL`)
	if err != nil {
		return err
	}
	var indexes [][2]string
	for rows.Next() {
		var name, sql string
		if err := rows.Scan(&name, &sql); err != nil {
			rows.Close()
			return err
		}
		indexes = append(indexes, [2]string{name, sql})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ix := range indexes {
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+ix[0]); err != nil {
			return err
		}
	}

	base := time.Now().Unix() - benchTasks/4 - 3600
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO workspaces (id, client_id, name, created_at, updated_at)
			WITH RECURSIVE k(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM k WHERE k + 1 < ?)
			SELECT printf('cw%023d', k), ?, 'Workspace ' || k, ?, ? FROM k`,
			[]any{benchWorkspaces, clientID, base, base}},
		{`INSERT INTO workspaces (id, client_id, name, created_at, updated_at) VALUES (?, ?, 'Other', ?, ?)`,
			[]any{benchWorkspaceID(benchWorkspaces), otherID, base, base}},
		// h1..h4 are independent-looking hashes of n. Workspace: 60% in
		// workspace 0 (n % 10 < 6), else 1 + (n / 10) % 99; so n - 990k is
		// in n's workspace, and makes a parent for 20% of the tasks.
		{`INSERT INTO tasks (id, client_id, workspace_id, parent_id, title, text, status, due_date,
				created_by_id, actor_type, destination_folder_id, created_at, updated_at)
			WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?),
			h AS (SELECT n,
				(n * 2654435761 + 12345) % 1000003 AS h1,
				(n * 2246822519 + 777) % 999983 AS h2,
				(n * 3266489917 + 4242) % 1000033 AS h3,
				(n * 668265263 + 99) % 999979 AS h4
				FROM seq)
			SELECT printf('c%024d', n), ?,
				printf('cw%023d', CASE WHEN n % 10 < 6 THEN 0 ELSE 1 + (n / 10) % 99 END),
				CASE WHEN n >= 5 * 990 AND h1 % 5 = 0 THEN printf('c%024d', n - 990 * (1 + h2 % 5)) END,
				CASE h2 % 6 WHEN 0 THEN 'Upload ' WHEN 1 THEN 'upload ' WHEN 2 THEN 'Review ' WHEN 3 THEN 'SIGN '
					WHEN 4 THEN 'answer ' ELSE 'Éclair ' END || 'document ' || (h3 % 20000),
				NULL,
				h4 % 5,
				CASE WHEN h3 % 10 < 3 THEN NULL ELSE ? + (h1 % 730) * 86400 END,
				NULL, 'API', NULL,
				? + n / 4,
				? + n / 4 + h4 % 100000
			FROM h`,
			[]any{benchTasks, clientID, base, base, base}},
		{`INSERT INTO tasks (id, client_id, workspace_id, title, status, due_date, actor_type, created_at, updated_at)
			WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?)
			SELECT printf('c%024d', ? + n), ?, ?, 'Other ' || n, n % 5, CASE WHEN n % 3 = 0 THEN NULL ELSE ? + n END,
				'API', ? + n, ? + n FROM seq`,
			[]any{benchOtherTasks, benchTasks, otherID, benchWorkspaceID(benchWorkspaces), base, base, base}},
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("%.60s...: %w", strings.TrimSpace(s.sql), err)
		}
	}
	for _, ix := range indexes {
		if _, err := tx.ExecContext(ctx, ix[1]); err != nil {
			return fmt.Errorf("%s: %w", ix[1], err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `PRAGMA journal_mode = WAL`)
	return err
}

// benchOrder is an ORDER BY for a sort, written from PRODUCT.md's rules
// rather than taken from the store: nulls last both ways, NOCASE titles.
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
			parent := benchTaskID(i % benchTasks / 10 * 10) // in workspace 0
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
		// Spread over the table: a stride coprime with its size.
		id := benchTaskID(i * 7919 % benchTasks)
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
