package seed_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acctapi/db"
	"acctapi/db/seed"
)

var seedSpec = seed.Spec{Clients: 3, Tasks: 2000, OtherTasks: 120, Workspaces: 4, ClientUsers: 2, AccountantUsers: 3}

// mustOpenStore opens a store at path, migrating it when it is new, and
// closes it when the test ends.
func mustOpenStore(t *testing.T, path string) *db.DB {
	t.Helper()
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	return d
}

// mustFirm creates a firm in the store.
func mustFirm(t *testing.T, d *db.DB, name string) *db.Firm {
	t.Helper()
	firm, err := d.CreateFirm(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return firm
}

// mustOpenRaw opens a plain connection to the database file, to read what
// the generator wrote as it is stored.
func mustOpenRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// count runs a query that counts.
func count(t *testing.T, conn *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// mustSeed makes a database with a firm, as serve's first start would, and
// seeds it; it returns the store opened on the seeded file.
func mustSeed(t *testing.T, spec seed.Spec) (*db.DB, *db.Firm, *seed.Seeded) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "acct.db")
	d, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MigrateUp(); err != nil {
		t.Fatal(err)
	}
	firm := mustFirm(t, d, "Seed Firm")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	seeded, err := seed.Generate(context.Background(), path, firm.ID, spec, time.Now())
	if err != nil {
		t.Fatalf("Generate(%+v): %v", spec, err)
	}
	return mustOpenStore(t, path), firm, seeded
}

