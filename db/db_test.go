package db_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/db"
)

var update = flag.Bool("update", false, "rewrite ../schema.sql from the migrations")

// schemaFile is the checked-in dump of the schema the migrations build.
const schemaFile = "../schema.sql"

// clock is a clock the tests move by hand instead of sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// mustOpenDB opens a migrated store in a new file under tb.TempDir().
func mustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	return mustOpenDBWith(tb, db.Options{})
}

// mustOpenDBWith is mustOpenDB with options, for an injected clock.
func mustOpenDBWith(tb testing.TB, opts db.Options) *db.DB {
	tb.Helper()
	d := mustOpenEmptyDB(tb, filepath.Join(tb.TempDir(), "acct.db"), opts)
	if err := d.MigrateUp(); err != nil {
		tb.Fatalf("MigrateUp: got %v, want nil", err)
	}
	return d
}

// mustOpenEmptyDB opens the store at path without migrating it.
func mustOpenEmptyDB(tb testing.TB, path string, opts db.Options) *db.DB {
	tb.Helper()
	d, err := db.Open(path, opts)
	if err != nil {
		tb.Fatalf("Open(%s): got %v, want nil", path, err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("Close: got %v, want nil", err)
		}
	})
	return d
}

// mustOpenRaw opens a plain database/sql connection to the store's file,
// beside the store's own connections.
func mustOpenRaw(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		tb.Fatalf("sql.Open(%s): got %v, want nil", path, err)
	}
	tb.Cleanup(func() { raw.Close() })
	if err := raw.Ping(); err != nil {
		tb.Fatalf("ping %s: got %v, want nil", path, err)
	}
	return raw
}

func mustCreateFirm(tb testing.TB, d *db.DB, name string) *db.Firm {
	tb.Helper()
	f, err := d.CreateFirm(context.Background(), name)
	if err != nil {
		tb.Fatalf("CreateFirm(%q): got %v, want nil", name, err)
	}
	return f
}

func mustCreateClient(tb testing.TB, d *db.DB, firmID, name string) *db.Client {
	tb.Helper()
	c, err := d.CreateClient(context.Background(), firmID, db.ClientCreate{Name: name, Type: db.ClientLegalPerson})
	if err != nil {
		tb.Fatalf("CreateClient(%q): got %v, want nil", name, err)
	}
	return c
}

func mustCreateAPIKey(tb testing.TB, d *db.DB, firmID string, clientID *string, name string) *db.APIKey {
	tb.Helper()
	k, err := d.CreateAPIKey(context.Background(), firmID, db.APIKeyCreate{
		ID: db.NewID(), ClientID: clientID, Name: name, SecretHash: hash(name),
		Permissions: []string{"tasks:read"}, RateLimitMax: 10, RateLimitWindowMS: 1000,
	})
	if err != nil {
		tb.Fatalf("CreateAPIKey(%q): got %v, want nil", name, err)
	}
	return k
}

func hash(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

func ptr[T any](v T) *T { return &v }

// assertCode fails unless err is an *db.Error with the code.
func assertCode(tb testing.TB, err error, code string) {
	tb.Helper()
	var e *db.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error: got %v (%T), want *db.Error with code %s", err, err, code)
	}
	if e.Code != code {
		tb.Fatalf("error code: got %v, want %v (error %v)", e.Code, code, err)
	}
}

// count runs a count query on a connection.
func count(tb testing.TB, conn *sql.DB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := conn.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: got %v, want nil", query, err)
	}
	return n
}

