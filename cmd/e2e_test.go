package cmd

import (
	"acctapi/server/servertest"

	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// watchedBuffer collects a process's output and signals every write, so that
// a test can wait for a line without polling.
type watchedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWatchedBuffer() *watchedBuffer { return &watchedBuffer{changed: make(chan struct{}, 1)} }

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.b.Write(p)
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// process is a started binary. Its output is drained by os/exec into
// watchedBuffers for as long as it runs, so it never blocks on a full pipe.
type process struct {
	cmd     *exec.Cmd
	stdout  *watchedBuffer
	stderr  *watchedBuffer
	exited  chan struct{}
	waitErr error
}

// hermeticEnv is the test's environment without ACCTAPI_* settings, which
// would change the binary's defaults, but for the compiled PDF reader every
// test shares (servertest.CacheDir).
func hermeticEnv() []string {
	env := []string{"ACCTAPI_CACHE_DIR=" + servertest.CacheDir}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ACCTAPI_") {
			env = append(env, kv)
		}
	}
	return env
}

// startProcess starts the binary; the test's cleanup kills it if it still runs.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	return startProcessEnv(t, nil, bin, args...)
}

// startProcessEnv is startProcess with env added to its environment.
func startProcessEnv(t *testing.T, env []string, bin string, args ...string) *process {
	t.Helper()
	return startProcessIn(t, append(hermeticEnv(), env...), bin, args...)
}

// startProcessIn is startProcess with env as its whole environment.
func startProcessIn(t *testing.T, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), stdout: newWatchedBuffer(), stderr: newWatchedBuffer(), exited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("process %d did not exit after SIGKILL", p.cmd.Process.Pid)
		}
	})
	return p
}

// waitStderr waits until done accepts the process's stderr, failing the
// test when the process exits first or the timeout passes.
func (p *process) waitStderr(t *testing.T, timeout time.Duration, what string, done func(string) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if done(p.stderr.String()) {
			return
		}
		select {
		case <-p.stderr.changed:
		case <-p.exited:
			if done(p.stderr.String()) {
				return
			}
			t.Fatalf("the server exited (%v) before %s; stderr:\n%s", p.waitErr, what, p.stderr.String())
		case <-deadline:
			t.Fatalf("no %s within %v; stderr:\n%s", what, timeout, p.stderr.String())
		}
	}
}

// runBinary runs the binary to completion (bounded) and returns its output.
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = hermeticEnv()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	return out.String(), errb.String(), err
}

