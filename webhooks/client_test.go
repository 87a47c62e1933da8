package webhooks

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newReceiver starts an https receiver on 127.0.0.1 and returns it with
// client options that trust its certificate and allow its private address.
func newReceiver(t *testing.T, h http.Handler) (*httptest.Server, ClientOptions) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	// Refused handshakes are what some tests are about, not noise to print.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig
	return srv, ClientOptions{AllowPrivate: true, TLSConfig: roots}
}

// counting answers 200 and counts the requests it gets.
func counting(n *atomic.Int32) http.HandlerFunc {
	return func(http.ResponseWriter, *http.Request) { n.Add(1) }
}

func TestSendSignedDelivery(t *testing.T) {
	type received struct {
		header http.Header
		body   []byte
	}
	got := make(chan received, 1)
	srv, opts := newReceiver(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Header.Clone(), b}
		io.WriteString(w, "thanks")
	}))
	current, previous := NewSecret(), NewSecret()
	const id = "cm1a2b3c4d5e6f7g8"
	ts := time.Now().Unix()
	body := []byte(`{"type":"task.created","data":{"id":"c1"}}`)

	a := NewClient(opts).Send(t.Context(), srv.URL+"/hook", id, ts, body, current, previous)
	if !a.OK() || a.StatusCode != http.StatusOK || a.Err != "" || string(a.Body) != "thanks" {
		t.Fatalf("got %+v, want a 200 with body thanks", a)
	}
	r := <-got
	if string(r.body) != string(body) {
		t.Errorf("body: got %q, want %q", r.body, body)
	}
	for name, want := range map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "acctapi-webhooks/1",
		"Webhook-Id":        id,
		"Webhook-Timestamp": strconv.FormatInt(ts, 10),
	} {
		if got := r.header.Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	header := r.header.Get("Webhook-Signature")
	entries := strings.Split(header, " ")
	if len(entries) != 2 {
		t.Fatalf("webhook-signature: got %q, want two entries", header)
	}
	now := time.Unix(ts, 0)
	for i, secret := range []string{current, previous} {
		if err := Verify(secret, id, ts, r.body, entries[i], now); err != nil {
			t.Errorf("entry %d against its secret: %v", i, err)
		}
		if err := Verify(secret, id, ts, r.body, header, now); err != nil {
			t.Errorf("whole header against secret %d: %v", i, err)
		}
	}
}

func TestSendRedirectNotFollowed(t *testing.T) {
	var followed atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("/elsewhere", counting(&followed))
	for _, code := range []int{301, 302, 303, 307, 308} {
		mux.Handle("/"+strconv.Itoa(code), http.RedirectHandler("/elsewhere", code))
	}
	srv, opts := newReceiver(t, mux)
	c := NewClient(opts)
	for _, code := range []int{301, 302, 303, 307, 308} {
		a := c.Send(t.Context(), srv.URL+"/"+strconv.Itoa(code), "msg_1", 1, []byte("{}"), NewSecret())
		want := "redirect not followed (" + strconv.Itoa(code) + ")"
		if a.OK() || a.StatusCode != code || a.Err != want {
			t.Errorf("%d: got %+v, want status %d and Err %q", code, a, code, want)
		}
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests, want 0", n)
	}
}

func TestSendStatus(t *testing.T) {
	srv, opts := newReceiver(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		http.Error(w, "boom", code)
	}))
	c := NewClient(opts)
	for _, tc := range []struct {
		code int
		err  string
	}{
		{201, ""},
		{299, ""},
		{400, "status 400"},
		{404, "status 404"},
		{410, "status 410"},
		{429, "status 429"},
		{500, "status 500"},
		{503, "status 503"},
	} {
		a := c.Send(t.Context(), srv.URL+"/?code="+strconv.Itoa(tc.code), "msg_1", 1, []byte("{}"), NewSecret())
		if a.OK() != (tc.err == "") || a.StatusCode != tc.code || a.Err != tc.err || string(a.Body) != "boom\n" {
			t.Errorf("%d: got %+v, want Err %q and body boom", tc.code, a, tc.err)
		}
	}
}

func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	srv, opts := newReceiver(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices the client leaving only once the body is read.
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
			// No answer at all: a 200 written now could reach a client
			// whose own timeout has not yet been reported (seen under
			// -race on a loaded machine).
			panic(http.ErrAbortHandler)
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for handlers
	opts.Timeout = 200 * time.Millisecond
	a := NewClient(opts).Send(t.Context(), srv.URL, "msg_1", 1, []byte("{}"), NewSecret())
	if a.OK() || a.StatusCode != 0 || a.Err != "timeout" {
		t.Errorf("got %+v, want no answer and Err timeout", a)
	}
}

