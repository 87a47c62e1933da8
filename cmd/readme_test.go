package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// walkthroughBlock is a shell block of the README's walk-through: a sh block
// right after a <!-- walkthrough --> comment.
var walkthroughBlock = regexp.MustCompile("(?s)<!-- walkthrough[^>]*-->\n```sh\n(.*?)```")

// TestREADMEWalkthrough runs the README's walk-through (A first call, Safe
// retries, Webhooks, Collecting documents) as written, with bash, against a fresh serve --demo,
// so that the README cannot drift from what the server does. Only the
// address and `go run .` are replaced: by the test server's and by the
// binary built from this tree.
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the README's walk-through needs %s (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("the README's walk-through needs %s, which is not installed (apt-get install curl jq)", tool)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := walkthroughBlock.FindAllSubmatch(readme, -1)
	// Keys, ids, tasks, files, a retry, a webhook, and a collect request:
	// the accountant's, the uploader's and the accountant's again.
	if len(blocks) != 10 {
		t.Fatalf("README.md has %d walk-through blocks, want 10", len(blocks))
	}

	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")
	srv := startProcess(t, bin, "serve", "--demo", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--log-format", "json", "--shutdown-timeout", "5s")
	srv.waitStderr(t, 60*time.Second, "listening log line", func(s string) bool { return listeningAddr(s) != "" })
	addr := listeningAddr(srv.stderr.String())
	base := "http://" + addr + "/v1"

	script := []string{"set -euo pipefail"}
	for _, b := range blocks {
		block := strings.ReplaceAll(string(b[1]), "127.0.0.1:8080", addr)
		script = append(script, strings.ReplaceAll(block, "go run . ", "'"+bin+"' "))
	}
	// What the walk-through made, for the checks below.
	script = append(script, `printf '%s\n' "$KEY" "$CLIENT" "$WORKSPACE" "$TASK" "$COLLECT" "$TOKEN" > vars`)
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-x", "-c", strings.Join(script, "\n"))
	sh.Dir = work
	// The CLI in the blocks reads the server's data dir from the environment,
	// as it would find ./data in the repository.
	sh.Env = append(hermeticEnv(), "ACCTAPI_DATA_DIR="+dataDir)
	var stdout, stderr strings.Builder
	sh.Stdout, sh.Stderr = &stdout, &stderr
	start := time.Now()
	if err := sh.Run(); err != nil {
		t.Fatalf("the walk-through failed: %v\nstdout:\n%s\nstderr (bash -x):\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("the walk-through ran in %v", time.Since(start).Round(time.Millisecond))

	out := stdout.String()
	for _, want := range []string{
		`"type":"accountant"`, "\n401\n", `"status":"ok"`, `"total":9`, `"status":"IN_REVIEW"`,
		`"name":"receipt.pdf"`, `"mimetype":"application/pdf"`, "downloaded the bytes uploaded",
		"idempotent-replayed: true", `"url":"https://erp.example/acctapi"`, `"secret":"whsec_`,
		"\n422\n", `{"status":"SUBMITTED"}`, `"name":"statement.pdf"`, `"createdById":null`,
	} {
		if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}

	vars, err := os.ReadFile(filepath.Join(work, "vars"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(vars)), "\n")
	if len(v) != 6 {
		t.Fatalf("variables: got %q, want KEY, CLIENT, WORKSPACE, TASK, COLLECT and TOKEN", v)
	}
	key, client, workspace, task, collect, token := v[0], v[1], v[2], v[3], v[4], v[5]
	if !keyRE.MatchString(key) {
		t.Errorf("KEY = %q, want a key", key)
	}
	if got := demoClientRE.FindStringSubmatch(srv.stderr.String()); got == nil || got[1] != client {
		t.Errorf("CLIENT = %q, want the demo client serve printed (%v)", client, got)
	}
	if !strings.Contains(srv.stderr.String(), "(workspace "+workspace+")") {
		t.Errorf("WORKSPACE = %q, want the demo workspace serve printed", workspace)
	}

	// The server holds what the walk-through says it made: one task per
	// title (the retry was replayed), the file on the task, one webhook of
	// the whole firm.
	var tasks struct {
		Data []struct {
			ID, Title, Status, WorkspaceID string
		}
	}
	getJSON(t, base+"/tasks?limit=100", key, client, &tasks)
	titles := map[string]int{}
	for _, tk := range tasks.Data {
		titles[tk.Title]++
		if tk.ID == task && (tk.Status != "IN_REVIEW" || tk.WorkspaceID != workspace || tk.Title != "Send Q4 receipts") {
			t.Errorf("TASK: got %+v, want Send Q4 receipts, IN_REVIEW, in %s", tk, workspace)
		}
	}
	if len(tasks.Data) != 10 || titles["Send Q4 receipts"] != 1 || titles["Send Q1 receipts"] != 1 {
		t.Errorf("tasks: got %d, titles %v, want the demo's 8 and one each of Send Q4 and Send Q1 receipts", len(tasks.Data), titles)
	}
	var file struct{ ID, Name, TaskID string }
	data, err := os.ReadFile(filepath.Join(work, "file.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("file.json: %v in %s", err, data)
	}
	var stored struct{ Name, TaskID string }
	getJSON(t, base+"/files/"+file.ID, key, client, &stored)
	if stored.Name != "receipt.pdf" || stored.TaskID != task {
		t.Errorf("file %s: got %+v, want receipt.pdf on task %s", file.ID, stored, task)
	}
	var hooks struct {
		Data []struct {
			URL      string
			ClientID *string
		}
	}
	getJSON(t, base+"/webhooks", key, "", &hooks)
	if len(hooks.Data) != 1 || hooks.Data[0].URL != "https://erp.example/acctapi" || hooks.Data[0].ClientID != nil {
		t.Errorf("webhooks: got %+v, want the firm-wide https://erp.example/acctapi", hooks.Data)
	}

	// The collect request: submitted, its statement received as a file of
	// the workspace, its link's page on the public address.
	if want := "the upload page: http://" + addr + "/collect/" + token + "\n"; !strings.Contains(out, want) {
		t.Errorf("the walk-through's output lacks %q", want)
	}
	var c struct {
		WorkspaceID, Status string
		Items               []struct {
			Title, Status string
			FileIDs       []string
		}
	}
	getJSON(t, base+"/collects/"+collect, key, client, &c)
	if c.WorkspaceID != workspace || c.Status != "SUBMITTED" || len(c.Items) != 2 || c.Items[0].Status != "RECEIVED" ||
		len(c.Items[0].FileIDs) != 1 || c.Items[1].Status != "PENDING" {
		t.Fatalf("collect %s: got %+v, want it SUBMITTED in %s, its first item RECEIVED with one file, the second PENDING", collect, c, workspace)
	}
	var statement struct{ Name, WorkspaceID string }
	getJSON(t, base+"/files/"+c.Items[0].FileIDs[0], key, client, &statement)
	if statement.Name != "statement.pdf" || statement.WorkspaceID != workspace {
		t.Errorf("the uploaded statement: got %+v, want statement.pdf in %s", statement, workspace)
	}
	var view struct{ Collect struct{ Status string } }
	getJSON(t, base+"/collect-sessions/"+token, "", "", &view)
	if view.Collect.Status != "SUBMITTED" {
		t.Errorf("the uploader's view: got %+v, want the collect SUBMITTED", view)
	}

	var doc map[string]any
	data, err = os.ReadFile(filepath.Join(work, "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc["openapi"] == nil {
		t.Errorf("openapi.json: %v, want the OpenAPI document", err)
	}
}

// getJSON sends GET url with the key and client header (when set), requires
// 200 and decodes the body into v.
func getJSON(t *testing.T, url, key, clientID string, v any) {
	t.Helper()
	status, _, body := flDo(t, http.MethodGet, url, key, clientID, "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d, body %s", url, status, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}
