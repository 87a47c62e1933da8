package cmd

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"acctapi/mail/mailpit"
)

// silentRelay accepts SMTP connections and never answers: a relay that
// hangs, so that the sender's claims stay under way until the process is
// killed.
type silentRelay struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startSilentRelay(t *testing.T) *silentRelay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &silentRelay{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns = append(r.conns, c)
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.conns {
			c.Close()
		}
	})
	return r
}

func (r *silentRelay) accepted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.conns)
}

// mailCall sends a JSON request with the key and client and decodes the
// answer into out.
func mailCall(t *testing.T, method, url, key, clientID string, body any, want int, out any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if clientID != "" {
		req.Header.Set("x-client-id", clientID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, answer, want)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, answer)
		}
	}
}

// TestMailCrash kills the binary with SIGKILL while its mails are claimed
// and their relay hangs, restarts it on the same data dir with a real
// relay (Mailpit), and checks that each mail arrives exactly once, with
// the Message-ID it was queued with, and that no token or link is in the
// logs.
func TestMailCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	pit := mailpit.Start(t)
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	dataDir := filepath.Join(tmp, "data")
	hung := startSilentRelay(t)
	serve := func(relay string) (*process, string) {
		p := startProcess(t, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--demo", "--log-format", "json",
			"--smtp-url", "smtp://"+relay+"?insecure=true", "--mail-from", "office@kanzlei.example")
		p.waitStderr(t, 60*time.Second, "the listening log line", func(s string) bool { return listeningAddr(s) != "" })
		return p, "http://" + listeningAddr(p.stderr.String()) + "/v1"
	}

	first, base := serve(hung.l.Addr().String())
	keys := keyRE.FindAllString(first.stderr.String(), -1)
	clientIDs := demoClientRE.FindStringSubmatch(first.stderr.String())
	if len(keys) == 0 || clientIDs == nil {
		t.Fatalf("no key or demo client printed:\n%s", first.stderr.String())
	}
	key, clientID := keys[0], clientIDs[1]
	var workspaces struct{ Data []struct{ ID string } }
	mailCall(t, "GET", base+"/workspaces", key, clientID, nil, http.StatusOK, &workspaces)
	if len(workspaces.Data) == 0 {
		t.Fatal("the demo has no workspace")
	}
	want := []string{}
	for _, email := range []string{"anna@client.example", "bernd@client.example"} {
		mailCall(t, "POST", base+"/users", key, clientID, map[string]any{"email": email, "role": "user", "locale": "de",
			"workspaceIds": []string{workspaces.Data[0].ID}}, http.StatusCreated, nil)
		want = append(want, email)
	}
	mailCall(t, "POST", base+"/admin/users", key, "", map[string]any{"email": "clara@kanzlei.example", "role": "user"},
		http.StatusCreated, nil)
	want = append(want, "clara@kanzlei.example")
	var collect struct{ ID string }
	mailCall(t, "POST", base+"/collects", key, clientID, map[string]any{"workspaceId": workspaces.Data[0].ID,
		"title": "Unterlagen März", "locale": "de", "items": []map[string]any{{"title": "Kontoauszug"}}}, http.StatusCreated, &collect)
	var session struct {
		Token  string
		URL    string
		Mailed bool
	}
	mailCall(t, "POST", base+"/collects/"+collect.ID+"/sessions", key, clientID, map[string]any{"email": "dora@client.example"},
		http.StatusCreated, &session)
	want = append(want, "dora@client.example")
	if !session.Mailed {
		t.Fatal("the session answer says mailed: false")
	}

	// The sender has claimed the mails and hangs on the relay: kill it.
	deadline := time.Now().Add(30 * time.Second)
	for hung.accepted() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if hung.accepted() == 0 {
		t.Fatal("the sender never reached the relay")
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	queued := mailIDs(t, filepath.Join(dataDir, "acctapi.db"))
	if len(queued) != len(want) {
		t.Fatalf("%d mails in the outbox after the kill, want %d: %v", len(queued), len(want), queued)
	}

	second, base := serve(pit.SMTP)
	pit.WaitFor(t, len(want), 30*time.Second)
	// Anything sent twice would come right after: give it a moment.
	time.Sleep(time.Second)
	msgs := pit.Messages(t)
	var got []string
	for _, m := range msgs {
		if len(m.To) != 1 {
			t.Fatalf("a mail to %v", m.To)
		}
		got = append(got, m.To[0].Address)
		if queued[m.To[0].Address] != "<"+m.MessageID+">" {
			t.Errorf("mail to %s: Message-ID <%s>, want the queued %s", m.To[0].Address, m.MessageID, queued[m.To[0].Address])
		}
		if m.To[0].Address == "dora@client.example" && !strings.Contains(m.Text, session.URL) {
			t.Errorf("the link mail lacks the link:\n%s", m.Text)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("arrived: %v, want each of %v once", got, want)
	}
	var sessions struct {
		Data []struct {
			Email string
			Mail  struct{ Status string }
		}
	}
	mailCall(t, "GET", base+"/collects/"+collect.ID+"/sessions", key, clientID, nil, http.StatusOK, &sessions)
	if len(sessions.Data) != 1 || sessions.Data[0].Email != "dora@client.example" || sessions.Data[0].Mail.Status != "sent" {
		t.Errorf("sessions after the restart: %+v, want the link mail sent", sessions.Data)
	}
	for name, logs := range map[string]string{"first": first.stderr.String(), "second": second.stderr.String()} {
		if strings.Contains(logs, session.Token) {
			t.Errorf("the %s run logged the token", name)
		}
	}
}

// mailIDs reads the Message-ID of each queued mail that is not a reminder
// from the database file, by recipient.
func mailIDs(t *testing.T, path string) map[string]string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT recipient, message_id FROM mail_outbox WHERE kind <> 'collect_reminder'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]string{}
	for rows.Next() {
		var to, id string
		if err := rows.Scan(&to, &id); err != nil {
			t.Fatal(err)
		}
		ids[to] = id
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestMailQuotaFlag(t *testing.T) {
	t.Setenv("ACCTAPI_MAIL_QUOTA", "")
	if def := newServeCmd(&Config{}).Flags().Lookup("mail-quota").DefValue; def != "1000" {
		t.Errorf("default --mail-quota: got %s, want 1000", def)
	}
}

func TestSMTPURLFileFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "smtp-url")
	t.Setenv("ACCTAPI_SMTP_URL_FILE", file)
	if def := newServeCmd(&Config{}).Flags().Lookup("smtp-url-file").DefValue; def != file {
		t.Errorf("--smtp-url-file from the environment: %q", def)
	}
}