func TestSeed(t *testing.T) {
	ctx := context.Background()
	fresh := mustOpenStore(t, filepath.Join(t.TempDir(), "fresh.db"))
	d, firm, seeded := mustSeed(t, seedSpec)
	raw := mustOpenRaw(t, d.Path())

	if err := d.CheckSchema(ctx); err != nil {
		t.Fatalf("CheckSchema after Seed: %v", err)
	}
	// The indexes and triggers dropped for the load are all back.
	schemaQuery := `SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY type, name`
	if got, want := dump(t, raw, schemaQuery), dump(t, mustOpenRaw(t, fresh.Path()), schemaQuery); got != want {
		t.Errorf("schema after Seed:\n%s\nwant that of a migrated database:\n%s", got, want)
	}
	for _, q := range []struct{ query, want string }{
		{`PRAGMA integrity_check`, "ok"},
		{`PRAGMA journal_mode`, "wal"},
	} {
		var got string
		if err := raw.QueryRow(q.query).Scan(&got); err != nil || got != q.want {
			t.Errorf("%s: got %q, %v, want %q", q.query, got, err, q.want)
		}
	}
	if n := count(t, raw, `SELECT count(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Errorf("foreign_key_check: %d violations, want none", n)
	}

	spec := seedSpec
	tasks := spec.Tasks + (spec.Clients-1)*spec.OtherTasks
	for _, c := range []struct {
		query string
		want  int
	}{
		{`SELECT count(*) FROM clients WHERE firm_id = ?`, spec.Clients},
		{`SELECT count(*) FROM users WHERE firm_id = ? AND client_id IS NOT NULL`, spec.Clients * spec.ClientUsers},
		{`SELECT count(*) FROM users WHERE firm_id = ? AND client_id IS NULL`, spec.AccountantUsers},
		{`SELECT count(*) FROM workspaces w JOIN clients c ON c.id = w.client_id WHERE c.firm_id = ?`, spec.Clients * spec.Workspaces},
		{`SELECT count(*) FROM folders f JOIN clients c ON c.id = f.client_id WHERE c.firm_id = ?`, 3 * spec.Clients * spec.Workspaces},
		{`SELECT count(*) FROM labels l JOIN clients c ON c.id = l.client_id WHERE c.firm_id = ?`, 3 * spec.Clients * spec.Workspaces},
		{`SELECT count(*) FROM workspace_members`, spec.Clients * (spec.ClientUsers + spec.AccountantUsers)},
		{`SELECT count(*) FROM tasks t JOIN clients c ON c.id = t.client_id WHERE c.firm_id = ?`, tasks},
		// The mix a realistic dataset needs: every status, subtasks, open
		// dates, texts, tasks made by users and through the API.
		{`SELECT count(DISTINCT status) FROM tasks WHERE ? <> ''`, 5},
		{`SELECT count(DISTINCT actor_type) FROM tasks WHERE ? <> ''`, 2},
		{`SELECT count(*) > 0 FROM tasks WHERE parent_id IS NOT NULL AND ? <> ''`, 1},
		{`SELECT count(*) > 0 FROM tasks WHERE due_date IS NULL AND ? <> ''`, 1},
		{`SELECT count(*) > 0 FROM tasks WHERE text IS NOT NULL AND ? <> ''`, 1},
		{`SELECT count(*) FROM tasks WHERE (updated_at < created_at OR due_date < created_at) AND ? <> ''`, 0},
		// A subtask is in its parent's workspace and client.
		{`SELECT count(*) FROM tasks t JOIN tasks p ON p.id = t.parent_id
			WHERE (p.workspace_id <> t.workspace_id OR p.client_id <> t.client_id) AND ? <> ''`, 0},
	} {
		if got := count(t, raw, c.query, firm.ID); got != c.want {
			t.Errorf("%s: got %d, want %d", c.query, got, c.want)
		}
	}

	// The counters the load set agree with counting, and the triggers keep
	// them from there.
	if len(seeded.Clients) != spec.Clients {
		t.Fatalf("Seeded: %d clients, want %d", len(seeded.Clients), spec.Clients)
	}
	checkTotals := func() {
		t.Helper()
		for i, c := range seeded.Clients {
			if len(c.Workspaces) != spec.Workspaces {
				t.Fatalf("client %d: %d workspaces, want %d", i, len(c.Workspaces), spec.Workspaces)
			}
			filters := []db.TaskFilter{{}}
			for _, w := range c.Workspaces {
				filters = append(filters, db.TaskFilter{WorkspaceID: w})
			}
			var parent string
			if err := raw.QueryRow(`SELECT parent_id FROM tasks WHERE client_id = ? AND parent_id IS NOT NULL LIMIT 1`, c.ID).Scan(&parent); err == nil {
				filters = append(filters, db.TaskFilter{ParentID: parent})
			}
			for _, f := range filters {
				p, err := d.ListTasks(ctx, c.ID, f, db.PageRequest{Limit: 1, Sort: "createdAt"})
				if err != nil {
					t.Fatalf("ListTasks(%+v): %v", f, err)
				}
				want := count(t, raw, `SELECT count(*) FROM tasks WHERE client_id = ?1
					AND (?2 = '' OR workspace_id = ?2) AND (?3 = '' OR parent_id = ?3)`, c.ID, f.WorkspaceID, f.ParentID)
				if p.Total != want {
					t.Errorf("client %d, filter %+v: total %d, want %d", i, f, p.Total, want)
				}
			}
		}
	}
	checkTotals()
	a := seeded.Clients[0]
	if a.Tasks != spec.Tasks || seeded.Clients[1].Tasks != spec.OtherTasks {
		t.Errorf("Seeded task counts %d, %d, want %d, %d", a.Tasks, seeded.Clients[1].Tasks, spec.Tasks, spec.OtherTasks)
	}
	var parent string
	if err := raw.QueryRow(`SELECT parent_id FROM tasks WHERE client_id = ? AND parent_id IS NOT NULL LIMIT 1`, a.ID).Scan(&parent); err != nil {
		t.Fatal(err)
	}
	var ws string
	if err := raw.QueryRow(`SELECT workspace_id FROM tasks WHERE id = ?`, parent).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateTask(ctx, a.ID, db.TaskCreate{WorkspaceID: ws, ParentID: &parent, Title: "After the seed"}); err != nil {
		t.Fatalf("CreateTask after Seed: %v", err)
	}
	if _, err := d.DeleteTask(ctx, a.ID, parent); err != nil {
		t.Fatalf("DeleteTask after Seed: %v", err)
	}
	checkTotals()

	// The first workspace of the big client holds most of its tasks.
	if n := count(t, raw, `SELECT count(*) FROM tasks WHERE workspace_id = ?`, a.Workspaces[0]); n < spec.Tasks/2 {
		t.Errorf("first workspace holds %d of %d tasks, want most", n, spec.Tasks)
	}
}

// dump returns the rows of a query as text, one line a row.
func dump(t *testing.T, conn *sql.DB, query string) string {
	t.Helper()
	rows, err := conn.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rows.Next() {
		values := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range values {
			ptrs[i] = &values[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, values...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestSeedTwice(t *testing.T) {
	// A second seed of one database (another firm) makes ids of its own.
	ctx := context.Background()
	d, _, first := mustSeed(t, seed.Spec{Clients: 1, Tasks: 50, Workspaces: 1})
	other := mustFirm(t, d, "Other Firm")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := seed.Generate(ctx, d.Path(), other.ID, seed.Spec{Clients: 1, Tasks: 50, Workspaces: 1}, time.Now())
	if err != nil {
		t.Fatalf("second Seed: %v", err)
	}
	if first.Clients[0].ID == second.Clients[0].ID {
		t.Errorf("both seeds made client %s", first.Clients[0].ID)
	}
	if n := count(t, mustOpenRaw(t, d.Path()), `SELECT count(*) FROM tasks`); n != 100 {
		t.Errorf("tasks after two seeds: %d, want 100", n)
	}
}

func TestSeedRefusesBadSpecs(t *testing.T) {
	for _, spec := range []seed.Spec{
		{Clients: 0, Workspaces: 1},
		{Clients: 1, Workspaces: 0},
		{Clients: 1, Workspaces: 1, Tasks: -1},
		{Clients: 1, Workspaces: 1, ClientUsers: -1},
	} {
		if _, err := seed.Generate(context.Background(), filepath.Join(t.TempDir(), "x.db"), "firm", spec, time.Now()); err == nil {
			t.Errorf("Seed(%+v): got nil, want an error", spec)
		}
	}
}
