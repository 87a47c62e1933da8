package handlers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// trickled is what a raw client saw of a request whose body it sent a
// byte every pause after its headers: the answer's status line, when it
// came, and when the server closed the connection.
type trickled struct {
	status          string
	answered, close time.Duration
	err             error
}

// trickle sends head (a request's line and headers, without the blank
// line), then a body a byte at a time, and reads until the server closes.
func trickle(addr, head string, chunked bool, pause time.Duration) trickled {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return trickled{err: err}
	}
	defer conn.Close()
	start := time.Now()
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		return trickled{err: err}
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		b := []byte("x")
		if chunked {
			b = []byte("1\r\nx\r\n")
		}
		for {
			if _, err := conn.Write(b); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
		}
	}()
	// Bounded, so that a server that never hangs up fails the test rather
	// than hanging it.
	conn.SetReadDeadline(start.Add(20 * time.Second))
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return trickled{err: fmt.Errorf("no answer: %w", err)}
	}
	t := trickled{status: strings.TrimSpace(line), answered: time.Since(start)}
	_, err = io.Copy(io.Discard, r)
	t.close = time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.err = errors.New("the server kept the connection open")
	}
	return t
}

// TestRefusedSlowBodies: a request refused before its body is read (no
// key, a declared body over the limit, an upload past the link's bound)
// is answered at once and its connection closed, however slowly its body
// comes, chunked or not; the connection is not held to read the body.
func TestRefusedSlowBodies(t *testing.T) {
	api := newTestAPI(t)
	api.handler.uploadLimits.perLink = 0
	f := api.clFixture(t, api.accountantKey, api.client.ID)
	c := api.clMustCreate(t, f)
	s := api.clMustSession(t, f, c.ID, map[string]any{})
	addr := api.server.Listener.Addr().String()
	keyed := fmt.Sprintf("Authorization: Bearer %s\r\nx-client-id: %s\r\n", api.accountantKey, api.client.ID)
	for _, tt := range []struct {
		name, head string
		chunked    bool
		want       int
	}{
		{"no key", "POST /v1/tasks HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n", false, 401},
		{"no key, chunked", "POST /v1/tasks HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n", true, 401},
		{"a bad key", "POST /v1/tasks HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer nope\r\nContent-Length: 200000\r\n", false, 401},
		{"over the upload limit", "POST /v1/files HTTP/1.1\r\nHost: t\r\n" + keyed +
			"Content-Type: " + flMultipart + "\r\nContent-Length: 104857600\r\n", false, 413},
		{"past the link's uploads", "POST /v1/collect-sessions/" + s.Token + "/items/" + c.Items[0].ID + "/files HTTP/1.1\r\nHost: t\r\n" +
			"Content-Type: " + flMultipart + "\r\nContent-Length: 200000\r\n", false, 429},
		{"past the link's uploads, chunked", "POST /v1/collect-sessions/" + s.Token + "/items/" + c.Items[0].ID + "/files HTTP/1.1\r\nHost: t\r\n" +
			"Content-Type: " + flMultipart + "\r\nTransfer-Encoding: chunked\r\n", true, 429},
		{"no route", "POST /v1/nothing-here HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n", false, 404},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := trickle(addr, tt.head, tt.chunked, 200*time.Millisecond)
			if got.err != nil {
				t.Fatal(got.err)
			}
			if !strings.Contains(got.status, fmt.Sprint(tt.want)) {
				t.Errorf("answer %q, want %d", got.status, tt.want)
			}
			if got.answered > time.Second || got.close > 2*time.Second {
				t.Errorf("answered after %v, closed after %v; want at once", got.answered, got.close)
			}
		})
	}

	// A body read to its end keeps the connection for the next request.
	res := api.do(request{method: "POST", path: "/v1/tasks", key: api.accountantKey, clientID: api.client.ID,
		body: map[string]any{"title": "Kept", "workspaceId": f.workspaceID}})
	if res.status != http.StatusCreated || res.header.Get("Connection") == "close" {
		t.Errorf("a request read whole: %d, Connection %q", res.status, res.header.Get("Connection"))
	}
}

// TestManySlowRefusedBodies: 40 requests without a key, each sending its
// 200 kB body a byte at a time, are answered 401 at once and each
// connection closed within the body deadline for requests without a key.
func TestManySlowRefusedBodies(t *testing.T) {
	api := newTestAPI(t)
	addr := api.server.Listener.Addr().String()
	const n = 40
	results := make([]trickled, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i] = trickle(addr, "POST /v1/files HTTP/1.1\r\nHost: t\r\nContent-Type: "+flMultipart+
				"\r\nContent-Length: 200000\r\n", false, time.Second)
		})
	}
	wg.Wait()
	var slowest time.Duration
	for i, r := range results {
		if r.err != nil || !strings.Contains(r.status, "401") {
			t.Errorf("request %d: %q, %v", i, r.status, r.err)
			continue
		}
		slowest = max(slowest, r.close)
	}
	t.Logf("%d slow refused bodies: the last connection closed after %v", n, slowest)
	if slowest > UnkeyedBodyTimeout {
		t.Errorf("a connection was held %v, over the %v deadline", slowest, UnkeyedBodyTimeout)
	}
}
