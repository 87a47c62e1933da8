package cmd

import (
	"acctapi/server/servertest"

	"acctapi/server"

	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
	"acctapi/db/seed"
)

// keyRE matches an API key as the server prints it: ak_<id>_<64 hex digits>.
var keyRE = regexp.MustCompile(`ak_[a-z0-9]+_[0-9a-f]{64}`)

// demoClientRE finds the demo client's id in the --demo banner.
var demoClientRE = regexp.MustCompile(`demo client (c[0-9a-z]+)`)

// demoCollectPageRE finds the demo collect's page in the --demo banner: the
// public address and the token.
var demoCollectPageRE = regexp.MustCompile(`(http://\S+)/collect/([A-Za-z0-9_-]{43})\n`)

// testConfig is the Config of an in-process server on a free port of the
// loopback interface, with its output captured.
func testConfig(dir string) (cfg *Config, stdout, stderr *servertest.SyncBuffer) {
	stdout, stderr = &servertest.SyncBuffer{}, &servertest.SyncBuffer{}
	return &Config{Stdout: stdout, Config: server.Config{
		Addr:            "127.0.0.1:0",
		DataDir:         dir,
		Synchronous:     "FULL",
		FirmName:        "Test firm",
		LogFormat:       "json",
		ShutdownTimeout: 5 * time.Second,
		CacheDir:        servertest.CacheDir,
		Stderr:          stderr,
		Version:         version,
		Commit:          buildCommit(),
	}}, stdout, stderr
}

// running is a server started with Run in a goroutine.
type running struct {
	*servertest.Running
	srv  *server.Server
	base string // http://<addr>/v1
}

// openServer calls OpenServer and fails the test on error.
func openServer(t *testing.T, cfg *Config) *server.Server {
	t.Helper()
	srv, err := server.Open(context.Background(), &cfg.Config)
	if err != nil {
		t.Fatalf("OpenServer: %v", err)
	}
	return srv
}

// startServer opens and runs a server; the test's cleanup stops it if the
// test did not.
func startServer(t *testing.T, cfg *Config) *running {
	t.Helper()
	return runServer(t, openServer(t, cfg))
}

func runServer(t *testing.T, srv *server.Server) *running {
	t.Helper()
	return &running{Running: servertest.Start(t, srv.Run, srv.Close), srv: srv, base: "http://" + srv.Addr() + "/v1"}
}

// stop stops the server; see servertest.Running.Stop.
func (r *running) stop() error { return r.Stop() }

// besideStore opens a running server's database beside it, as another
// process on the data dir would; the test's cleanup closes it.
func besideStore(t *testing.T, cfg *Config) *db.DB {
	t.Helper()
	store, err := openStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// principal is the body of GET /v1/me.
type principal struct {
	Type                string   `json:"type"`
	AccountantID        string   `json:"accountantId"`
	ClientID            *string  `json:"clientId"`
	APIKeyID            string   `json:"apiKeyId"`
	RateLimitMax        int      `json:"rateLimitMax"`
	RateLimitTimeWindow int64    `json:"rateLimitTimeWindow"`
	Permissions         []string `json:"permissions"`
}

// me calls GET /v1/me with the key, requires 200 and returns the principal.
func me(t *testing.T, base, key string) principal {
	t.Helper()
	status, _, body := servertest.Get(t, base+"/me", key)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/me: status %d, body %s", status, body)
	}
	var p principal
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("GET /v1/me: %v in %s", err, body)
	}
	return p
}

// allPermissions is every permission an accountant key holds.
var allPermissions = []string{
	"tasks:read", "tasks:write", "workspaces:read", "workspaces:write", "members:read", "members:write",
	"users:read", "users:write", "files:read", "files:write", "clients:read", "clients:write",
	"accountant_users:read", "accountant_users:write", "webhooks:read", "webhooks:write",
	"collects:read", "collects:write", "mail:send", "firm:read", "firm:write", "banking:read", "banking:write",
	"exports:read", "exports:write",
}

// keyID returns the id part of a key string ak_<id>_<secret>.
func keyID(key string) string {
	rest := strings.TrimPrefix(key, "ak_")
	return rest[:strings.LastIndexByte(rest, '_')]
}

// secretOf returns the secret part of a key string.
func secretOf(key string) string { return key[strings.LastIndexByte(key, '_')+1:] }

