package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"acctapi/webhooks"
)

// whCall is one request the kill test's receiver got.
type whCall struct {
	id, timestamp, signature string
	body                     []byte
}

// whKillReceiver records every request; until release is closed it holds
// each one open, so that the server is killed in the middle of an attempt.
type whKillReceiver struct {
	mu      sync.Mutex
	calls   []whCall
	release chan struct{}
	holding chan struct{} // closed when the first request is held
	once    sync.Once
}

func (r *whKillReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.calls = append(r.calls, whCall{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature"), body})
	r.mu.Unlock()
	select {
	case <-r.release:
	default:
		r.once.Do(func() { close(r.holding) })
		select {
		case <-r.release:
		case <-req.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *whKillReceiver) received() []whCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]whCall(nil), r.calls...)
}

// TestWebhooksSurviveKill kills the server with events pending, one of them
// in the middle of its delivery and task creations in flight, restarts it,
// and checks that every event arrives, that no event is made up, and that
// the only repeats are of the delivery the kill interrupted.
func TestWebhooksSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	d := newFLDemo(t)
	key := parseKeyJSON(t, mustExecute(t, "keys", "create", "--json", "--name", "webhook kill test",
		"--rate-limit-max", "1000000000", "--data-dir", d.dir)).str("key")
	receiver := &whKillReceiver{release: make(chan struct{}), holding: make(chan struct{})}
	receiverServer := httptest.NewServer(receiver)
	t.Cleanup(receiverServer.Close)
	t.Cleanup(func() {
		select {
		case <-receiver.release:
		default:
			close(receiver.release)
		}
	})

	start := func() (*process, *crashAPI) {
		p := startProcess(t, bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", d.dir, "--log-format", "json", "--allow-private-webhooks")
		p.waitStderr(t, 60*time.Second, "the listening log line", func(s string) bool { return listeningAddr(s) != "" })
		api := &crashAPI{base: "http://" + listeningAddr(p.stderr.String()) + "/v1", key: key, clientID: d.clientID,
			http: &http.Client{Timeout: time.Minute}}
		t.Cleanup(api.http.CloseIdleConnections)
		return p, api
	}
	p, api := start()
	before, _ := api.allTasks(t)
	var hook struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	api.must(t, http.MethodPost, "/webhooks", map[string]any{"url": receiverServer.URL + "/hook", "events": []string{"task.created"}}, http.StatusCreated, &hook)

	// Writers create tasks until the kill cuts them off.
	const writers = 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	acknowledged := map[string]bool{}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				body := fmt.Appendf(nil, `{"title":"kill test w%d n%d","workspaceId":%q}`, w, i, d.workspaceID)
				status, answer, err := api.send(http.MethodPost, "/tasks", "application/json", body)
				if err != nil || status != http.StatusCreated {
					return
				}
				var task struct {
					ID string `json:"id"`
				}
				json.Unmarshal(answer, &task)
				mu.Lock()
				acknowledged[task.ID] = true
				mu.Unlock()
			}
		}()
	}
	select {
	case <-receiver.holding:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery reached the receiver within 30 s")
	}
	for {
		mu.Lock()
		n := len(acknowledged)
		mu.Unlock()
		if n >= 40 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	wg.Wait()
	interrupted := receiver.received()
	close(receiver.release)

	_, api = start()
	tasks, _ := api.allTasks(t)
	made := map[string]bool{}
	for id := range tasks {
		if _, old := before[id]; !old {
			made[id] = true
		}
	}
	for id := range acknowledged {
		if !made[id] {
			t.Errorf("acknowledged task %s is not listed after the restart", id)
		}
	}

	// Every task made has its event, sooner or later.
	deadline := time.Now().Add(2 * time.Minute)
	var events map[string]string // event id -> task id
	for {
		events = map[string]string{}
		for _, c := range receiver.received() {
			var e struct {
				ID   string `json:"id"`
				Type string `json:"type"`
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := json.Unmarshal(c.body, &e); err != nil {
				t.Fatalf("event body %s: %v", c.body, err)
			}
			events[e.ID] = e.Data.ID
		}
		if len(events) >= len(made) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ofTask := map[string]int{}
	for _, taskID := range events {
		ofTask[taskID]++
		if !made[taskID] {
			t.Errorf("an event for task %s, which does not exist: made up", taskID)
		}
	}
	for id := range made {
		if ofTask[id] != 1 {
			t.Errorf("task %s has %d task.created events, want 1", id, ofTask[id])
		}
	}

	// Repeats are of the attempts the kill interrupted only, with their id.
	interruptedIDs := map[string]bool{}
	for _, c := range interrupted {
		interruptedIDs[c.id] = true
	}
	count := map[string]int{}
	for _, c := range receiver.received() {
		count[c.id]++
		ts, err := strconv.ParseInt(c.timestamp, 10, 64)
		if err != nil {
			t.Fatalf("webhook-timestamp %q: %v", c.timestamp, err)
		}
		if err := webhooks.Verify(hook.Secret, c.id, ts, c.body, c.signature, time.Now()); err != nil {
			t.Errorf("event %s: %v", c.id, err)
		}
	}
	repeats := 0
	for id, n := range count {
		if n > 1 && !interruptedIDs[id] {
			t.Errorf("event %s arrived %d times without an interrupted attempt", id, n)
		}
		repeats += n - 1
	}

	// The dispatcher records every delivery as succeeded.
	type deliveryPage struct {
		Data []struct {
			Status string `json:"status"`
		} `json:"data"`
		Pagination struct {
			NextCursor *string `json:"nextCursor"`
		} `json:"pagination"`
	}
	statuses := func() map[string]int {
		got := map[string]int{}
		cursor := ""
		for {
			var page deliveryPage
			api.must(t, http.MethodGet, "/webhooks/"+hook.ID+"/deliveries?limit=100"+cursor, nil, http.StatusOK, &page)
			for _, d := range page.Data {
				got[d.Status]++
			}
			if page.Pagination.NextCursor == nil {
				return got
			}
			cursor = "&cursor=" + *page.Pagination.NextCursor
		}
	}
	var got map[string]int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got = statuses(); got["succeeded"] == len(made) || time.Now().After(deadline) {
			break
		}
	}
	if got["succeeded"] != len(made) || len(got) != 1 {
		t.Errorf("deliveries by status: %v, want %d succeeded", got, len(made))
	}
	t.Logf("%d tasks made (%d acknowledged before the kill), %d events delivered, %d repeats of interrupted attempts",
		len(made), len(acknowledged), len(events), repeats)
}
