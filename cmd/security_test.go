package cmd

import (
	"acctapi/server/servertest"

	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Neither a key, its secret, a download link's signature nor the signing
// secret reaches the server's log, whatever the requests carried them; the
// first keys appear once each, in the start-up banner, which is not a log
// line.
func TestSecretsNeverLogged(t *testing.T) {
	dir := t.TempDir()
	cfg, _, stderr := testConfig(dir)
	cfg.Demo = true
	r := startServer(t, cfg)
	banner := stderr.String()
	m := demoClientRE.FindStringSubmatch(banner)
	bannerKeys := keyRE.FindAllString(banner, -1)
	if m == nil || len(bannerKeys) != 2 || bannerKeys[0] != r.srv.FirstKey {
		t.Fatalf("the banner names no demo client, or not the first and the demo key:\n%s", banner)
	}
	firstKey, clientKey, clientID := bannerKeys[0], bannerKeys[1], m[1]
	workspaceID := flRawStrings(t, cfg.DatabasePath(), `SELECT workspace_id FROM files`)[0]

	// A key minted from the CLI while the server runs: printed on stdout
	// only, once.
	code, cliOut, cliErr := execute("keys", "create", "--data-dir", dir)
	cliKey := strings.TrimSpace(cliOut)
	if code != 0 || !keyRE.MatchString(cliKey) || cliKey != keyRE.FindString(cliOut) {
		t.Fatalf("keys create: exit %d, stdout %q, stderr %q", code, cliOut, cliErr)
	}
	if strings.Contains(cliErr, cliKey) || strings.Contains(cliErr, secretOf(cliKey)) {
		t.Errorf("keys create wrote the key to stderr: %q", cliErr)
	}
	content := []byte("Kontoauszug")
	fileID := flUpload(t, r.base, firstKey, clientID, workspaceID, "k.txt", content)
	link := flLink(t, r.base, firstKey, clientID, fileID)
	mustExecute(t, "signing", "rotate", "--data-dir", dir)
	// Within a second the server signs with the new secret; until then the
	// old one is still accepted: either way this link works.
	rotatedLink := flLink(t, r.base, clientKey, clientID, fileID)

	secrets := map[string]string{}
	for name, key := range map[string]string{"first key": firstKey, "demo client key": clientKey, "CLI key": cliKey} {
		secrets[name] = key
		secrets[name+"'s secret"] = secretOf(key)
	}
	wrong := firstKey[:len(firstKey)-64] + strings.Repeat("0", 64)
	secrets["a wrong secret"] = secretOf(wrong)
	requests := 0
	for _, key := range []string{firstKey, clientKey, cliKey, wrong, "not-a-key-" + secretOf(cliKey), strings.ToUpper(firstKey)} {
		servertest.Get(t, r.base+"/me", key)
		requests++
	}
	// Keys in a path or query are not logged either: the log names the
	// route, not the URL.
	servertest.Get(t, r.base+"/me?api_key="+url.QueryEscape(cliKey), "")
	servertest.Get(t, r.base+"/"+firstKey, "")
	requests += 2
	for i, l := range []string{link, rotatedLink} {
		u, err := url.Parse(l)
		if err != nil {
			t.Fatal(err)
		}
		sig := u.Query().Get("signature")
		secrets["link signature "+string(rune('1'+i))] = sig
		flMustDownload(t, l, content)
		q := u.Query()
		q.Set("signature", sig[:len(sig)-1]+"0")
		if sig[len(sig)-1] == '0' {
			q.Set("signature", sig[:len(sig)-1]+"1")
		}
		u.RawQuery = q.Encode()
		if status, _, body := flDo(t, http.MethodGet, u.String(), "", "", "", nil); status != http.StatusForbidden {
			t.Errorf("a tampered link: %d %s, want 403", status, body)
		}
		requests += 3
	}
	current, previous := flSecrets(t, cfg.DatabasePath())
	for name, h := range map[string]string{"signing secret": current, "previous signing secret": previous} {
		raw, err := hex.DecodeString(h)
		if err != nil || len(raw) != 32 {
			t.Fatalf("%s: %q is not 32 bytes of hex", name, h)
		}
		secrets[name+" (hex)"] = strings.ToLower(h)
		secrets[name+" (HEX)"] = h
		secrets[name+" (base64)"] = base64.StdEncoding.EncodeToString(raw)
		secrets[name+" (raw)"] = string(raw)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	logs := stderr.String()
	logged := 0
	for _, line := range strings.Split(strings.TrimRight(logs, "\n"), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Errorf("a log line that is not JSON: %q", line)
			continue
		}
		if entry["msg"] == "request" {
			logged++
		}
		for name, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("the log holds the %s: %s", name, line)
			}
		}
	}
	// The scan read the request log: every request is in it.
	if logged < requests {
		t.Errorf("%d request log lines, want at least the %d requests sent:\n%s", logged, requests, logs)
	}
	for _, key := range []string{firstKey, clientKey} {
		if n := strings.Count(logs, key); n != 1 {
			t.Errorf("stderr holds the key %s %d times, want once, in the banner", keyID(key), n)
		}
	}
}