func TestServerFirstStart(t *testing.T) {
	dir := t.TempDir()
	cfg, _, stderr := testConfig(dir)
	r := startServer(t, cfg)

	key := r.srv.FirstKey
	if !strings.HasPrefix(key, "ak_") || !keyRE.MatchString(key) {
		t.Fatalf("FirstKey = %q, want an ak_<id>_<secret> key", key)
	}

	p := me(t, r.base, key)
	if p.Type != "accountant" {
		t.Errorf("type = %q, want accountant", p.Type)
	}
	if p.AccountantID == "" {
		t.Error("accountantId is empty")
	}
	if p.ClientID != nil {
		t.Errorf("clientId = %q, want absent for an accountant key", *p.ClientID)
	}
	if p.APIKeyID != keyID(key) {
		t.Errorf("apiKeyId = %q, want %q", p.APIKeyID, keyID(key))
	}
	if len(p.Permissions) != len(allPermissions) {
		t.Errorf("%d permissions %v, want %d", len(p.Permissions), p.Permissions, len(allPermissions))
	}
	for _, perm := range allPermissions {
		if !slices.Contains(p.Permissions, perm) {
			t.Errorf("permissions %v lack %s", p.Permissions, perm)
		}
	}
	if p.RateLimitMax != 600 || p.RateLimitTimeWindow != 60000 {
		t.Errorf("rate limit %d per %d ms, want the default 600 per 60000", p.RateLimitMax, p.RateLimitTimeWindow)
	}

	status, header, body := servertest.Get(t, r.base+"/health", "")
	if status != http.StatusOK {
		t.Fatalf("GET /v1/health: %d %s", status, body)
	}
	var health map[string]any
	if err := json.Unmarshal(body, &health); err != nil {
		t.Fatalf("GET /v1/health: %v in %s", err, body)
	}
	if health["status"] != "ok" {
		t.Errorf("health = %s, want status ok", body)
	}
	if _, ok := health["version"].(string); !ok {
		t.Errorf("health = %s, want a version string", body)
	}
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("health Content-Type = %q", ct)
	}

	if err := r.stop(); err != nil {
		t.Fatalf("stopping the server: %v", err)
	}
	logs := stderr.String()
	if n := strings.Count(logs, key); n != 1 {
		t.Errorf("the first key appears %d times in stderr, want exactly once (the banner):\n%s", n, logs)
	}
	if n := len(keyRE.FindAllString(logs, -1)); n != 1 {
		t.Errorf("stderr holds %d keys, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs, `"msg":"listening"`) || !strings.Contains(logs, `"msg":"shutting down"`) {
		t.Errorf("stderr lacks the listening/shutting down log lines:\n%s", logs)
	}
	if !regexp.MustCompile(`"msg":"API reference","url":"https?://[^"]+/v1/docs"`).MatchString(logs) {
		t.Errorf("stderr lacks the line with the API reference's address:\n%s", logs)
	}

	// A second start on the same data dir mints nothing and keeps the key.
	cfg2, _, stderr2 := testConfig(dir)
	r2 := startServer(t, cfg2)
	if r2.srv.FirstKey != "" {
		t.Errorf("second start minted another key %q", r2.srv.FirstKey)
	}
	if p2 := me(t, r2.base, key); p2.APIKeyID != p.APIKeyID || p2.AccountantID != p.AccountantID {
		t.Errorf("after restart the first key is %+v, was %+v", p2, p)
	}
	if err := r2.stop(); err != nil {
		t.Fatalf("stopping the second server: %v", err)
	}
	if keys := keyRE.FindAllString(stderr2.String(), -1); len(keys) != 0 {
		t.Errorf("second start printed keys %v:\n%s", keys, stderr2.String())
	}
}