func TestSchemaFile(t *testing.T) {
	d := mustOpenDB(t)
	got, err := d.Dump(context.Background())
	if err != nil {
		t.Fatalf("Dump: got %v, want nil", err)
	}
	if strings.Contains(got, "schema_migrations") {
		t.Errorf("Dump holds golang-migrate's schema_migrations table; want it left out")
	}
	if *update {
		if err := os.WriteFile(schemaFile, []byte(got), 0o644); err != nil {
			t.Fatalf("write %s: got %v, want nil", schemaFile, err)
		}
		t.Logf("wrote %s", schemaFile)
		return
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("read %s: got %v, want nil (create it with `go test ./db -run TestSchemaFile -update`)", schemaFile, err)
	}
	if got != string(want) {
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gotLines), len(wantLines)); i++ {
			var g, w string
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Fatalf("%s is stale at line %d: got %q, want %q; run `go test ./db -run TestSchemaFile -update` and commit it", schemaFile, i+1, g, w)
			}
		}
	}

	t.Run("stable", func(t *testing.T) {
		again, err := d.Dump(context.Background())
		if err != nil {
			t.Fatalf("Dump: got %v, want nil", err)
		}
		if again != got {
			t.Errorf("second Dump differs from the first")
		}
	})
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	latest := db.LatestVersion()
	if latest < 1 {
		t.Fatalf("LatestVersion: got %v, want at least 1", latest)
	}

	t.Run("fresh database is empty", func(t *testing.T) {
		d := mustOpenEmptyDB(t, filepath.Join(t.TempDir(), "acct.db"), db.Options{})
		state, err := d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if want := (db.SchemaState{Empty: true}); state != want {
			t.Errorf("Schema: got %+v, want %+v", state, want)
		}
		err = d.CheckSchema(ctx)
		if err == nil || !strings.Contains(err.Error(), "acctapi migrate") {
			t.Errorf("CheckSchema: got %v, want an error telling to run `acctapi migrate`", err)
		}
	})

	t.Run("up, down and up again", func(t *testing.T) {
		d := mustOpenEmptyDB(t, filepath.Join(t.TempDir(), "acct.db"), db.Options{})
		if err := d.MigrateUp(); err != nil {
			t.Fatalf("MigrateUp: got %v, want nil", err)
		}
		state, err := d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if want := (db.SchemaState{Version: latest}); state != want {
			t.Errorf("Schema after MigrateUp: got %+v, want %+v", state, want)
		}
		if err := d.CheckSchema(ctx); err != nil {
			t.Errorf("CheckSchema after MigrateUp: got %v, want nil", err)
		}
		if err := d.MigrateUp(); err != nil {
			t.Errorf("second MigrateUp (no change): got %v, want nil", err)
		}

		if err := d.MigrateDown(1); err != nil {
			t.Fatalf("MigrateDown(1): got %v, want nil", err)
		}
		state, err = d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if state.Version >= latest || state.Dirty {
			t.Errorf("Schema after MigrateDown(1): got %+v, want a clean version below %d", state, latest)
		}
		err = d.CheckSchema(ctx)
		if err == nil || !strings.Contains(err.Error(), "acctapi migrate") {
			t.Errorf("CheckSchema after MigrateDown(1): got %v, want an error containing %q", err, "acctapi migrate")
		}
		if latest == 1 {
			if _, err := d.CreateFirm(ctx, "Gone"); err == nil {
				t.Errorf("CreateFirm after migrating down to 0: got nil, want an error (no firms table)")
			}
		}

		if err := d.MigrateUp(); err != nil {
			t.Fatalf("MigrateUp after MigrateDown: got %v, want nil", err)
		}
		state, err = d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if want := (db.SchemaState{Version: latest}); state != want {
			t.Errorf("Schema after MigrateUp again: got %+v, want %+v", state, want)
		}
		if err := d.CheckSchema(ctx); err != nil {
			t.Errorf("CheckSchema after MigrateUp again: got %v, want nil", err)
		}
		mustCreateFirm(t, d, "Back again")
	})

	t.Run("versions 3, 4, 8, 10, 13 and 20 give webhooks, collects, mail, firm, banking and export permissions to keys that held every one", func(t *testing.T) {
		d := mustOpenDB(t)
		firm := mustCreateFirm(t, d, "Keys")
		client := mustCreateClient(t, d, firm.ID, "Client")
		// Down to version 2, before any of them: as many steps as there are
		// migrations after it.
		ups, err := filepath.Glob("migrations/*.up.sql")
		if err != nil {
			t.Fatal(err)
		}
		down := len(ups) - 2
		if err := d.MigrateDown(down); err != nil {
			t.Fatalf("MigrateDown(%d): got %v, want nil", down, err)
		}
		before := "tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write " +
			"files:read files:write clients:read clients:write accountant_users:read accountant_users:write"
		clientBefore := "tasks:read tasks:write workspaces:read workspaces:write members:read members:write users:read users:write " +
			"files:read files:write"
		keys := []struct {
			name     string
			clientID *string
			perms    string
			want     string
		}{
			{"every permission", nil, before, before + " webhooks:read webhooks:write collects:read collects:write mail:send firm:read firm:write banking:read banking:write exports:read exports:write"},
			{"chosen permissions", nil, "tasks:read clients:read", "tasks:read clients:read"},
			{"client key, every permission", &client.ID, clientBefore, clientBefore + " collects:read collects:write banking:read banking:write"},
			{"client key", &client.ID, "tasks:read tasks:write", "tasks:read tasks:write"},
		}
		for i, k := range keys {
			key, err := d.CreateAPIKey(ctx, firm.ID, db.APIKeyCreate{ID: db.NewID(), ClientID: k.clientID, Name: k.name,
				SecretHash: hash(k.name), Permissions: strings.Fields(k.perms), RateLimitMax: 10, RateLimitWindowMS: 1000})
			if err != nil {
				t.Fatalf("CreateAPIKey(%q): got %v, want nil", k.name, err)
			}
			keys[i].name = key.ID
		}
		permissions := func() map[string]string {
			got := map[string]string{}
			for _, k := range keys {
				key, err := d.FindAPIKey(ctx, k.name)
				if err != nil {
					t.Fatalf("FindAPIKey: got %v, want nil", err)
				}
				got[k.name] = strings.Join(key.Permissions, " ")
			}
			return got
		}
		if err := d.MigrateUp(); err != nil {
			t.Fatalf("MigrateUp: got %v, want nil", err)
		}
		got := permissions()
		for _, k := range keys {
			if got[k.name] != k.want {
				t.Errorf("permissions after migrating up, key with %q: got %q, want %q", k.perms, got[k.name], k.want)
			}
		}
		if err := d.MigrateDown(down); err != nil {
			t.Fatalf("MigrateDown(%d): got %v, want nil", down, err)
		}
		got = permissions()
		for _, k := range keys {
			if got[k.name] != k.perms {
				t.Errorf("permissions after migrating down again, key with %q: got %q, want %q", k.perms, got[k.name], k.perms)
			}
		}
	})

	t.Run("newer than the binary", func(t *testing.T) {
		d := mustOpenDB(t)
		raw := mustOpenRaw(t, d.Path())
		if _, err := raw.Exec(`UPDATE schema_migrations SET version = 999`); err != nil {
			t.Fatalf("set version: got %v, want nil", err)
		}
		state, err := d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if want := (db.SchemaState{Version: 999}); state != want {
			t.Errorf("Schema: got %+v, want %+v", state, want)
		}
		err = d.CheckSchema(ctx)
		if err == nil {
			t.Fatalf("CheckSchema: got nil, want an error")
		}
		// The path may hold digits of its own: look at the rest.
		msg := strings.ReplaceAll(err.Error(), d.Path(), "<path>")
		for _, v := range []uint{999, latest} {
			if !regexp.MustCompile(fmt.Sprintf(`\b%d\b`, v)).MatchString(msg) {
				t.Errorf("CheckSchema: got %q, want it to name version %d", msg, v)
			}
		}
	})

	t.Run("dirty", func(t *testing.T) {
		d := mustOpenDB(t)
		raw := mustOpenRaw(t, d.Path())
		if _, err := raw.Exec(`UPDATE schema_migrations SET dirty = 1`); err != nil {
			t.Fatalf("set dirty: got %v, want nil", err)
		}
		state, err := d.Schema(ctx)
		if err != nil {
			t.Fatalf("Schema: got %v, want nil", err)
		}
		if want := (db.SchemaState{Version: latest, Dirty: true}); state != want {
			t.Errorf("Schema: got %+v, want %+v", state, want)
		}
		err = d.CheckSchema(ctx)
		if err == nil || !strings.Contains(err.Error(), "failed") {
			t.Errorf("CheckSchema: got %v, want an error containing %q", err, "failed")
		}
		if err := d.MigrateUp(); err == nil {
			t.Errorf("MigrateUp on a dirty database: got nil, want an error")
		}
	})

	t.Run("down needs a positive count", func(t *testing.T) {
		d := mustOpenDB(t)
		for _, n := range []int{0, -1} {
			if err := d.MigrateDown(n); err == nil {
				t.Errorf("MigrateDown(%d): got nil, want an error", n)
			}
		}
		if err := d.CheckSchema(ctx); err != nil {
			t.Errorf("CheckSchema after refused MigrateDown: got %v, want nil", err)
		}
	})
}

