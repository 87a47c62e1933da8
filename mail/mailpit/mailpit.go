// Package mailpit runs Mailpit, a real SMTP server with an HTTP API, for
// the tests of the mails: each test starts its own on 127.0.0.1 on free
// ports, reads what arrived through the API, and stops it at the end.
package mailpit

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"acctapi/testprog"
)

// Version is the Mailpit release the tests run against; .ci/run installs
// it.
const Version = "v1.27.11"

// Install is how to install it.
const Install = "go install github.com/axllent/mailpit@" + Version

// Server is a running Mailpit.
type Server struct {
	// SMTP is its SMTP address, host:port.
	SMTP string
	api  string
	cmd  *exec.Cmd
	out  *testprog.Output
}

// Start runs a Mailpit with chaos enabled (SetRefusal) and any SMTP
// credentials accepted (over plain SMTP too, unless extra holds Mailpit's
// TLS flags), and stops it when the test ends.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := testprog.Find(t, "mailpit", Install)
	for attempt := 0; ; attempt++ {
		smtpPort, apiPort := testprog.FreePort(t), testprog.FreePort(t)
		s := &Server{SMTP: "127.0.0.1:" + strconv.Itoa(smtpPort), api: "http://127.0.0.1:" + strconv.Itoa(apiPort),
			out: &testprog.Output{}}
		s.cmd = exec.Command(bin, "--smtp", s.SMTP, "--listen", "127.0.0.1:"+strconv.Itoa(apiPort),
			"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--enable-chaos",
			"--smtp-auth-accept-any", "--disable-version-check", "--quiet")
		if len(extra) == 0 {
			s.cmd.Args = append(s.cmd.Args, "--smtp-auth-allow-insecure")
		}
		s.cmd.Args = append(s.cmd.Args, extra...)
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start mailpit: %v", err)
		}
		exited := make(chan struct{})
		go func() {
			s.cmd.Wait()
			close(exited)
		}()
		if s.ready(exited) {
			t.Cleanup(func() {
				s.cmd.Process.Kill()
				<-exited
			})
			return s
		}
		s.cmd.Process.Kill()
		<-exited
		if attempt == 2 {
			t.Fatalf("mailpit did not start: %s", s.out.String())
		}
	}
}

// ready waits for the API and the SMTP port to answer; false when the
// process exits first.
func (s *Server) ready(exited <-chan struct{}) bool {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		resp, err := http.Get(s.api + "/api/v1/info")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", s.SMTP); err == nil {
				c.Close()
				return resp.StatusCode == http.StatusOK
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// Address is a mail address as Mailpit reports it.
type Address struct {
	Name    string
	Address string
}

// Message is a mail Mailpit received.
type Message struct {
	ID        string
	MessageID string
	From      Address
	To        []Address
	Subject   string
	Text      string
	HTML      string
}

// Messages returns every mail received, oldest first, with their parts.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	var list struct {
		Messages []struct{ ID string }
	}
	s.get(t, "/api/v1/messages?limit=1000", &list)
	msgs := make([]Message, 0, len(list.Messages))
	for i := len(list.Messages) - 1; i >= 0; i-- {
		var m Message
		s.get(t, "/api/v1/message/"+list.Messages[i].ID, &m)
		msgs = append(msgs, m)
	}
	return msgs
}

// Headers returns the headers of a received mail.
func (s *Server) Headers(t testing.TB, id string) map[string][]string {
	t.Helper()
	var h map[string][]string
	s.get(t, "/api/v1/message/"+id+"/headers", &h)
	return h
}

// WaitFor waits up to timeout for n mails and returns all received.
func (s *Server) WaitFor(t testing.TB, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := s.Messages(t)
		if len(msgs) >= n || time.Now().After(deadline) {
			return msgs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SetRefusal makes the server refuse every recipient with code (a 4xx
// is a refusal for now, a 5xx for good); 0 accepts again.
func (s *Server) SetRefusal(t testing.TB, code int) {
	t.Helper()
	body := `{}`
	if code != 0 {
		body = fmt.Sprintf(`{"Recipient":{"ErrorCode":%d,"Probability":100}}`, code)
	}
	req, err := http.NewRequest(http.MethodPut, s.api+"/api/v1/chaos", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("set chaos: %s", resp.Status)
	}
}

func (s *Server) get(t testing.TB, path string, v any) {
	t.Helper()
	resp, err := http.Get(s.api + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