func TestServerDemo(t *testing.T) {
	dir := t.TempDir()
	cfg, _, stderr := testConfig(dir)
	cfg.Demo = true
	r := startServer(t, cfg)

	banner := stderr.String()
	m := demoClientRE.FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("stderr does not name the demo client:\n%s", banner)
	}
	clientID := m[1]
	keys := keyRE.FindAllString(banner, -1)
	if len(keys) != 2 || keys[0] != r.srv.FirstKey {
		t.Fatalf("stderr holds keys %v, want the first key %q then the demo client key:\n%s", keys, r.srv.FirstKey, banner)
	}
	clientKey := keys[1]

	p := me(t, r.base, clientKey)
	if p.Type != "client" {
		t.Errorf("type = %q, want client", p.Type)
	}
	if p.ClientID == nil || *p.ClientID != clientID {
		t.Errorf("clientId = %v, want %s", p.ClientID, clientID)
	}
	if p.APIKeyID != keyID(clientKey) {
		t.Errorf("apiKeyId = %q, want %q", p.APIKeyID, keyID(clientKey))
	}
	if acct := me(t, r.base, r.srv.FirstKey); acct.AccountantID != p.AccountantID {
		t.Errorf("client key of firm %s, accountant key of firm %s", p.AccountantID, acct.AccountantID)
	}
	if len(p.Permissions) == 0 {
		t.Error("the demo client key holds no permissions")
	}
	for _, perm := range p.Permissions {
		if strings.HasPrefix(perm, "clients:") || strings.HasPrefix(perm, "accountant_users:") {
			t.Errorf("client key holds the admin permission %s", perm)
		}
	}

	// The demo collect's page, on the public address (the base URL without
	// /v1), reaches the open collect with the statement received.
	page := demoCollectPageRE.FindStringSubmatch(banner)
	if page == nil || page[1] != strings.TrimSuffix(r.base, "/v1") {
		t.Fatalf("stderr does not give the demo collect's page at %s/collect/{token}:\n%s", strings.TrimSuffix(r.base, "/v1"), banner)
	}
	view, err := besideStore(t, cfg).OpenCollectSession(context.Background(), auth.HashCollectToken(page[2]))
	if err != nil {
		t.Fatalf("the demo collect's token: %v, want it to open its session", err)
	}
	if c := view.Collect; c.Title != seed.CollectTitle || c.Locale != "de" || c.Status != db.CollectOpen || c.ClientID != clientID || len(c.Items) != 3 ||
		c.Items[0].Status != db.ItemReceived || len(c.Items[0].FileIDs) != 1 || view.Files[c.Items[0].FileIDs[0]].Name != seed.StatementName ||
		c.Items[1].Status != db.ItemPending || c.Items[2].Status != db.ItemPending {
		t.Errorf("the demo collect: got %+v, want %q in de, OPEN, of the demo client, three items, the first received with the statement", c, seed.CollectTitle)
	}
	var public struct{ Collect struct{ Title string } }
	getJSON(t, r.base+"/collect-sessions/"+page[2], "", "", &public)
	if public.Collect.Title != seed.CollectTitle {
		t.Errorf("GET /v1/collect-sessions/{the demo token}: got %+v, want the demo collect", public)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// The demo is seeded once: a second --demo start prints no key.
	cfg2, _, stderr2 := testConfig(dir)
	cfg2.Demo = true
	r2 := startServer(t, cfg2)
	if r2.srv.FirstKey != "" || keyRE.MatchString(stderr2.String()) {
		t.Errorf("second --demo start minted keys:\n%s", stderr2.String())
	}
	me(t, r2.base, clientKey)
	if err := r2.stop(); err != nil {
		t.Fatal(err)
	}
}

