package handlers

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/auth"
	"acctapi/db"
)

// observed is a request as a RequestObserver was told of it.
type observed struct {
	method, route string
	status        int
}

// recordingObserver keeps what it is told.
type recordingObserver struct {
	mu       sync.Mutex
	inFlight int
	done     []observed
	// untimed counts the requests told with no duration.
	untimed int
}

func (o *recordingObserver) RequestStarted() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inFlight++
}

func (o *recordingObserver) RequestDone(method, route string, status int, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inFlight--
	if took <= 0 {
		o.untimed++
	}
	o.done = append(o.done, observed{method, route, status})
}

func TestRequestObserver(t *testing.T) {
	obs := &recordingObserver{}
	api := newTestAPI(t, func(c *Config) { c.Observer = obs })
	limited := api.mustMintKey(api.firm.ID, auth.KeySpec{RateLimitMax: 1})
	created, err := api.store.CreateTask(context.Background(), api.client.ID, db.TaskCreate{WorkspaceID: api.mustCreateWorkspace(api.client.ID, "Books"), Title: "Receipts"})
	if err != nil {
		t.Fatal(err)
	}
	task := created.ID
	obs.mu.Lock()
	obs.done = nil
	obs.mu.Unlock()

	api.do(request{method: "GET", path: "/v1/health"})
	api.do(request{method: "GET", path: "/v1/me", key: limited})
	api.do(request{method: "GET", path: "/v1/me", key: limited})
	api.do(request{method: "PATCH", path: "/v1/tasks/" + task, key: api.accountantKey, clientID: api.client.ID, body: map[string]any{"title": "Bank statements"}})
	api.do(request{method: "PATCH", path: "/v1/tasks/not-an-id", key: api.accountantKey, clientID: api.client.ID, body: map[string]any{"title": "x"}})
	api.do(request{method: "GET", path: "/v1/tasks/" + task + "/nothing"})
	api.do(request{method: "DELETE", path: "/v1/me", key: api.accountantKey})
	api.do(request{method: "BREW", path: "/v1/me"})

	want := []observed{
		{"GET", "/v1/health", 200},
		{"GET", "/v1/me", 200},
		{"GET", "/v1/me", 429},
		{"PATCH", "/v1/tasks/:id", 200},
		{"PATCH", "/v1/tasks/:id", 422},
		// No route: neither the id nor the path reaches the observer.
		{"GET", "unmatched", 404},
		{"DELETE", "unmatched", 405},
		{"BREW", "unmatched", 405},
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if !slices.Equal(obs.done, want) {
		t.Errorf("observed:\n got %v\nwant %v", obs.done, want)
	}
	if obs.untimed != 0 {
		t.Errorf("%d requests were told with no duration, want none", obs.untimed)
	}
	if obs.inFlight != 0 {
		t.Errorf("in flight after every answer: got %d, want 0", obs.inFlight)
	}
	for _, o := range obs.done {
		if strings.Contains(o.route, task) {
			t.Errorf("observed %v: the route names a record", o)
		}
	}
}

func TestHSTS(t *testing.T) {
	for _, https := range []bool{false, true} {
		api := newTestAPI(t, func(c *Config) { c.HTTPS = https })
		for _, res := range []*response{
			api.do(request{method: "GET", path: "/v1/health"}),
			api.do(request{method: "GET", path: "/v1/me", key: api.accountantKey}),
			api.do(request{method: "GET", path: "/v1/me"}),
			api.do(request{method: "GET", path: "/v1/nothing-here"}),
			sendOptions(t, api.server.URL+"/v1/tasks", nil),
		} {
			got := res.header.Values("Strict-Transport-Security")
			switch {
			case https && (len(got) != 1 || got[0] != "max-age=31536000"):
				t.Errorf("HTTPS, status %d: Strict-Transport-Security is %q, want exactly max-age=31536000", res.status, got)
			case !https && len(got) != 0:
				t.Errorf("plain HTTP, status %d: Strict-Transport-Security is %q, want none", res.status, got)
			}
		}
	}
}