// A slowloris client, which sends its headers a byte at a time and never
// ends them, is disconnected once the header timeout has passed, while
// other clients are served.
func TestSlowlorisDisconnected(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	cfg.ReadHeaderTimeout = 300 * time.Millisecond
	r := startServer(t, cfg)

	conn, err := net.Dial("tcp", r.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	trickled := make(chan int, 1)
	go func() {
		header := "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nX-Slow: "
		sent := 0
		defer func() { trickled <- sent }()
		for {
			b := byte('a')
			if sent < len(header) {
				b = header[sent]
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
			sent++
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	if status, _, body := servertest.Get(t, r.base+"/health", ""); status != http.StatusOK {
		t.Errorf("another client during the slowloris: %d %s", status, body)
	}
	// Bounded, so that a server that never hangs up fails the test rather
	// than hanging it.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(conn)
	close(stop)
	conn.Close()
	sent := <-trickled
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Fatalf("the server kept a connection open 30 s while its headers trickled in (%d bytes)", sent)
	}
	if strings.Contains(string(answer), "200 OK") {
		t.Errorf("the slowloris request was served: %q", answer)
	}
}

// A request whose headers exceed the server's 64 KiB limit gets 431 before
// any handler runs; one just under it is served.
func TestOversizedHeaders(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	r := startServer(t, cfg)
	send := func(headerBytes int) int {
		t.Helper()
		conn, err := net.Dial("tcp", r.srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		req := "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nX-Big: " + strings.Repeat("a", headerBytes) + "\r\n\r\n"
		// The server may answer before it has read everything.
		go conn.Write([]byte(req))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%d bytes of headers: %v", headerBytes, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if status := send(60 << 10); status != http.StatusOK {
		t.Errorf("60 KiB of headers: got %d, want 200", status)
	}
	if status := send(80 << 10); status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("80 KiB of headers: got %d, want 431", status)
	}
}

// Requests net/http refuses before any handler runs get its own plain-text
// answers, not the API's JSON body: http.Server has no hook for them
// (docs/security.md, section 4). This pins what that section says they are,
// so that a Go release that changes them is noticed.
func TestNetHTTPAnswersBeforeTheHandler(t *testing.T) {
	cfg, _, _ := testConfig(t.TempDir())
	r := startServer(t, cfg)
	for _, tc := range []struct {
		name, request string
		status        int
		body          string
	}{
		{"malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest, "400 Bad Request"},
		{"malformed header line", "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nno colon here\r\n\r\n", http.StatusBadRequest, "400 Bad Request"},
		{"control character in a header", "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nX-A: a\x01b\r\n\r\n", http.StatusBadRequest, "400 Bad Request"},
		{"malformed Content-Length", "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nContent-Length: x\r\n\r\n", http.StatusBadRequest, "400 Bad Request"},
		{"no Host", "GET /v1/health HTTP/1.1\r\n\r\n", http.StatusBadRequest, "400 Bad Request: missing required Host header"},
		{"malformed Host", "GET /v1/health HTTP/1.1\r\nHost: a b\r\n\r\n", http.StatusBadRequest, "400 Bad Request: malformed Host header"},
		{"headers over the limit", "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "431 Request Header Fields Too Large"},
		{"unknown Transfer-Encoding", "POST /v1/files HTTP/1.1\r\nHost: acctapi\r\nTransfer-Encoding: gzip\r\n\r\n",
			http.StatusNotImplemented, "Unsupported transfer encoding"},
		{"HTTP/2.0 request line", "GET /v1/health HTTP/2.0\r\nHost: acctapi\r\n\r\n",
			http.StatusHTTPVersionNotSupported, "505 HTTP Version Not Supported: unsupported protocol version"},
		{"unknown Expect", "GET /v1/health HTTP/1.1\r\nHost: acctapi\r\nExpect: 200-ok\r\n\r\n", http.StatusExpectationFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", r.srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
				t.Fatal(err)
			}
			// The server may answer before it has read everything.
			go conn.Write([]byte(tc.request))
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status || string(body) != tc.body {
				t.Errorf("got %d %q, want %d %q", res.StatusCode, body, tc.status, tc.body)
			}
			wantType := ""
			if tc.body != "" {
				wantType = "text/plain; charset=utf-8"
			}
			if res.Header.Get("Content-Type") != wantType {
				t.Errorf("Content-Type: got %q, want %q", res.Header.Get("Content-Type"), wantType)
			}
			if id := res.Header.Get("X-Request-Id"); id != "" || !res.Close {
				t.Errorf("X-Request-Id %q, closes the connection: %v; want no handler's header and a closed connection", id, res.Close)
			}
		})
	}
}

// serve listens on the loopback interface unless told otherwise: TLS is a
// reverse proxy's, in front of it.
func TestServeListensOnLoopbackByDefault(t *testing.T) {
	t.Setenv("ACCTAPI_ADDR", "")
	addr := newServeCmd(&Config{}).Flags().Lookup("addr").DefValue
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Errorf("the default --addr is %q, want a loopback address", addr)
	}
}

func TestTrustedProxiesFlag(t *testing.T) {
	t.Setenv("ACCTAPI_TRUSTED_PROXIES", "10.0.0.1,10.0.0.2")
	if def := newServeCmd(&Config{}).Flags().Lookup("trusted-proxies").DefValue; def != "[10.0.0.1,10.0.0.2]" {
		t.Errorf("default from the environment: %s", def)
	}
}
