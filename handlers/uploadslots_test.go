package handlers

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// running is how many uploads run.
func (s *uploadSlots) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// waitUploads waits until n uploads run.
func (api *testAPI) waitUploads(t *testing.T, n int) {
	t.Helper()
	for start := time.Now(); api.handler.uploads.running() != n; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d uploads run, want %d", api.handler.uploads.running(), n)
		}
	}
}

// slowUpload starts an upload of a file to path on a connection of its own
// and leaves it open after the file's first byte, with the key and client
// when key is set.
func (api *testAPI) slowUpload(t *testing.T, path, key, clientID string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", api.server.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: %s\r\nContent-Length: 100000\r\n", path, flMultipart)
	if key != "" {
		fmt.Fprintf(conn, "Authorization: Bearer %s\r\nx-client-id: %s\r\n", key, clientID)
	}
	fmt.Fprintf(conn, "\r\n--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\nx", flBoundary)
	return conn
}

// TestUploadMinimumRate: an upload slower on average than the minimum rate
// after its grace is cut off, however it spaces its bytes, and leaves no
// bytes behind; one at speed goes through.
func TestUploadMinimumRate(t *testing.T) {
	api := newTestAPI(t)
	api.handler.uploadLimits.grace, api.handler.uploadLimits.minRate = 300*time.Millisecond, 1000
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c.ID, map[string]any{})
	before := api.flStoredFiles(t)

	conn := api.slowUpload(t, "/v1/collect-sessions/"+s.Token+"/items/"+c.Items[0].ID+"/files", "", "")
	start := time.Now()
	go func() {
		// A byte every 100 ms: each would have moved an idle deadline.
		for {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := bufio.NewReader(conn).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the slow upload was still open after %v", time.Since(start))
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the slow upload was cut off after %v, want soon after its grace", took)
	}
	api.waitUploads(t, 0)
	for start := time.Now(); len(api.flStoredFiles(t)) != len(before); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("file store after the cut: %v, want %v", api.flStoredFiles(t), before)
		}
	}
	api.clMustUpload(t, s.Token, c.Items[0].ID, flFilePart("fast.pdf", "", make([]byte, 200<<10)))
}

// TestUploadConcurrencyBounds: uploads running at once are bounded per
// link, per API key and per server; past a bound the answer is 429
// too_many_uploads with Retry-After, before any byte is read, and the slot
// is free again when an upload ends.
func TestUploadConcurrencyBounds(t *testing.T) {
	api := newTestAPI(t)
	api.handler.uploadLimits.perLink, api.handler.uploadLimits.perKey, api.handler.uploadLimits.perServer = 2, 2, 3
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	a := api.clMustSession(t, f, c.ID, map[string]any{})
	b := api.clMustSession(t, f, c.ID, map[string]any{})
	other := api.clMustSession(t, f, c.ID, map[string]any{})
	path := func(token string) string {
		return "/v1/collect-sessions/" + token + "/items/" + c.Items[0].ID + "/files"
	}
	busy := func(t *testing.T, res *response) {
		t.Helper()
		wantError(t, res, http.StatusTooManyRequests, "rate_limit", "too_many_uploads", "")
		if got := res.header.Get("Retry-After"); got != "10" {
			t.Errorf("Retry-After: got %q, want 10", got)
		}
	}
	file := flFilePart("a.pdf", "", []byte("a"))

	first := api.slowUpload(t, path(a.Token), "", "")
	api.slowUpload(t, path(a.Token), "", "")
	api.waitUploads(t, 2)
	busy(t, api.clUpload(t, a.Token, c.Items[0].ID, file))
	api.slowUpload(t, path(b.Token), "", "")
	api.waitUploads(t, 3)
	busy(t, api.clUpload(t, other.Token, c.Items[0].ID, file))
	busy(t, api.flUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", f.workspaceID), file))

	first.Close()
	api.waitUploads(t, 2)
	api.clMustUpload(t, a.Token, c.Items[0].ID, file)

	// Per key: the key's third upload waits; another key's goes on.
	api.handler.uploadLimits.perServer = 100
	api.slowUpload(t, "/v1/files", api.accountantKey, api.client.ID)
	api.slowUpload(t, "/v1/files", api.accountantKey, api.client.ID)
	api.waitUploads(t, 4)
	busy(t, api.flUpload(t, api.accountantKey, api.client.ID, flField("workspaceId", f.workspaceID), file))
	if res := api.flUpload(t, api.clientKey, api.client.ID, flField("workspaceId", f.workspaceID), file); res.status != http.StatusCreated {
		t.Errorf("another key's upload: %d %s", res.status, res.body)
	}
}
