package webhooks_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"acctapi/webhooks"
)

// docReceiver is the Go block of the Webhooks section of
// docs/getting-started.md.
var docReceiver = regexp.MustCompile("(?s)\n## Webhooks\n.*?```go\n(.*?)```")

// TestGettingStartedReceiver builds the receiver that getting-started.md
// shows and checks that it takes what the server signs and refuses what it
// did not sign.
func TestGettingStartedReceiver(t *testing.T) {
	page, err := os.ReadFile("../docs/getting-started.md")
	if err != nil {
		t.Fatal(err)
	}
	m := docReceiver.FindSubmatch(page)
	if m == nil {
		t.Fatal("docs/getting-started.md has no Go block in its Webhooks section")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "receiver.go"), m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module receiver\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the receiver: %v", err)
	}
	build := exec.Command(goTool, "build", "-o", "receiver", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of getting-started.md's receiver: %v\n%s", err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	secret, oldSecret := webhooks.NewSecret(), webhooks.NewSecret()
	var logs bytes.Buffer
	receiver := exec.Command(filepath.Join(dir, "receiver"))
	receiver.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret, "ADDR="+addr)
	receiver.Stdout, receiver.Stderr = &logs, &logs
	if err := receiver.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { receiver.Process.Kill(); receiver.Wait() })
	url := "http://" + addr + "/acctapi"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver did not listen: %s", logs.String())
		}
	}

	client := webhooks.NewClient(webhooks.ClientOptions{AllowPrivate: true})
	body := []byte(`{"id":"cevent1","type":"task.created","data":{"title":"Grüße & <tags>"}}`)
	now := time.Now().Unix()
	send := func(id string, ts int64, body []byte, secrets ...string) webhooks.Attempt {
		return client.Send(context.Background(), url, id, ts, body, secrets...)
	}
	for _, tc := range []struct {
		name   string
		got    webhooks.Attempt
		status int
	}{
		{"signed with the secret", send("cevent1", now, body, secret), http.StatusNoContent},
		{"during a rotation, the new secret's signature second", send("cevent2", now, body, oldSecret, secret), http.StatusNoContent},
		{"signed with another secret", send("cevent3", now, body, oldSecret), http.StatusUnauthorized},
		{"ten minutes old", send("cevent4", now-600, body, secret), http.StatusUnauthorized},
	} {
		if tc.got.StatusCode != tc.status {
			t.Errorf("%s: got %d (%s), want %d", tc.name, tc.got.StatusCode, tc.got.Err, tc.status)
		}
	}

	// A body changed after signing is refused.
	sig, err := webhooks.Sign(secret, "cevent5", now, body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", url, bytes.NewReader(append(body, ' ')))
	req.Header.Set("webhook-id", "cevent5")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
	req.Header.Set("webhook-signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a body changed after signing: got %d, want 401", res.StatusCode)
	}
}