func TestSendCanceled(t *testing.T) {
	var hits atomic.Int32
	srv, opts := newReceiver(t, counting(&hits))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	a := NewClient(opts).Send(ctx, srv.URL, "msg_1", 1, []byte("{}"), NewSecret())
	if a.OK() || a.Err != "canceled" || hits.Load() != 0 {
		t.Errorf("got %+v and %d requests, want Err canceled and none", a, hits.Load())
	}
}

func TestSendBoundsAnswer(t *testing.T) {
	answer := strings.Repeat("x", 4<<20)
	srv, opts := newReceiver(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, answer)
	}))
	opts.MaxBody = 1000
	a := NewClient(opts).Send(t.Context(), srv.URL, "msg_1", 1, []byte("{}"), NewSecret())
	if !a.OK() || string(a.Body) != answer[:1000] {
		t.Errorf("got status %d, Err %q, %d body bytes, want a 200 with 1000", a.StatusCode, a.Err, len(a.Body))
	}
}

func TestSendRefusesPrivateAddress(t *testing.T) {
	var hits atomic.Int32
	srv, opts := newReceiver(t, counting(&hits))
	opts.AllowPrivate = false
	c := NewClient(opts)

	a := c.Send(t.Context(), srv.URL, "msg_1", 1, []byte("{}"), NewSecret())
	if a.OK() || a.StatusCode != 0 || a.Err != "address not allowed: 127.0.0.1" {
		t.Errorf("127.0.0.1: got %+v, want Err address not allowed: 127.0.0.1", a)
	}

	// A name is only resolved when dialing, so this is the path a name that
	// passed CheckURL and was later pointed at a private address takes.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	a = c.Send(t.Context(), "https://localhost:"+port, "msg_1", 1, []byte("{}"), NewSecret())
	addr, ok := strings.CutPrefix(a.Err, "address not allowed: ")
	if ip, err := netip.ParseAddr(addr); !ok || err != nil || !ip.IsLoopback() {
		t.Errorf("localhost: got %+v, want Err address not allowed: <loopback>", a)
	}

	a = c.Send(t.Context(), "http://127.0.0.1:"+port, "msg_1", 1, []byte("{}"), NewSecret())
	if a.Err != "url not allowed: url must be an absolute https URL" {
		t.Errorf("http: got %+v, want Err url not allowed", a)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the receiver got %d requests, want 0", n)
	}
}

func TestSendConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + ln.Addr().String()
	ln.Close()
	a := NewClient(ClientOptions{AllowPrivate: true}).Send(t.Context(), url, "msg_1", 1, []byte("{}"), NewSecret())
	if a.OK() || a.Err != "connection refused" {
		t.Errorf("got %+v, want Err connection refused", a)
	}
}

func TestSendUntrustedCertificate(t *testing.T) {
	var hits atomic.Int32
	srv, _ := newReceiver(t, counting(&hits))
	a := NewClient(ClientOptions{AllowPrivate: true}).Send(t.Context(), srv.URL, "msg_1", 1, []byte("{}"), NewSecret())
	if a.OK() || a.Err != "tls: certificate not valid for this host" || hits.Load() != 0 {
		t.Errorf("got %+v and %d requests, want a TLS refusal and none", a, hits.Load())
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	c := NewClient(ClientOptions{})
	for _, tc := range []struct {
		url, id string
		secrets []string
		want    string
	}{
		{"https://example.com/#x", "msg_1", []string{NewSecret()}, "url not allowed: url must not contain a fragment (#...)"},
		{"https://example.com/", "msg_1", nil, "no signing secret"},
		{"https://example.com/", "msg.1", []string{NewSecret()}, "cannot sign: "},
		{"https://example.com/", "msg_1", []string{NewSecret(), "whsec_short"}, "cannot sign: "},
	} {
		a := c.Send(t.Context(), tc.url, tc.id, 1, []byte("{}"), tc.secrets...)
		if a.OK() || !strings.HasPrefix(a.Err, tc.want) {
			t.Errorf("%s %s %d secrets: got %+v, want Err %q", tc.url, tc.id, len(tc.secrets), a, tc.want)
		}
	}
}
