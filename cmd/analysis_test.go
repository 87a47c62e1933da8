package cmd

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// anServe starts serve on dataDir with webhooks allowed to this machine, and
// returns the process and the API's base URL.
func anServe(t *testing.T, bin, dataDir string, extra ...string) (*process, string) {
	t.Helper()
	p := startProcess(t, bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir,
		"--log-format", "json", "--allow-private-webhooks"}, extra...)...)
	p.waitStderr(t, 60*time.Second, "the listening log line", func(s string) bool { return listeningAddr(s) != "" })
	return p, "http://" + listeningAddr(p.stderr.String()) + "/v1"
}

// anCall sends a request with the key (and client, when set) and decodes a
// JSON answer into out, requiring the status.
func anCall(t *testing.T, method, url, key, clientID, contentType string, body []byte, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if clientID != "" {
		req.Header.Set("x-client-id", clientID)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	var raw json.RawMessage
	json.NewDecoder(res.Body).Decode(&raw)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, res.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnalysisSurvivesSIGKILL kills a real acctapi serve while it reads
// uploaded PDFs, starts it again, and checks that every file ends read, and
// read to its end once: a reading that ended before the kill is not done
// again, and one the kill cut off is done after the restart.
func TestAnalysisSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")
	p, base := anServe(t, bin, dataDir, "--demo")
	banner := p.stderr.String()
	keys := keyRE.FindAllString(banner, -1)
	accountantKey, clientKey := keys[0], keys[1]
	clientID := demoClientRE.FindStringSubmatch(banner)[1]
	workspaceID := flDemoWorkspaceRE.FindStringSubmatch(banner)[1]

	// Every file.analyzed event is kept in the outbox, to count them: the
	// subscription's address refuses every delivery.
	anCall(t, "POST", base+"/webhooks", accountantKey, "", "application/json",
		[]byte(`{"url":"http://127.0.0.1:9/hook","events":["file.analyzed"]}`), http.StatusCreated, nil)

	pdf, err := os.ReadFile("../docread/testdata/factur-x-en16931.pdf")
	if err != nil {
		t.Fatal(err)
	}
	const files = 40
	var ids []string
	for i := range files {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("workspaceId", workspaceID)
		part, _ := mw.CreateFormFile("file", fmt.Sprintf("invoice-%02d.pdf", i))
		part.Write(pdf)
		mw.Close()
		var f struct {
			ID string `json:"id"`
		}
		anCall(t, "POST", base+"/files", clientKey, clientID, mw.FormDataContentType(), body.Bytes(), http.StatusCreated, &f)
		ids = append(ids, f.ID)
	}
	status := func() (done, pending int) {
		t.Helper()
		conn, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "acctapi.db")+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.QueryRow(`SELECT count(*) FILTER (WHERE analysis_status = 'done'),
			count(*) FILTER (WHERE analysis_status = 'pending') FROM files WHERE name LIKE 'invoice-%'`).Scan(&done, &pending); err != nil {
			t.Fatal(err)
		}
		return done, pending
	}
	// Killed while some are read and some are not.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done, _ := status()
		if done >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no file was read within 2 minutes; stderr:\n%s", p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	doneAtKill, _ := status()
	if doneAtKill == files {
		t.Logf("every file was read before the kill: the restart has nothing left to read")
	}

	p, _ = anServe(t, bin, dataDir)
	for {
		if _, pending := status(); pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("files still pending 2 minutes on; stderr:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if done, _ := status(); done != files {
		t.Errorf("%d of %d files read after the restart", done, files)
	}
	conn, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "acctapi.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, id := range ids {
		var n int
		if err := conn.QueryRow(`SELECT count(*) FROM webhook_events WHERE type = 'file.analyzed'
			AND json_extract(payload, '$.data.id') = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("file %s: %d file.analyzed events, want exactly 1", id, n)
		}
	}
	t.Logf("%d of %d files were read before the SIGKILL, the rest after the restart", doneAtKill, files)
}

// TestFirstStartMemory starts a real acctapi serve --demo on a fresh data
// dir, with no compiled PDF reader, and lets it read the demo's PDFs: the
// compile runs in a child process, so the server's own peak resident memory
// stays within 256 MiB from its first start on (compiling PDFium holds some
// 300 MB). The peak is what the kernel counted (VmHWM), not a time.
func TestFirstStartMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")
	cacheDir := filepath.Join(tmp, "cache") // not the tests' shared, compiled one
	p, _ := anServe(t, bin, dataDir, "--demo", "--ocr", "off", "--cache-dir", cacheDir)
	read := func() int {
		t.Helper()
		conn, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "acctapi.db")+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var n int
		if err := conn.QueryRow(`SELECT count(*) FROM files WHERE name LIKE '%.pdf' AND analysis_status = 'done'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(5 * time.Minute)
	for read() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the demo's PDFs were not read within 5 minutes; stderr:\n%s", p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	peak := flVm(t, p.cmd.Process.Pid, "VmHWM")
	t.Logf("acctapi serve --demo, first start, its PDFs read: VmHWM %d KiB (%.0f MiB)", peak, float64(peak)/1024)
	if peak > 256<<10 {
		t.Errorf("peak resident memory %d KiB, want at most 256 MiB", peak)
	}
	if strings.Contains(p.stderr.String(), "compiling it in another failed") {
		t.Errorf("the PDF reader was compiled in the server's process:\n%s", p.stderr.String())
	}
	cached, err := os.ReadDir(filepath.Join(cacheDir, "pdfium"))
	if err != nil || len(cached) == 0 {
		t.Errorf("the compilation cache is empty (%v): nothing was compiled into it", err)
	}
}
