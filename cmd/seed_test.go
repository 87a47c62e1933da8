package cmd

import (
	"acctapi/server/servertest"

	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSeedCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seeded")
	out := mustExecute(t, "seed", "--data-dir", dir, "--clients", "3", "--tasks", "1500", "--other-tasks", "40",
		"--workspaces", "5", "--rate-limit", "5000", "--json")
	var seeded seedJSON
	if err := json.Unmarshal([]byte(out), &seeded); err != nil {
		t.Fatalf("seed --json: %v in %s", err, out)
	}
	if len(seeded.Clients) != 3 || seeded.Clients[0].Tasks != 1500 || seeded.Clients[1].Tasks != 40 ||
		len(seeded.Clients[0].WorkspaceIDs) != 5 || seeded.DataDir != dir {
		t.Fatalf("seed --json = %+v, want 3 clients of 1500, 40 and 40 tasks in 5 workspaces each", seeded)
	}

	// serve takes the seeded dir as its own: same firm, no new first key,
	// and the printed keys work with the rate limit asked for.
	cfg, _, _ := testConfig(dir)
	r := startServer(t, cfg)
	if r.srv.FirstKey != "" {
		t.Errorf("serve on a seeded dir minted a first key")
	}
	acct := me(t, r.base, seeded.AccountantKey)
	if acct.Type != "accountant" || acct.AccountantID != seeded.FirmID || acct.RateLimitMax != 5000 ||
		len(acct.Permissions) != len(allPermissions) {
		t.Errorf("accountant key: %+v", acct)
	}
	client := me(t, r.base, seeded.ClientKey)
	if client.Type != "client" || client.ClientID == nil || *client.ClientID != seeded.Clients[0].ID || client.RateLimitMax != 5000 {
		t.Errorf("client key: %+v", client)
	}
	req, err := http.NewRequest(http.MethodGet, r.base+"/tasks?limit=100&workspaceId="+seeded.Clients[0].WorkspaceIDs[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+seeded.ClientKey)
	req.Header.Set("x-client-id", seeded.Clients[0].ID)
	resp, err := servertest.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Data       []json.RawMessage `json:"data"`
		Pagination struct{ Total int }
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/tasks: %d, %v", resp.StatusCode, err)
	}
	if len(page.Data) != 100 || page.Pagination.Total < 1500/2 {
		t.Errorf("GET /v1/tasks of the big workspace: %d items, total %d, want 100 of most of 1500", len(page.Data), page.Pagination.Total)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// The human form names the keys and how to start.
	human := mustExecute(t, "seed", "--data-dir", filepath.Join(t.TempDir(), "h"), "--clients", "1", "--tasks", "10")
	for _, want := range []string{"accountant key     ak_", "client key         ak_", "acctapi serve --data-dir"} {
		if !strings.Contains(human, want) {
			t.Errorf("seed output lacks %q:\n%s", want, human)
		}
	}
}

func TestSeedCommandRefuses(t *testing.T) {
	existing := t.TempDir()
	seedDataDir(t, existing, false)
	before, err := os.ReadFile(filepath.Join(existing, "acctapi.db"))
	if err != nil {
		t.Fatal(err)
	}
	if msg := mustFail(t, "seed", "--data-dir", existing, "--tasks", "10"); !strings.Contains(msg, "already exists") {
		t.Errorf("seed on an existing data dir: %s", msg)
	}
	after, err := os.ReadFile(filepath.Join(existing, "acctapi.db"))
	if err != nil || string(after) != string(before) {
		t.Errorf("seed changed an existing database")
	}

	for _, args := range [][]string{
		{"--clients", "0"},
		{"--workspaces", "0"},
		{"--tasks", "-1"},
		{"--rate-limit", "0"},
	} {
		dir := filepath.Join(t.TempDir(), "new")
		mustFail(t, append([]string{"seed", "--data-dir", dir}, args...)...)
		if _, err := os.Stat(filepath.Join(dir, "acctapi.db")); !os.IsNotExist(err) {
			t.Errorf("seed %v left a database behind: %v", args, err)
		}
	}
}