func mustRunBinary(t *testing.T, bin string, args ...string) string {
	t.Helper()
	stdout, stderr, err := runBinary(t, bin, args...)
	if err != nil {
		t.Fatalf("acctapi %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// buildBinary builds acctapi from the module root into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the binary: %v", err)
	}
	bin := filepath.Join(dir, "acctapi")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".")
	build.Dir = ".." // the module root: this test runs in cmd
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// listeningAddr returns the addr of the JSON log line "listening", if any.
func listeningAddr(logs string) string {
	for _, line := range strings.Split(logs, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			return rec.Addr
		}
	}
	return ""
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")

	help := mustRunBinary(t, bin, "--help")
	for _, name := range []string{"serve", "migrate", "keys", "version"} {
		if !regexp.MustCompile(`(?m)^\s+` + name + `\s`).MatchString(help) {
			t.Errorf("acctapi --help does not list %s:\n%s", name, help)
		}
	}
	if out := mustRunBinary(t, bin, "version"); !strings.Contains(out, "schema version") {
		t.Errorf("acctapi version prints %q, want the schema version", out)
	}

	srv := startProcess(t, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--demo",
		"--log-format", "json", "--shutdown-timeout", "5s")
	srv.waitStderr(t, 60*time.Second, "first key, demo client and listening log line", func(s string) bool {
		return len(keyRE.FindAllString(s, -1)) >= 2 && demoClientRE.MatchString(s) && listeningAddr(s) != ""
	})
	banner := srv.stderr.String()
	printed := keyRE.FindAllString(banner, -1)
	if len(printed) != 2 {
		t.Fatalf("the server printed %d keys, want the first key and the demo client key:\n%s", len(printed), banner)
	}
	firstKey, demoKey := printed[0], printed[1]
	if strings.Index(banner, demoKey) < strings.Index(banner, "demo client") {
		t.Errorf("the second key is not the demo client's:\n%s", banner)
	}
	demoClientID := demoClientRE.FindStringSubmatch(banner)[1]
	base := "http://" + listeningAddr(banner) + "/v1"

	if p := me(t, base, firstKey); p.Type != "accountant" || len(p.Permissions) != len(allPermissions) {
		t.Errorf("first key: %+v", p)
	}
	if p := me(t, base, demoKey); p.Type != "client" || p.ClientID == nil || *p.ClientID != demoClientID {
		t.Errorf("demo client key: %+v, want client %s", p, demoClientID)
	}

	// Keys minted by the binary while the server runs on the same data dir.
	acct := parseKeyJSON(t, mustRunBinary(t, bin, "keys", "create", "--json", "--data-dir", dataDir))
	client := parseKeyJSON(t, mustRunBinary(t, bin, "keys", "create", "--json", "--client", demoClientID, "--data-dir", dataDir))
	acctKey, clientKey := acct.str("key"), client.str("key")
	if acct.str("type") != "accountant" || client.str("type") != "client" || client.str("clientId") != demoClientID {
		t.Fatalf("minted keys: %v and %v", acct, client)
	}

	for _, k := range []struct {
		name, key, id, typ, clientID string
	}{
		{"accountant", acctKey, acct.str("id"), "accountant", ""},
		{"client", clientKey, client.str("id"), "client", demoClientID},
	} {
		status, header, body := servertest.Get(t, base+"/me", k.key)
		if status != http.StatusOK {
			t.Fatalf("%s key: GET /v1/me %d %s", k.name, status, body)
		}
		var p principal
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("%s key: %v in %s", k.name, err, body)
		}
		if p.Type != k.typ || p.APIKeyID != k.id {
			t.Errorf("%s key: type %q apiKeyId %q, want %q %q", k.name, p.Type, p.APIKeyID, k.typ, k.id)
		}
		switch {
		case k.clientID == "" && p.ClientID != nil:
			t.Errorf("%s key: clientId %q, want none", k.name, *p.ClientID)
		case k.clientID != "" && (p.ClientID == nil || *p.ClientID != k.clientID):
			t.Errorf("%s key: clientId %v, want %s", k.name, p.ClientID, k.clientID)
		}
		for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-Request-Id"} {
			if header.Get(h) == "" {
				t.Errorf("%s key: GET /v1/me lacks the %s header", k.name, h)
			}
		}
	}

	// A revoked key is refused within 2 seconds of the revoke command.
	mustRunBinary(t, bin, "keys", "revoke", client.str("id"), "--data-dir", dataDir)
	revoked := time.Now()
	for {
		sent := time.Now()
		status, header, body := servertest.Get(t, base+"/me", clientKey)
		if status == http.StatusUnauthorized {
			if after := sent.Sub(revoked); after > 2*time.Second {
				t.Errorf("the revoked key was refused only %v after the revoke", after)
			} else {
				t.Logf("the revoked key was refused %v after the revoke", after.Round(time.Millisecond))
			}
			checkUnauthorizedBody(t, body)
			if header.Get("RateLimit-Limit") == "" {
				t.Error("the 401 lacks RateLimit-Limit")
			}
			break
		}
		if status != http.StatusOK {
			t.Fatalf("GET /v1/me with the key being revoked: %d %s", status, body)
		}
		if sent.Sub(revoked) > 2*time.Second {
			t.Fatalf("the revoked key still works %v after the revoke", sent.Sub(revoked))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := me(t, base, acctKey); p.APIKeyID != acct.str("id") {
		t.Errorf("accountant key after the revoke: %+v", p)
	}

	// SIGTERM: a clean stop.
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not exit within 10s of SIGTERM; stderr:\n%s", srv.stderr.String())
	}
	if srv.waitErr != nil || srv.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the server exited with %v (code %d) after SIGTERM; stderr:\n%s",
			srv.waitErr, srv.cmd.ProcessState.ExitCode(), srv.stderr.String())
	}

	// The log: keys are printed once in the banner, minted keys never;
	// requests are logged by key id.
	logs := srv.stderr.String()
	for _, k := range []string{acctKey, clientKey} {
		if strings.Contains(logs, secretOf(k)) {
			t.Errorf("the server log holds the secret of the minted key %s", keyID(k))
		}
	}
	for _, k := range []string{firstKey, demoKey} {
		if n := strings.Count(logs, secretOf(k)); n != 1 {
			t.Errorf("the secret of the printed key %s appears %d times in stderr, want once", keyID(k), n)
		}
	}
	loggedKeys := map[string]bool{}
	for _, line := range strings.Split(logs, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line is not JSON: %v: %s", err, line)
			continue
		}
		if rec["msg"] == "request" {
			id, _ := rec["key_id"].(string)
			loggedKeys[id] = true
		}
	}
	for _, id := range []string{acct.str("id"), client.str("id"), keyID(firstKey), keyID(demoKey)} {
		if !loggedKeys[id] {
			t.Errorf("no request log line names key %s", id)
		}
	}
	if !strings.Contains(logs, `"msg":"shutting down"`) {
		t.Error("no shutting down log line")
	}

	// keys list after the run: the secrets stay secret.
	list := mustRunBinary(t, bin, "keys", "list", "--json", "--data-dir", dataDir)
	for _, k := range []string{firstKey, demoKey, acctKey, clientKey} {
		if strings.Contains(list, secretOf(k)) {
			t.Errorf("keys list shows the secret of %s", keyID(k))
		}
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(list), &listed); err != nil {
		t.Fatalf("keys list --json: %v in %s", err, list)
	}
	var revokedIDs []string
	for _, k := range listed {
		if _, ok := k["revokedAt"]; ok {
			id, _ := k["id"].(string)
			revokedIDs = append(revokedIDs, id)
		}
	}
	if !slices.Equal(revokedIDs, []string{client.str("id")}) {
		t.Errorf("revoked keys %v, want [%s]", revokedIDs, client.str("id"))
	}
}

// checkUnauthorizedBody checks the exact four-field 401 body.
func checkUnauthorizedBody(t *testing.T, body []byte) {
	t.Helper()
	const prefix = `{"status_code":401,"type":"auth_error","code":"unauthorized","message":`
	if !bytes.HasPrefix(body, []byte(prefix)) {
		t.Errorf("401 body %s, want it to start %s", body, prefix)
	}
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("401 body %s: %v", body, err)
	}
	if len(fields) != 4 {
		t.Errorf("401 body has %d fields, want exactly status_code, type, code, message: %s", len(fields), body)
	}
	if msg, _ := fields["message"].(string); msg == "" {
		t.Errorf("401 body without a message: %s", body)
	}
}
