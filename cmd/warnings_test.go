package cmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"acctapi/docfields"
)

// TestReadingWarningsAndCorrectedDate: through the running server, a text
// invoice's reading warns of what cannot be right on it, and a person's
// correction of its issue date dates the file as theirs.
func TestReadingWarningsAndCorrectedDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server's reading; skipped with -short")
	}
	dir := t.TempDir()
	cfg, _, stderr := testConfig(dir)
	cfg.Demo = true
	r := startServer(t, cfg)
	banner := stderr.String()
	key, clientID := r.srv.FirstKey, demoClientRE.FindStringSubmatch(banner)[1]
	workspaceID := flDemoWorkspaceRE.FindStringSubmatch(banner)[1]
	text, err := os.ReadFile("../docfields/testdata/warnings-invoice.txt")
	if err != nil {
		t.Fatal(err)
	}
	id := flUpload(t, r.base, key, clientID, workspaceID, "rechnung.txt", text)
	type file struct {
		DocumentDate       string  `json:"documentDate"`
		DocumentDateSource *string `json:"documentDateSource"`
		Analysis           struct {
			Status   string   `json:"status"`
			Warnings []string `json:"warnings"`
		} `json:"analysis"`
	}
	var f file
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		getJSON(t, r.base+"/files/"+id, key, clientID, &f)
		if f.Analysis.Status != "pending" && f.Analysis.Status != "running" || time.Now().After(deadline) {
			break
		}
	}
	if f.Analysis.Status != "done" {
		t.Fatalf("analysis %s, want done", f.Analysis.Status)
	}
	var want []string
	for _, w := range docfields.Read(string(text)).Warnings {
		want = append(want, w.Message)
	}
	if len(want) == 0 || !slices.Equal(f.Analysis.Warnings, want) {
		t.Errorf("warnings %q, want the reader's %q", f.Analysis.Warnings, want)
	}

	body, _ := json.Marshal(map[string]any{"fields": map[string]any{"issueDate": "2026-02-28"}})
	status, _, res := flDo(t, http.MethodPatch, r.base+"/files/"+id, key, clientID, "application/json", bytes.NewReader(body))
	if status != http.StatusOK {
		t.Fatalf("PATCH the issue date: %d %s", status, res)
	}
	getJSON(t, r.base+"/files/"+id, key, clientID, &f)
	if f.DocumentDate != "2026-02-28T00:00:00Z" || f.DocumentDateSource == nil || *f.DocumentDateSource != "user" {
		t.Errorf("document date %s (%v), want the corrected issue date, the person's", f.DocumentDate, f.DocumentDateSource)
	}
}
