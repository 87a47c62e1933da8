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

// walkthroughBlock is a shell block of a walk-through: a sh block right
// after a <!-- walkthrough --> comment.
var walkthroughBlock = regexp.MustCompile("(?s)<!-- walkthrough[^>]*-->\n```sh\n(.*?)```")

// walkthroughBlocks returns the walk-through blocks of the page at path,
// and fails the test unless it has want of them.
func walkthroughBlocks(t *testing.T, path string, want int) []string {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range walkthroughBlock.FindAllSubmatch(page, -1) {
		blocks = append(blocks, string(m[1]))
	}
	if len(blocks) != want {
		t.Fatalf("%s has %d walk-through blocks, want %d", strings.TrimPrefix(path, "../"), len(blocks), want)
	}
	return blocks
}

// TestGettingStartedWalkthrough runs the README's first call, then the
// walk-through of docs/getting-started.md (A first call, More keys, Tasks
// and files, Safe retries, Webhooks, Collecting documents, Documents, Bank
// statements and missing receipts), as
// written, with bash, against a fresh serve --demo, so that neither page can
// drift from what the server does. Only the address and `go run .` are
// replaced: by the test server's and by the binary built from this tree.
// Each script runs in an empty directory, which must stay empty: the blocks
// write their files into $WORK, a temporary directory, so that pasting them
// in the repository leaves nothing behind.
func TestGettingStartedWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the walk-through needs %s (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("the walk-through needs %s, which is not installed (apt-get install curl jq)", tool)
		}
	}
	// The README's first call: a key, one request.
	firstCall := walkthroughBlocks(t, "../README.md", 1)
	// A key and the checks of /v1/me, the demo's ids, more keys, tasks,
	// files, a retry, a webhook, a collect request (the accountant's, the
	// uploader's and the accountant's again), and the documents' search.
	blocks := walkthroughBlocks(t, "../docs/getting-started.md", 13)

	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")
	srv := startProcess(t, bin, "serve", "--demo", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--log-format", "json", "--shutdown-timeout", "5s")
	srv.waitStderr(t, 60*time.Second, "listening log line", func(s string) bool { return listeningAddr(s) != "" })
	addr := listeningAddr(srv.stderr.String())
	base := "http://" + addr + "/v1"

	// The directory the blocks are pasted in (the repository, for a reader),
	// and the one mktemp makes $WORK in.
	work, tmpDir := filepath.Join(tmp, "work"), filepath.Join(tmp, "tmp")
	for _, dir := range []string{work, tmpDir} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The blocks upload the demo's documents by their path in the
	// repository, where a reader pastes them.
	demoDocs, err := filepath.Abs("../db/seed/demo")
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, blocks []string, tail ...string) string {
		t.Helper()
		script := []string{"set -euo pipefail"}
		for _, b := range blocks {
			b = strings.ReplaceAll(b, "127.0.0.1:8080", addr)
			b = strings.ReplaceAll(b, "db/seed/demo/", demoDocs+"/")
			script = append(script, strings.ReplaceAll(b, "go run . ", "'"+bin+"' "))
		}
		script = append(script, tail...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sh := exec.CommandContext(ctx, "bash", "-x", "-c", strings.Join(script, "\n"))
		sh.Dir = work
		// The CLI in the blocks reads the server's data dir from the
		// environment, as it would find ./data in the repository.
		sh.Env = append(hermeticEnv(), "ACCTAPI_DATA_DIR="+dataDir, "TMPDIR="+tmpDir)
		var stdout, stderr strings.Builder
		sh.Stdout, sh.Stderr = &stdout, &stderr
		start := time.Now()
		if err := sh.Run(); err != nil {
			t.Fatalf("%s failed: %v\nstdout:\n%s\nstderr (bash -x):\n%s", name, err, stdout.String(), stderr.String())
		}
		t.Logf("%s ran in %v", name, time.Since(start).Round(time.Millisecond))
		// Pasted where a reader stands, the blocks write nothing there.
		entries, err := os.ReadDir(work)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("%s wrote %s into the directory it was pasted in; write it under $WORK", name, e.Name())
		}
		return stdout.String()
	}

	if out := run("the README's first call", firstCall); !strings.Contains(out, `"type":"accountant"`) {
		t.Errorf("the README's first call: got %q, want the key's accountant", out)
	}

	// What the walk-through made, for the checks below, outside the
	// directory it runs in.
	varsFile := filepath.Join(tmp, "vars")
	out := run("the walk-through", blocks,
		`printf '%s\n' "$WORK" "$KEY" "$CLIENT" "$WORKSPACE" "$TASK" "$COLLECT" "$TOKEN" > '`+varsFile+`'`)
	for _, want := range []string{
		`"type":"accountant"`, "\n401\n", `"status":"ok"`, `"total":9`, `"status":"IN_REVIEW"`,
		`{"name":"DATEV sync","permissions":["tasks:read","files:read"]}`, "\n200\n", `["Annual accounts 2026","Payroll"]`,
		`"name":"receipt.jpg"`, `"mimetype":"image/jpeg"`, "downloaded the bytes uploaded",
		"idempotent-replayed: true", `"url":"https://erp.example/acctapi"`, `"secret":"whsec_`,
		"\n422\n", `{"status":"SUBMITTED"}`, `"name":"statement.pdf"`, `"createdById":null`,
		`"kind":"invoice"`, `["invoice.txt"]`, `"documentDateSource":"user"`, `"documentNumber":"2026-3117"`,
		`["2026-09-28","-428.40","Kassentechnik Nord GmbH","matched"]`, `["2026-08-03","-538.30","Stadtwerke Berlin","unmatched"]`,
		`{"documentNumber":"2026-3117","totalAmount":"428.40","state":"confirmed","reasons":["amount","documentNumber","name","date"]}`,
		`{"format":"camt.053","from":"2026-07-01","to":"2026-09-30","transactionCount":3}`,
		`{"status":"ignored","note":"customer payment, booked with the sales"}`, `["03.08.2026 · Stadtwerke Berlin · −538,30 EUR"]`,
	} {
		if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
			t.Errorf("the walk-through's output lacks %q:\n%s", want, out)
		}
	}
	// A 401 without a key, and one for the key revoked in More keys.
	if n := strings.Count(out, "\n401\n"); n != 2 {
		t.Errorf("the walk-through's output has %d lines 401, want 2: without a key, and with the revoked key:\n%s", n, out)
	}

	vars, err := os.ReadFile(varsFile)
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(vars)), "\n")
	if len(v) != 7 {
		t.Fatalf("variables: got %q, want WORK, KEY, CLIENT, WORKSPACE, TASK, COLLECT and TOKEN", v)
	}
	workDir, key, client, workspace, task, collect, token := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	if filepath.Dir(workDir) != tmpDir {
		t.Errorf("WORK = %q, want a directory mktemp made in %s", workDir, tmpDir)
	}
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
	data, err := os.ReadFile(filepath.Join(workDir, "file.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("file.json: %v in %s", err, data)
	}
	var stored struct{ Name, TaskID string }
	getJSON(t, base+"/files/"+file.ID, key, client, &stored)
	if stored.Name != "receipt.jpg" || stored.TaskID != task {
		t.Errorf("file %s: got %+v, want receipt.jpg on task %s", file.ID, stored, task)
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
	data, err = os.ReadFile(filepath.Join(workDir, "openapi.json"))
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