func TestOpen(t *testing.T) {
	ctx := context.Background()

	t.Run("bogus synchronous", func(t *testing.T) {
		d, err := db.Open(filepath.Join(t.TempDir(), "acct.db"), db.Options{Synchronous: "bogus"})
		if err == nil {
			d.Close()
			t.Fatalf("Open: got nil error, want one")
		}
		if !strings.Contains(err.Error(), "bogus") {
			t.Errorf("Open: got %v, want the error to name %q", err, "bogus")
		}
	})

	t.Run("synchronous", func(t *testing.T) {
		// PRAGMA synchronous reads 1 for NORMAL, 2 for FULL, 3 for EXTRA.
		for _, tt := range []struct {
			setting string
			want    int
		}{{"", 2}, {"normal", 1}, {"NORMAL", 1}, {"Full", 2}, {"extra", 3}} {
			t.Run(fmt.Sprintf("%q", tt.setting), func(t *testing.T) {
				d := mustOpenEmptyDB(t, filepath.Join(t.TempDir(), "acct.db"), db.Options{Synchronous: tt.setting})
				write, read := d.Handles()
				for name, conn := range map[string]*sql.DB{"writer": write, "reader": read} {
					var got int
					if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&got); err != nil {
						t.Fatalf("%s PRAGMA synchronous: got %v, want nil", name, err)
					}
					if got != tt.want {
						t.Errorf("%s PRAGMA synchronous: got %v, want %v", name, got, tt.want)
					}
				}
			})
		}
	})

	t.Run("wal", func(t *testing.T) {
		d := mustOpenDB(t)
		raw := mustOpenRaw(t, d.Path())
		var mode string
		if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatalf("PRAGMA journal_mode: got %v, want nil", err)
		}
		if mode != "wal" {
			t.Errorf("journal_mode: got %v, want %v", mode, "wal")
		}
		if got := d.Path(); filepath.Base(got) != "acct.db" {
			t.Errorf("Path: got %v, want a path ending in acct.db", got)
		}
		if err := d.Ping(ctx); err != nil {
			t.Errorf("Ping: got %v, want nil", err)
		}
	})

	t.Run("connection pragmas", func(t *testing.T) {
		d := mustOpenDB(t)
		write, read := d.Handles()
		for _, tt := range []struct {
			conn   string
			db     *sql.DB
			pragma string
			want   int
		}{
			{"writer", write, "foreign_keys", 1},
			{"reader", read, "foreign_keys", 1},
			{"writer", write, "busy_timeout", 10000},
			{"reader", read, "busy_timeout", 10000},
			{"writer", write, "query_only", 0},
			{"reader", read, "query_only", 1},
			// Page caches by role, in KiB (docs/decisions.md, Memory).
			{"writer", write, "cache_size", -8000},
			{"reader", read, "cache_size", -500},
			{"writer", write, "wal_autocheckpoint", 8000},
		} {
			var got int
			if err := tt.db.QueryRowContext(ctx, `PRAGMA `+tt.pragma).Scan(&got); err != nil {
				t.Fatalf("%s PRAGMA %s: got %v, want nil", tt.conn, tt.pragma, err)
			}
			if got != tt.want {
				t.Errorf("%s PRAGMA %s: got %v, want %v", tt.conn, tt.pragma, got, tt.want)
			}
		}
		if _, err := read.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES ('x', 'y', 0)`); err == nil {
			t.Errorf("write through a reader connection: got nil, want an error")
		}
	})

	t.Run("foreign keys", func(t *testing.T) {
		d := mustOpenDB(t)
		firm := mustCreateFirm(t, d, "Firm")

		// The store's own check: a client key needs a client of the firm.
		_, err := d.CreateAPIKey(ctx, firm.ID, db.APIKeyCreate{
			ID: db.NewID(), ClientID: ptr(db.NewID()), Name: "k", SecretHash: hash("k"),
			Permissions: []string{"tasks:read"}, RateLimitMax: 1, RateLimitWindowMS: 1000,
		})
		assertCode(t, err, db.ENOTFOUND)

		// SQLite's check on the store's writer: no key of a firm that does not exist.
		_, err = d.CreateAPIKey(ctx, db.NewID(), db.APIKeyCreate{
			ID: db.NewID(), Name: "k", SecretHash: hash("k"),
			Permissions: []string{"tasks:read"}, RateLimitMax: 1, RateLimitWindowMS: 1000,
		})
		if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Errorf("CreateAPIKey of a missing firm: got %v, want a FOREIGN KEY constraint error", err)
		}

		// And on a separate connection that asks for foreign keys.
		raw := mustOpenRaw(t, d.Path())
		_, err = raw.Exec(`INSERT INTO clients (id, firm_id, name, slug, type, created_at, updated_at)
			VALUES (?, ?, 'Orphan', 'orphan', 'legal_person', 0, 0)`, db.NewID(), db.NewID())
		if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
			t.Errorf("raw insert of a client of a missing firm: got %v, want a FOREIGN KEY constraint error", err)
		}
	})

	t.Run("missing directory", func(t *testing.T) {
		d, err := db.Open(filepath.Join(t.TempDir(), "no", "such", "dir", "acct.db"), db.Options{})
		if err == nil {
			d.Close()
			t.Errorf("Open in a missing directory: got nil error, want one")
		}
	})

	// The path goes into a SQLite URI: '#', '?' and '%' in it must stay part
	// of the file name ("a#b/acct.db" must not open a file named "a").
	t.Run("path with URI characters", func(t *testing.T) {
		// Subtest names stay plain: t.TempDir() puts the name in its path.
		for _, tt := range []struct{ name, dir string }{
			{"hash", "a#b"}, {"question mark", "x?y"}, {"percent", "p%41q"}, {"space", "with space"},
		} {
			dir := tt.dir
			t.Run(tt.name, func(t *testing.T) {
				parent := t.TempDir()
				path := filepath.Join(parent, dir, "acct.db")
				if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				d, err := db.Open(path, db.Options{})
				if err != nil {
					t.Fatalf("Open(%q): got %v, want nil", path, err)
				}
				defer d.Close()
				if err := d.MigrateUp(); err != nil {
					t.Fatalf("MigrateUp: got %v, want nil", err)
				}
				if _, err := os.Stat(path); err != nil {
					var stray []string
					entries, _ := os.ReadDir(parent)
					for _, e := range entries {
						stray = append(stray, e.Name())
					}
					t.Errorf("database file at %q: got %v, want it to exist (%s holds %q)",
						path, err, parent, stray)
				}
			})
		}
	})
}

func TestConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	firm := mustCreateFirm(t, d, "Busy Firm")
	reader := mustCreateClient(t, d, firm.ID, "Reader")

	const writers, readers = 64, 8
	start := make(chan struct{})
	done := make(chan struct{})
	var wg, readWG sync.WaitGroup
	clients := make([]*db.Client, writers)
	errs := make([]error, writers)
	readErrs := make(chan error, readers)
	for i := range writers {
		wg.Go(func() {
			<-start
			clients[i], errs[i] = d.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Name", Type: db.ClientNaturalPerson})
		})
	}
	for range readers {
		readWG.Go(func() {
			<-start
			for {
				if _, err := d.FindClient(ctx, firm.ID, reader.ID); err != nil {
					readErrs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(done)
	readWG.Wait()
	close(readErrs)

	for err := range readErrs {
		t.Errorf("concurrent FindClient: got %v, want nil", err)
	}
	want := make([]string, writers)
	for i := range want {
		want[i] = "name"
		if i > 0 {
			want[i] = fmt.Sprintf("name-%d", i+1)
		}
	}
	var got []string
	for i := range writers {
		if errs[i] != nil {
			t.Errorf("concurrent CreateClient %d: got %v, want nil", i, errs[i])
			continue
		}
		got = append(got, clients[i].Slug)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("slugs: got %v, want %v", got, want)
	}
	raw := mustOpenRaw(t, d.Path())
	if n := count(t, raw, `SELECT count(*) FROM clients WHERE firm_id = ?`, firm.ID); n != writers+1 {
		t.Errorf("stored clients: got %v, want %v", n, writers+1)
	}
}

func TestSlugify(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"german", "Müller & Söhne GmbH", "mueller-soehne-gmbh"},
		{"punctuation and spaces", "  Hello,  World!! ", "hello-world"},
		{"nordic capitals", "ÆØÅ", "aeoeaa"},
		{"no latin letters", "東京", "client"},
		{"empty", "", "client"},
		{"only punctuation", "--- !! ---", "client"},
		{"sharp s", "Straße", "strasse"},
		{"polish", "Łódź", "lodz"},
		{"accented capitals", "ÉCOLE Ñandú", "ecole-nandu"},
		{"digits", "100% Bio 2026", "100-bio-2026"},
		{"underscore", "a_b", "a-b"},
		{"mixed scripts", "Café 東京 Bar", "cafe-bar"},
		{"turkish dotted capital", "İstanbul Ltd", "istanbul-ltd"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := db.Slugify(tt.in); got != tt.want {
				t.Errorf("Slugify(%q): got %v, want %v", tt.in, got, tt.want)
			}
		})
	}

	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	t.Run("long names", func(t *testing.T) {
		for _, in := range []string{
			strings.Repeat("abcdefghi ", 20),
			strings.Repeat("x", 200),
			strings.Repeat("ä", 200),
			strings.Repeat("a ", 100),
			strings.Repeat("Ab-", 70),
		} {
			got := db.Slugify(in)
			if len(got) > 64 || len(got) < 50 {
				t.Errorf("len(Slugify(%.20q...)): got %v (%q), want 50 to 64", in, len(got), got)
			}
			if !valid.MatchString(got) {
				t.Errorf("Slugify(%.20q...): got %q, want lower-case ASCII words joined by single hyphens", in, got)
			}
		}
	})

	// NFD input, as macOS and some browsers send it: "u" followed by
	// U+0308 COMBINING DIAERESIS must read as "ü".
	t.Run("decomposed umlaut", func(t *testing.T) {
		in := "Mu\u0308ller"
		if got := db.Slugify(in); got != "mueller" {
			t.Errorf("Slugify(%+q): got %v, want mueller", in, got)
		}
	})
}

func TestCreateClient(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm A")
	other := mustCreateFirm(t, d, "Firm B")

	first := mustCreateClient(t, d, firm.ID, "Müller & Söhne")
	t.Run("slug", func(t *testing.T) {
		if got, want := first.Slug, "mueller-soehne"; got != want {
			t.Errorf("slug: got %v, want %v", got, want)
		}
		second := mustCreateClient(t, d, firm.ID, "Müller & Söhne")
		if got, want := second.Slug, "mueller-soehne-2"; got != want {
			t.Errorf("second slug: got %v, want %v", got, want)
		}
		if second.ID == first.ID {
			t.Errorf("second id: got %v, want a new id", second.ID)
		}
		// A name whose slug looks like a suffixed one does not confuse the count.
		mustCreateClient(t, d, firm.ID, "Müller Söhne 4")
		third := mustCreateClient(t, d, firm.ID, "MÜLLER & SÖHNE")
		if got, want := third.Slug, "mueller-soehne-3"; got != want {
			t.Errorf("third slug: got %v, want %v", got, want)
		}
		fifth := mustCreateClient(t, d, firm.ID, "Müller & Söhne")
		if got, want := fifth.Slug, "mueller-soehne-5"; got != want {
			t.Errorf("slug after -4 was taken by another name: got %v, want %v", got, want)
		}
		inOther := mustCreateClient(t, d, other.ID, "Müller & Söhne")
		if got, want := inOther.Slug, "mueller-soehne"; got != want {
			t.Errorf("slug in another firm: got %v, want %v", got, want)
		}
	})

	t.Run("find", func(t *testing.T) {
		got, err := d.FindClient(ctx, firm.ID, first.ID)
		if err != nil {
			t.Fatalf("FindClient: got %v, want nil", err)
		}
		if got.ID != first.ID || got.FirmID != firm.ID || got.Name != "Müller & Söhne" || got.Slug != first.Slug || got.Type != db.ClientLegalPerson {
			t.Errorf("FindClient: got %+v, want %+v", got, first)
		}
		if !got.CreatedAt.Equal(c.Now()) || !got.UpdatedAt.Equal(c.Now()) {
			t.Errorf("timestamps: got %v/%v, want %v", got.CreatedAt, got.UpdatedAt, c.Now())
		}
		if got.ArchivedAt != nil || got.LedgerClientID != nil {
			t.Errorf("ArchivedAt, LedgerClientID: got %v, %v, want nil, nil", got.ArchivedAt, got.LedgerClientID)
		}
	})

	t.Run("tenant isolation", func(t *testing.T) {
		_, err := d.FindClient(ctx, other.ID, first.ID)
		assertCode(t, err, db.ENOTFOUND)
		_, err = d.FindClient(ctx, firm.ID, db.NewID())
		assertCode(t, err, db.ENOTFOUND)
	})

	t.Run("optional fields", func(t *testing.T) {
		plain, err := d.FindClient(ctx, firm.ID, first.ID)
		if err != nil {
			t.Fatalf("FindClient: got %v, want nil", err)
		}
		if plain.CustomID != nil || plain.LegalName != nil {
			t.Errorf("CustomID, LegalName unset: got %v, %v, want nil, nil", plain.CustomID, plain.LegalName)
		}
		if plain.Address != (db.Address{}) {
			t.Errorf("Address unset: got %+v, want all nil", plain.Address)
		}

		in := db.ClientCreate{
			Name: "Full Client", Type: db.ClientIndividualEnterprise,
			CustomID: ptr("K-100"), LegalName: ptr("Full Client e.K."),
			Address: db.Address{Line1: ptr("Hauptstraße 1"), City: ptr("Berlin"), PostalCode: ptr("10115"), CountryCode: ptr("DE")},
		}
		created, err := d.CreateClient(ctx, firm.ID, in)
		if err != nil {
			t.Fatalf("CreateClient: got %v, want nil", err)
		}
		got, err := d.FindClient(ctx, firm.ID, created.ID)
		if err != nil {
			t.Fatalf("FindClient: got %v, want nil", err)
		}
		str := func(p *string) string {
			if p == nil {
				return "<nil>"
			}
			return *p
		}
		for _, f := range []struct{ name, got, want string }{
			{"CustomID", str(got.CustomID), "K-100"},
			{"LegalName", str(got.LegalName), "Full Client e.K."},
			{"Type", got.Type, db.ClientIndividualEnterprise},
			{"Address.Line1", str(got.Address.Line1), "Hauptstraße 1"},
			{"Address.Line2", str(got.Address.Line2), "<nil>"},
			{"Address.City", str(got.Address.City), "Berlin"},
			{"Address.PostalCode", str(got.Address.PostalCode), "10115"},
			{"Address.CountryCode", str(got.Address.CountryCode), "DE"},
		} {
			if f.got != f.want {
				t.Errorf("%s: got %v, want %v", f.name, f.got, f.want)
			}
		}
	})

	t.Run("invalid type", func(t *testing.T) {
		if _, err := d.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "X", Type: "robot"}); err == nil {
			t.Errorf("CreateClient with type robot: got nil, want an error")
		}
	})
}

func TestNewID(t *testing.T) {
	format := regexp.MustCompile(`^c[0-9a-z]{24}$`)

	t.Run("unique and well-formed", func(t *testing.T) {
		const n = 10000
		seen := make(map[string]bool, n)
		for range n {
			id := db.NewID()
			if !format.MatchString(id) {
				t.Fatalf("NewID: got %q, want it to match %v", id, format)
			}
			if seen[id] {
				t.Fatalf("NewID: got %q twice, want unique ids", id)
			}
			seen[id] = true
		}
	})

	t.Run("sorts by time", func(t *testing.T) {
		for _, base := range []time.Time{
			time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
			time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
			time.UnixMilli(35),                           // 35 ms is "z", 37 ms is "11"
			time.UnixMilli(int64(math.Pow(36, 7)) - 1),   // the 8th digit appears
			time.UnixMilli(int64(math.Pow(36, 8)) - 300), // up to the last ms the format holds
		} {
			for i := range 200 {
				at := base.Add(time.Duration(i) * time.Millisecond)
				earlier, later := db.NewIDAt(at), db.NewIDAt(at.Add(2*time.Millisecond))
				if !format.MatchString(earlier) || !format.MatchString(later) {
					t.Fatalf("NewIDAt(%v): got %q and %q, want both to match %v", at, earlier, later, format)
				}
				if later <= earlier {
					t.Fatalf("id 2 ms after %v: got %q <= %q, want it to sort after", at, later, earlier)
				}
			}
		}
	})

	// Known limit (db/id.go newIDAt): 8 base-36 digits hold milliseconds up
	// to 36^8-1, 2059-05-25; later, the 9-digit timestamp overwrites the "c".
	t.Run("after 2059", func(t *testing.T) {
		at := time.UnixMilli(int64(math.Pow(36, 8)))
		if id := db.NewIDAt(at); !format.MatchString(id) {
			t.Errorf("NewIDAt(%v): got %q, want the cuid format", at.UTC(), id)
		}
	})
}

func TestAPIKeys(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})
	firm := mustCreateFirm(t, d, "Firm A")
	client := mustCreateClient(t, d, firm.ID, "Client A")
	other := mustCreateFirm(t, d, "Firm B")
	otherClient := mustCreateClient(t, d, other.ID, "Client B")

	expires := c.Now().Add(30 * 24 * time.Hour)
	in := db.APIKeyCreate{
		ID: db.NewID(), Name: "accountant", SecretHash: hash("secret"),
		Permissions:  []string{"tasks:read", "tasks:write", "clients:read"},
		RateLimitMax: 120, RateLimitWindowMS: 30000, ExpiresAt: &expires,
	}
	created, err := d.CreateAPIKey(ctx, firm.ID, in)
	if err != nil {
		t.Fatalf("CreateAPIKey: got %v, want nil", err)
	}
	c.Advance(time.Second)
	clientKey := mustCreateAPIKey(t, d, firm.ID, &client.ID, "client")
	c.Advance(time.Second)
	otherKey := mustCreateAPIKey(t, d, other.ID, nil, "other firm")

	t.Run("round trip", func(t *testing.T) {
		got, err := d.FindAPIKey(ctx, in.ID)
		if err != nil {
			t.Fatalf("FindAPIKey: got %v, want nil", err)
		}
		if got.ID != in.ID || got.FirmID != firm.ID || got.Name != in.Name {
			t.Errorf("ID, FirmID, Name: got %v, %v, %v, want %v, %v, %v", got.ID, got.FirmID, got.Name, in.ID, firm.ID, in.Name)
		}
		if got.ClientID != nil {
			t.Errorf("ClientID of an accountant key: got %v, want nil", *got.ClientID)
		}
		if !bytes.Equal(got.SecretHash, in.SecretHash) {
			t.Errorf("SecretHash: got %x, want %x", got.SecretHash, in.SecretHash)
		}
		if !slices.Equal(got.Permissions, in.Permissions) {
			t.Errorf("Permissions: got %v, want %v", got.Permissions, in.Permissions)
		}
		if got.RateLimitMax != 120 || got.RateLimitWindowMS != 30000 {
			t.Errorf("rate limit: got %v per %v ms, want %v per %v ms", got.RateLimitMax, got.RateLimitWindowMS, 120, 30000)
		}
		if got.ExpiresAt == nil || !got.ExpiresAt.Equal(expires) {
			t.Errorf("ExpiresAt: got %v, want %v", got.ExpiresAt, expires)
		}
		if got.RevokedAt != nil {
			t.Errorf("RevokedAt: got %v, want nil", got.RevokedAt)
		}
		if !got.CreatedAt.Equal(created.CreatedAt) || !got.CreatedAt.Equal(newClock().Now()) {
			t.Errorf("CreatedAt: got %v, want %v", got.CreatedAt, newClock().Now())
		}

		gotClient, err := d.FindAPIKey(ctx, clientKey.ID)
		if err != nil {
			t.Fatalf("FindAPIKey of the client key: got %v, want nil", err)
		}
		if gotClient.ClientID == nil || *gotClient.ClientID != client.ID {
			t.Errorf("ClientID of a client key: got %v, want %v", gotClient.ClientID, client.ID)
		}
		if gotClient.ExpiresAt != nil {
			t.Errorf("ExpiresAt of a key without expiry: got %v, want nil", gotClient.ExpiresAt)
		}
	})

	t.Run("unknown id", func(t *testing.T) {
		_, err := d.FindAPIKey(ctx, db.NewID())
		assertCode(t, err, db.ENOTFOUND)
	})

	t.Run("list", func(t *testing.T) {
		ids := func(keys []*db.APIKey) []string {
			var s []string
			for _, k := range keys {
				s = append(s, k.ID)
			}
			return s
		}
		keys, err := d.ListAPIKeys(ctx, firm.ID)
		if err != nil {
			t.Fatalf("ListAPIKeys: got %v, want nil", err)
		}
		if got, want := ids(keys), []string{in.ID, clientKey.ID}; !slices.Equal(got, want) {
			t.Errorf("ListAPIKeys of firm A: got %v, want %v (oldest first)", got, want)
		}
		keys, err = d.ListAPIKeys(ctx, other.ID)
		if err != nil {
			t.Fatalf("ListAPIKeys: got %v, want nil", err)
		}
		if got, want := ids(keys), []string{otherKey.ID}; !slices.Equal(got, want) {
			t.Errorf("ListAPIKeys of firm B: got %v, want %v", got, want)
		}
		keys, err = d.ListAPIKeys(ctx, db.NewID())
		if err != nil || len(keys) != 0 {
			t.Errorf("ListAPIKeys of an unknown firm: got %v, %v, want no keys, nil", ids(keys), err)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		revokedAt := c.Now()
		k, err := d.RevokeAPIKey(ctx, firm.ID, clientKey.ID)
		if err != nil {
			t.Fatalf("RevokeAPIKey: got %v, want nil", err)
		}
		if k.RevokedAt == nil || !k.RevokedAt.Equal(revokedAt) {
			t.Errorf("RevokedAt: got %v, want %v", k.RevokedAt, revokedAt)
		}

		c.Advance(time.Hour)
		k, err = d.RevokeAPIKey(ctx, firm.ID, clientKey.ID)
		if err != nil {
			t.Fatalf("second RevokeAPIKey: got %v, want nil", err)
		}
		if k.RevokedAt == nil || !k.RevokedAt.Equal(revokedAt) {
			t.Errorf("RevokedAt after revoking twice: got %v, want the first time %v", k.RevokedAt, revokedAt)
		}
		found, err := d.FindAPIKey(ctx, clientKey.ID)
		if err != nil {
			t.Fatalf("FindAPIKey: got %v, want nil", err)
		}
		if found.RevokedAt == nil || !found.RevokedAt.Equal(revokedAt) {
			t.Errorf("stored RevokedAt: got %v, want %v", found.RevokedAt, revokedAt)
		}

		_, err = d.RevokeAPIKey(ctx, firm.ID, otherKey.ID)
		assertCode(t, err, db.ENOTFOUND)
		found, err = d.FindAPIKey(ctx, otherKey.ID)
		if err != nil {
			t.Fatalf("FindAPIKey: got %v, want nil", err)
		}
		if found.RevokedAt != nil {
			t.Errorf("RevokedAt of firm B's key after firm A tried to revoke it: got %v, want nil", found.RevokedAt)
		}
		_, err = d.RevokeAPIKey(ctx, firm.ID, db.NewID())
		assertCode(t, err, db.ENOTFOUND)
	})

	t.Run("client of another firm", func(t *testing.T) {
		_, err := d.CreateAPIKey(ctx, firm.ID, db.APIKeyCreate{
			ID: db.NewID(), ClientID: &otherClient.ID, Name: "sneaky", SecretHash: hash("sneaky"),
			Permissions: []string{"tasks:read"}, RateLimitMax: 1, RateLimitWindowMS: 1000,
		})
		assertCode(t, err, db.ENOTFOUND)
		keys, err := d.ListAPIKeys(ctx, firm.ID)
		if err != nil {
			t.Fatalf("ListAPIKeys: got %v, want nil", err)
		}
		if len(keys) != 2 {
			t.Errorf("firm A's keys after the refused create: got %v, want %v", len(keys), 2)
		}
	})
}

func TestCreateFirm(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	d := mustOpenDBWith(t, db.Options{Now: c.Now})

	t.Run("no firm yet", func(t *testing.T) {
		_, err := d.DeploymentFirm(ctx)
		assertCode(t, err, db.ENOTFOUND)
	})

	firm := mustCreateFirm(t, d, "Steuerkanzlei Beispiel")
	if firm.Name != "Steuerkanzlei Beispiel" || !firm.CreatedAt.Equal(c.Now()) || !firm.UpdatedAt.Equal(c.Now()) {
		t.Errorf("CreateFirm: got %+v, want name %q created at %v", firm, "Steuerkanzlei Beispiel", c.Now())
	}

	t.Run("built-in roles", func(t *testing.T) {
		raw := mustOpenRaw(t, d.Path())
		rows, err := raw.Query(`SELECT name FROM roles WHERE firm_id = ? AND custom_name IS NULL ORDER BY name`, firm.ID)
		if err != nil {
			t.Fatalf("query roles: got %v, want nil", err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			got = append(got, name)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if want := []string{"admin", "user"}; !slices.Equal(got, want) {
			t.Errorf("roles: got %v, want %v", got, want)
		}
	})

	t.Run("deployment firm", func(t *testing.T) {
		c.Advance(time.Second)
		mustCreateFirm(t, d, "Later Firm")
		got, err := d.DeploymentFirm(ctx)
		if err != nil {
			t.Fatalf("DeploymentFirm: got %v, want nil", err)
		}
		if got.ID != firm.ID || got.Name != firm.Name {
			t.Errorf("DeploymentFirm: got %+v, want the first firm %+v", got, firm)
		}
	})
}

// TestStorageFaults makes SQLite itself report a full disk, a read-only
// database and a lock held too long, and checks how each is classified,
// and that the store writes again once the fault is gone.
func TestStorageFaults(t *testing.T) {
	ctx := context.Background()
	store := mustOpenDB(t)
	write, _ := store.Handles()
	// A migration that makes a table again leaves free pages, which a
	// write would fill before it needs a new one.
	if _, err := write.ExecContext(ctx, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := write.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := write.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	_, err := store.CreateFirm(ctx, strings.Repeat("a firm that needs a new page ", 200))
	if !db.IsStorageFull(err) || db.IsStorageUnavailable(err) {
		t.Fatalf("CreateFirm on a database at its size limit: %v; want a full-storage error", err)
	}
	if _, err := write.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateFirm(ctx, "room again"); err != nil {
		t.Fatalf("CreateFirm once there is room: %v", err)
	}

	readOnly, err := sql.Open("sqlite", "file:"+store.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer readOnly.Close()
	_, err = readOnly.ExecContext(ctx, `DELETE FROM firms`)
	if !db.IsStorageUnavailable(err) || db.IsStorageFull(err) {
		t.Fatalf("a write on a read-only connection: %v; want an unavailable-storage error", err)
	}

	holder, err := sql.Open("sqlite", "file:"+store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	impatient, err := sql.Open("sqlite", "file:"+store.Path()+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	_, err = impatient.ExecContext(ctx, `DELETE FROM firms`)
	if !db.IsStorageUnavailable(err) {
		t.Fatalf("a write while another connection holds the lock: %v; want an unavailable-storage error", err)
	}
	if db.IsStorageFull(errors.New("disk full")) || db.IsStorageUnavailable(errors.New("busy")) {
		t.Fatal("errors that are not SQLite's are classified as storage faults")
	}
}