// execute runs the command line in process and returns exit code and output.
func execute(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

// mustExecute runs the command line and fails the test unless it exits 0.
func mustExecute(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := execute(args...)
	if code != 0 {
		t.Fatalf("acctapi %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// mustFail runs the command line and fails the test if it exits 0. It
// returns stderr.
func mustFail(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := execute(args...)
	if code == 0 {
		t.Fatalf("acctapi %s: exit 0, want an error\nstdout: %s", strings.Join(args, " "), stdout)
	}
	if strings.TrimSpace(stderr) == "" {
		t.Errorf("acctapi %s: exit %d without a message on stderr", strings.Join(args, " "), code)
	}
	return stderr
}

// seedDataDir opens a server on dir once (creating the firm, and the demo when
// demo is set) and closes it without serving. It returns the first key and
// the demo client's id.
func seedDataDir(t *testing.T, dir string, demo bool) (firstKey, demoClientID string) {
	t.Helper()
	return seedDataDirIn(t, dir, demo, &testStore{name: "local"})
}

// seedDataDirIn is seedDataDir with the files in the store.
func seedDataDirIn(t *testing.T, dir string, demo bool, store *testStore) (firstKey, demoClientID string) {
	t.Helper()
	cfg, _, stderr := testConfig(dir)
	cfg.Demo = demo
	store.configure(cfg)
	srv := openServer(t, cfg)
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if demo {
		m := demoClientRE.FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no demo client in:\n%s", stderr.String())
		}
		demoClientID = m[1]
	}
	return srv.FirstKey, demoClientID
}

// rawExec runs a statement on the database file with a connection of its own.
func rawExec(t *testing.T, path, query string, args ...any) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// rawCount returns the single integer a query selects.
func rawCount(t *testing.T, path, query string) int {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s on %s: %v", query, path, err)
	}
	return n
}

var numberRE = regexp.MustCompile(`\d+`)

// numbersIn returns the integers in s, in order.
func numbersIn(s string) []int {
	var out []int
	for _, m := range numberRE.FindAllString(s, -1) {
		n, _ := strconv.Atoi(m)
		out = append(out, n)
	}
	return out
}

// hasNumber reports whether s holds n as a whole number.
func hasNumber(s string, n int) bool { return slices.Contains(numbersIn(s), n) }

func TestServerRefusesOtherSchema(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "acctapi.db")
	latest := int(db.LatestVersion())
	seedDataDir(t, dir, false)

	// Older than the binary.
	mustExecute(t, "migrate", "down", "1", "--data-dir", dir, "--no-backup")
	cfg, _, _ := testConfig(dir)
	srv, err := server.Open(context.Background(), &cfg.Config)
	if err == nil {
		srv.Close()
		t.Fatal("OpenServer started on a database older than the binary")
	}
	if !strings.Contains(err.Error(), "acctapi migrate") {
		t.Errorf("error %q does not say to run acctapi migrate", err)
	}
	if stderr := mustFail(t, "keys", "list", "--data-dir", dir); !strings.Contains(stderr, "acctapi migrate") {
		t.Errorf("keys list on an old database: %q, want it to say to run acctapi migrate", stderr)
	}
	if got := numbersIn(mustExecute(t, "migrate", "version", "--data-dir", dir)); !slices.Equal(got, []int{previousVersion(t), latest}) {
		t.Errorf("refused start changed the schema: migrate version reports %v", got)
	}

	mustExecute(t, "migrate", "--data-dir", dir)
	cfg, _, _ = testConfig(dir)
	r := startServer(t, cfg)
	if status, _, body := servertest.Get(t, r.base+"/health", ""); status != http.StatusOK {
		t.Errorf("after migrate: health %d %s", status, body)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// Newer than the binary.
	rawExec(t, dbPath, `UPDATE schema_migrations SET version = 999`)
	cfg, _, _ = testConfig(dir)
	srv, err = server.Open(context.Background(), &cfg.Config)
	if err == nil {
		srv.Close()
		t.Fatal("OpenServer started on a database newer than the binary")
	}
	msg := strings.ReplaceAll(err.Error(), dbPath, "")
	if !hasNumber(msg, 999) || !hasNumber(msg, latest) {
		t.Errorf("error %q does not name both the database's version 999 and the binary's %d", err, latest)
	}
	if stderr := mustFail(t, "keys", "create", "--data-dir", dir); !hasNumber(strings.ReplaceAll(stderr, dbPath, ""), 999) {
		t.Errorf("keys create on a newer database: %q, want it to name version 999", stderr)
	}
	if got := numbersIn(mustExecute(t, "migrate", "version", "--data-dir", dir)); !slices.Equal(got, []int{999, latest}) {
		t.Errorf("migrate version = %v, want [999 %d]", got, latest)
	}

	// Dirty: a migration failed half-way.
	rawExec(t, dbPath, `UPDATE schema_migrations SET version = ?, dirty = 1`, latest)
	cfg, _, _ = testConfig(dir)
	if srv, err = server.Open(context.Background(), &cfg.Config); err == nil {
		srv.Close()
		t.Fatal("OpenServer started on a dirty database")
	}
}

func TestMigrateCommand(t *testing.T) {
	latest := int(db.LatestVersion())
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "acctapi.db")
	backups := func() []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(dir, "acctapi.db.backup-*"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}

	// A new data dir has no database: only migrate (up) creates one, so that a
	// mistyped --data-dir is an error and not a new empty database.
	for _, args := range [][]string{{"migrate", "version"}, {"migrate", "down", "1"}, {"keys", "list"}} {
		if stderr := mustFail(t, append(args, "--data-dir", dir)...); !strings.Contains(stderr, "check --data-dir") {
			t.Errorf("%v on a missing database: %q, want a hint to check --data-dir", args, stderr)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Errorf("commands on a missing database created %s", dbPath)
	}
	// migrate creates it, without a backup (nothing to save).
	out := mustExecute(t, "migrate", "--data-dir", dir)
	if !hasNumber(out, latest) {
		t.Errorf("migrate prints %q, want the new version %d", out, latest)
	}
	if b := backups(); len(b) != 0 {
		t.Errorf("migrating an empty database wrote backups %v", b)
	}
	out = mustExecute(t, "migrate", "up", "--data-dir", dir)
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("migrate on a current database prints %q, want nothing to do", out)
	}
	if got := numbersIn(mustExecute(t, "migrate", "version", "--data-dir", dir)); !slices.Equal(got, []int{latest, latest}) {
		t.Errorf("migrate version prints %v, want [%d %d]", got, latest, latest)
	}
	// keys create needs the firm that serve creates.
	if stderr := mustFail(t, "keys", "create", "--data-dir", dir); !strings.Contains(stderr, "serve") {
		t.Errorf("keys create without a firm: %q, want a hint to run acctapi serve", stderr)
	}

	// A database with data: migrate down backs it up first.
	firstKey, _ := seedDataDir(t, dir, false)
	if firstKey == "" {
		t.Fatal("serve on a migrated database without a firm minted no key")
	}
	out = mustExecute(t, "migrate", "down", "1", "--data-dir", dir)
	b := backups()
	if len(b) != 1 {
		t.Fatalf("migrate down wrote backups %v, want one (output %q)", b, out)
	}
	if !strings.Contains(out, b[0]) {
		t.Errorf("migrate down prints %q, want the backup's path %s", out, b[0])
	}
	if n := rawCount(t, b[0], `SELECT count(*) FROM api_keys`); n != 1 {
		t.Errorf("the backup holds %d api keys, want 1", n)
	}
	if v := rawCount(t, b[0], `SELECT version FROM schema_migrations`); v != latest {
		t.Errorf("the backup is at schema version %d, want %d", v, latest)
	}
	if got := numbersIn(mustExecute(t, "migrate", "version", "--data-dir", dir)); !slices.Equal(got, []int{previousVersion(t), latest}) {
		t.Errorf("after down 1: migrate version prints %v, want [%d %d]", got, previousVersion(t), latest)
	}

	// --no-backup writes none, up or down.
	mustExecute(t, "migrate", "--no-backup", "--data-dir", dir)
	seedDataDir(t, dir, false)
	mustExecute(t, "migrate", "down", "1", "--no-backup", "--data-dir", dir)
	if got := backups(); len(got) != 1 {
		t.Errorf("--no-backup: backups %v, want only the first %s", got, b[0])
	}
	if v := rawCount(t, dbPath, `SELECT coalesce(max(version), 0) FROM schema_migrations`); v != previousVersion(t) {
		t.Errorf("migrate down 1 --no-backup left the schema at version %d, want %d", v, previousVersion(t))
	}

	// Bad arguments.
	for _, args := range [][]string{
		{"migrate", "down", "x"},
		{"migrate", "down", "0"},
		{"migrate", "down", "-1"},
		{"migrate", "down"},
		{"migrate", "sideways"},
		{"migrate", "up", "2"},
		{"migrate", "version", "extra"},
	} {
		mustFail(t, append(args, "--data-dir", dir)...)
	}
	if got := backups(); len(got) != 1 {
		t.Errorf("bad arguments wrote backups: %v", got)
	}
}

// keyOut is the --json form of a key.
type keyOut map[string]any

func parseKeyJSON(t *testing.T, out string) keyOut {
	t.Helper()
	var k keyOut
	if err := json.Unmarshal([]byte(out), &k); err != nil {
		t.Fatalf("keys create --json: %v in %q", err, out)
	}
	for _, field := range []string{"id", "key", "type", "accountantId", "permissions", "rateLimitMax", "rateLimitTimeWindow"} {
		if _, ok := k[field]; !ok {
			t.Errorf("keys create --json lacks %q: %s", field, out)
		}
	}
	return k
}

func (k keyOut) str(field string) string { s, _ := k[field].(string); return s }

func (k keyOut) permissions() []string {
	var out []string
	list, _ := k["permissions"].([]any)
	for _, p := range list {
		s, _ := p.(string)
		out = append(out, s)
	}
	return out
}

func TestKeysCommands(t *testing.T) {
	dir := t.TempDir()
	firstKey, clientID := seedDataDir(t, dir, true)
	dd := []string{"--data-dir", dir}

	// An accountant key by default.
	acct := parseKeyJSON(t, mustExecute(t, append([]string{"keys", "create", "--json"}, dd...)...))
	if acct.str("type") != "accountant" {
		t.Errorf("type = %v, want accountant", acct["type"])
	}
	if _, ok := acct["clientId"]; ok {
		t.Errorf("accountant key has clientId %v", acct["clientId"])
	}
	if !keyRE.MatchString(acct.str("key")) || keyID(acct.str("key")) != acct.str("id") {
		t.Errorf("key %q does not carry the id %q", acct.str("key"), acct.str("id"))
	}
	if got := acct.permissions(); !slices.Equal(got, allPermissions) {
		t.Errorf("accountant key permissions %v, want all %v", got, allPermissions)
	}
	if acct["rateLimitMax"] != 600.0 || acct["rateLimitTimeWindow"] != 60000.0 {
		t.Errorf("default rate limit %v per %v ms, want 600 per 60000", acct["rateLimitMax"], acct["rateLimitTimeWindow"])
	}

	// A client key with chosen permissions and limits.
	client := parseKeyJSON(t, mustExecute(t, append([]string{"keys", "create", "--client", clientID, "--json",
		"--permissions", "tasks:read,files:read", "--rate-limit-max", "5", "--rate-limit-window-ms", "1000"}, dd...)...))
	if client.str("type") != "client" || client.str("clientId") != clientID {
		t.Errorf("client key type %v clientId %v, want client %s", client["type"], client["clientId"], clientID)
	}
	if got := client.permissions(); !slices.Equal(got, []string{"tasks:read", "files:read"}) {
		t.Errorf("client key permissions %v, want [tasks:read files:read]", got)
	}
	if client["rateLimitMax"] != 5.0 || client["rateLimitTimeWindow"] != 1000.0 {
		t.Errorf("client key rate limit %v per %v ms, want 5 per 1000", client["rateLimitMax"], client["rateLimitTimeWindow"])
	}
	if client.str("accountantId") != acct.str("accountantId") || client.str("accountantId") == "" {
		t.Errorf("accountantId %q vs %q", client.str("accountantId"), acct.str("accountantId"))
	}

	// Plain output is the key alone on stdout; its id, and that it is
	// shown once, go to stderr.
	code, stdout, errOut := execute(append([]string{"keys", "create", "--client", clientID, "--name", "plain"}, dd...)...)
	plain := strings.TrimSpace(stdout)
	if code != 0 || !keyRE.MatchString(plain) || keyRE.FindString(plain) != plain {
		t.Errorf("keys create: exit %d, stdout %q, want only the key", code, stdout)
	}
	if want := "minted a client key of " + clientID + ", id " + keyID(plain) + ". The key is shown this once"; !strings.Contains(errOut, want) ||
		strings.Contains(errOut, secretOf(plain)) {
		t.Errorf("keys create: stderr %q, want %q and no secret", errOut, want)
	}
	help := mustExecute(t, "keys", "create", "--help")
	for _, p := range append(allPermissions, "Client keys (--client) may hold all but these:\n  clients:read clients:write") {
		if !strings.Contains(help, p) {
			t.Errorf("keys create --help does not name %q:\n%s", p, help)
		}
	}

	// Refused: admin permissions on a client key, unknown permissions, unknown
	// client, bad limits.
	for _, args := range [][]string{
		{"keys", "create", "--client", clientID, "--permissions", "clients:read"},
		{"keys", "create", "--client", clientID, "--permissions", "tasks:read,accountant_users:write"},
		{"keys", "create", "--permissions", "bogus"},
		{"keys", "create", "--client", "cnotaclient000000000000000"},
		{"keys", "create", "--rate-limit-max", "-1"},
		{"keys", "create", "--expires-in", "-1h"},
		{"keys", "create", "extra-arg"},
	} {
		mustFail(t, append(args, dd...)...)
	}
	// Errors read as sentences, without the API's codes.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "create", "--client", "cnotaclient000000000000000"}, "acctapi: no client cnotaclient000000000000000 in the firm \"Test firm\": --client takes the id of one of its clients\n"},
		{[]string{"keys", "revoke", "cnotakey00000000000000000"}, "acctapi: api key cnotakey00000000000000000 not found\n"},
	} {
		if got := mustFail(t, append(c.args, dd...)...); got != c.want {
			t.Errorf("acctapi %v: stderr %q, want %q", c.args, got, c.want)
		}
	}

	// The minted keys work against a server on the same data dir.
	cfg, _, stderr := testConfig(dir)
	r := startServer(t, cfg)
	if p := me(t, r.base, client.str("key")); p.Type != "client" || p.RateLimitMax != 5 || p.RateLimitTimeWindow != 1000 ||
		!slices.Equal(p.Permissions, []string{"tasks:read", "files:read"}) {
		t.Errorf("client key's principal %+v", p)
	}
	if p := me(t, r.base, acct.str("key")); p.Type != "accountant" || p.APIKeyID != acct.str("id") {
		t.Errorf("accountant key's principal %+v", p)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	secrets := []string{firstKey, acct.str("key"), client.str("key"), plain}
	for _, s := range secrets {
		if strings.Contains(stderr.String(), secretOf(s)) {
			t.Errorf("server log holds the secret of %s", s)
		}
	}

	// list never shows a secret.
	listJSON := mustExecute(t, append([]string{"keys", "list", "--json"}, dd...)...)
	listText := mustExecute(t, append([]string{"keys", "list"}, dd...)...)
	for _, s := range secrets {
		for _, out := range []string{listJSON, listText} {
			if strings.Contains(out, secretOf(s)) {
				t.Errorf("keys list shows the secret of %s:\n%s", s, out)
			}
		}
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(listJSON), &listed); err != nil {
		t.Fatalf("keys list --json: %v in %s", err, listJSON)
	}
	// first key, demo client key, and the three minted here.
	if len(listed) != 5 {
		t.Errorf("keys list --json lists %d keys, want 5:\n%s", len(listed), listJSON)
	}
	byID := map[string]map[string]any{}
	for _, k := range listed {
		if v, ok := k["key"]; ok {
			t.Errorf("keys list --json has a key field %v", v)
		}
		if _, ok := k["revokedAt"]; ok {
			t.Errorf("key %v listed as revoked before any revoke", k["id"])
		}
		id, _ := k["id"].(string)
		byID[id] = k
	}
	for _, id := range []string{keyID(firstKey), acct.str("id"), client.str("id"), keyID(plain)} {
		if byID[id] == nil {
			t.Errorf("keys list --json lacks key %s", id)
		}
	}
	if k := byID[client.str("id")]; k != nil && (k["clientId"] != clientID || k["type"] != "client") {
		t.Errorf("client key listed as %v", k)
	}
	if !strings.Contains(listText, acct.str("id")) || !strings.Contains(listText, "active") {
		t.Errorf("keys list:\n%s", listText)
	}

	// revoke
	out := mustExecute(t, append([]string{"keys", "revoke", client.str("id")}, dd...)...)
	if !strings.Contains(out, client.str("id")) {
		t.Errorf("keys revoke prints %q", out)
	}
	listJSON = mustExecute(t, append([]string{"keys", "list", "--json"}, dd...)...)
	listed = nil
	if err := json.Unmarshal([]byte(listJSON), &listed); err != nil {
		t.Fatalf("keys list --json: %v in %s", err, listJSON)
	}
	for _, k := range listed {
		_, revoked := k["revokedAt"]
		if want := k["id"] == client.str("id"); revoked != want {
			t.Errorf("key %v: revokedAt present %v, want %v", k["id"], revoked, want)
		}
	}
	if listText = mustExecute(t, append([]string{"keys", "list"}, dd...)...); !strings.Contains(listText, "revoked") {
		t.Errorf("keys list does not show the revocation:\n%s", listText)
	}
	// Revoking twice keeps the first time.
	again := mustExecute(t, append([]string{"keys", "revoke", client.str("id")}, dd...)...)
	if again != out {
		t.Errorf("revoking twice prints %q, first %q: the revocation time changed", again, out)
	}
	mustFail(t, append([]string{"keys", "revoke", "cnotakey00000000000000000"}, dd...)...)
	mustFail(t, append([]string{"keys", "revoke"}, dd...)...)
	mustFail(t, append([]string{"keys", "revoke", "a", "b"}, dd...)...)

	// version
	out = mustExecute(t, "version")
	if !strings.Contains(out, fmt.Sprintf("schema version %d", db.LatestVersion())) {
		t.Errorf("version prints %q, want the schema version %d", out, db.LatestVersion())
	}
}

// TestMigrateRecoversDirtyDatabase follows the advice serve gives for a dirty
// database (a migration failed half-way): repair the schema, record its
// version with `acctapi migrate force N`, and migrate.
func TestMigrateRecoversDirtyDatabase(t *testing.T) {
	dir := t.TempDir()
	latest := int(db.LatestVersion())
	seedDataDir(t, dir, false)
	// The schema is intact: only the dirty flag is set, so "fix the schema" is done.
	rawExec(t, filepath.Join(dir, "acctapi.db"), `UPDATE schema_migrations SET dirty = 1`)

	cfg, _, _ := testConfig(dir)
	srv, err := server.Open(context.Background(), &cfg.Config)
	if err == nil {
		srv.Close()
		t.Fatal("OpenServer started on a dirty database")
	}
	if !strings.Contains(err.Error(), "acctapi migrate force N") {
		t.Errorf("serve on a dirty database: %q, want a pointer to acctapi migrate force N", err)
	}
	if stderr := mustFail(t, "migrate", "--no-backup", "--data-dir", dir); !strings.Contains(stderr, "migrate force N") {
		t.Errorf("migrate on a dirty database: %q, want a pointer to acctapi migrate force N", stderr)
	}
	mustExecute(t, "migrate", "force", strconv.Itoa(latest), "--data-dir", dir)
	mustExecute(t, "migrate", "--data-dir", dir)
	r := startServer(t, cfg)
	if status, _, body := servertest.Get(t, r.base+"/health", ""); status != http.StatusOK {
		t.Errorf("after migrate force: health %d %s", status, body)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateBackupNameCollision runs a migration when a backup of the same
// schema version was written in the same second (as happens when `acctapi
// migrate` fails after its backup and the operator retries at once): the new
// backup gets a name of its own and overwrites nothing.
func TestMigrateBackupNameCollision(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "acctapi.db")
	latest := int(db.LatestVersion())
	seedDataDir(t, dir, false)
	// Earlier backups of this version, named as this second's and the next few seconds' would be.
	now := time.Now().UTC()
	placeholders := map[string]bool{}
	for i := -1; i <= 30; i++ {
		name := fmt.Sprintf("%s.backup-v%d-%s", dbPath, latest, now.Add(time.Duration(i)*time.Second).Format("20060102T150405Z"))
		if err := os.WriteFile(name, []byte("an earlier backup"), 0o600); err != nil {
			t.Fatal(err)
		}
		placeholders[name] = true
	}
	code, out, stderr := execute("migrate", "down", "1", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("migrate down 1: exit %d: %s", code, stderr)
	}
	files, err := filepath.Glob(dbPath + ".backup-*")
	if err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for _, f := range files {
		if !placeholders[f] {
			fresh = append(fresh, f)
			continue
		}
		if b, err := os.ReadFile(f); err != nil || string(b) != "an earlier backup" {
			t.Errorf("migrate overwrote the earlier backup %s", f)
		}
	}
	if len(fresh) != 1 {
		t.Errorf("migrate down wrote backups %v, want one new one (output %q)", fresh, out)
	}
}

// TestDataDirSynced: a data dir that serve makes, with its missing parents,
// has each new entry synced in its parent before the database is made in it.
func TestDataDirSynced(t *testing.T) {
	root := t.TempDir()
	cfg, _, _ := testConfig(filepath.Join(root, "var", "acctapi"))
	var synced []string
	cfg.Dirs.Sync = func(d string) error {
		synced = append(synced, d)
		return nil
	}
	store, err := openStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if want := []string{root, filepath.Join(root, "var")}; !slices.Equal(synced, want) {
		t.Errorf("synced making the data dir: %v, want %v", synced, want)
	}
}

// TestServerTakenAddressWritesNothing starts a server, then a --demo start on
// its address: that start fails before it creates a firm, mints a key or
// seeds the demo, so it prints no key and leaves no client or key behind.
func TestServerTakenAddressWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	cfg, _, _ := testConfig(dir)
	r := startServer(t, cfg)

	// failedDemoStart starts with --demo on r's address and checks that it
	// fails, printing nothing of a firm, a key or the demo.
	failedDemoStart := func(t *testing.T, dataDir string) {
		t.Helper()
		cfg, _, stderr := testConfig(dataDir)
		cfg.Addr = r.srv.Addr()
		cfg.Demo = true
		srv, err := server.Open(context.Background(), &cfg.Config)
		if err == nil {
			srv.Close()
			t.Fatal("OpenServer listened on an address already in use")
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("error = %v, want address already in use", err)
		}
		if out := stderr.String(); keyRE.MatchString(out) || strings.Contains(out, "created the firm") || strings.Contains(out, "demo client") {
			t.Errorf("the failed start printed a key or a seeding message:\n%s", out)
		}
	}

	t.Run("the running server's data dir", func(t *testing.T) {
		failedDemoStart(t, dir)
		path := filepath.Join(dir, "acctapi.db")
		if got := rawCount(t, path, "SELECT count(*) FROM clients"); got != 0 {
			t.Errorf("clients = %d, want 0: no demo", got)
		}
		if got := rawCount(t, path, "SELECT count(*) FROM api_keys"); got != 1 {
			t.Errorf("api keys = %d, want 1: the first key only", got)
		}
	})
	t.Run("an empty data dir", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "data")
		failedDemoStart(t, empty)
		// Nothing at all: no database (which a later keys list would call
		// one to migrate), no file store, not even the data dir.
		if entries, err := os.ReadDir(empty); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the failed start left the data dir with %v (%v), want none", entries, err)
		}
	})
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}

// previousVersion is the schema version one migration below the latest:
// migration numbers are given out ahead (one may be missing while its
// branch has not landed), so it is read from the files, not counted down.
func previousVersion(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("../db/migrations")
	if err != nil {
		t.Fatal(err)
	}
	latest, previous := int(db.LatestVersion()), 0
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(prefix); err == nil && v < latest {
			previous = max(previous, v)
		}
	}
	return previous
}

// TestMain has the commands tests run in this process keep the compiled PDF
// reader in servertest.CacheDir too, as their flags' defaults read the
// environment.
func TestMain(m *testing.M) {
	os.Setenv("ACCTAPI_CACHE_DIR", servertest.CacheDir)
	os.Exit(m.Run())
}
