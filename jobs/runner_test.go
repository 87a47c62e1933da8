package jobs_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"acctapi/jobs"
)

// queue is a store's queue in memory: due jobs per lane, and what the
// runner asked of it.
type queue struct {
	mu       sync.Mutex
	due      map[string][]string
	claims   []string // lane:n of each claim
	releases int
	failing  bool // claims and releases fail
	wake     chan struct{}
}

func newQueue() *queue { return &queue{due: map[string][]string{}, wake: make(chan struct{}, 1)} }

func (q *queue) add(lane string, ids ...string) {
	q.mu.Lock()
	q.due[lane] = append(q.due[lane], ids...)
	q.mu.Unlock()
}

func (q *queue) claim(_ context.Context, lane string, n int) ([]string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims = append(q.claims, lane)
	if q.failing {
		return nil, errors.New("the disk is gone")
	}
	n = min(n, len(q.due[lane]))
	got := q.due[lane][:n:n]
	q.due[lane] = q.due[lane][n:]
	return got, nil
}

func (q *queue) release(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releases++
	if q.failing {
		return errors.New("the disk is gone")
	}
	return nil
}

func (q *queue) setFailing(v bool) {
	q.mu.Lock()
	q.failing = v
	q.mu.Unlock()
}

func (q *queue) stats() (claims []string, releases int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.claims), q.releases
}

// start runs r until the test ends, and returns the stop that waits for
// Run to return.
func start(t *testing.T, r *jobs.Runner[string]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: got %v, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return within 5s of its stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

// worked collects the jobs Work ran, in order.
type worked struct {
	mu  sync.Mutex
	ids []string
	ran chan string
}

func newWorked() *worked { return &worked{ran: make(chan string, 100)} }

func (w *worked) work(_ context.Context, id string) error {
	w.mu.Lock()
	w.ids = append(w.ids, id)
	w.mu.Unlock()
	w.ran <- id
	return nil
}

func (w *worked) waitFor(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case id := <-w.ran:
		return id
	case <-time.After(within):
		t.Fatalf("no job ran within %v", within)
		return ""
	}
}

func TestRunDueClaimsLanesInOrder(t *testing.T) {
	q := newQueue()
	q.add("ocr", "scan")
	q.add("fast", "xml", "text")
	w := newWorked()
	r := jobs.New(jobs.Config[string]{Lanes: []jobs.Lane{{Name: "fast"}, {Name: "ocr"}}, Claim: q.claim, Work: w.work})
	n, err := r.RunDue(t.Context())
	if n != 3 || err != nil {
		t.Fatalf("RunDue: got %d, %v, want 3, nil", n, err)
	}
	if want := []string{"xml", "text", "scan"}; !slices.Equal(w.ids, want) {
		t.Errorf("ran %v, want %v (the fast lane's first)", w.ids, want)
	}
}

func TestRunDueStopsAtWorkError(t *testing.T) {
	q := newQueue()
	q.add("", "a", "b")
	r := jobs.New(jobs.Config[string]{Claim: q.claim,
		Work: func(context.Context, string) error { return errors.New("cannot record") }})
	if n, err := r.RunDue(t.Context()); n != 1 || err == nil {
		t.Fatalf("RunDue: got %d, %v, want 1 and the error", n, err)
	}
}

func TestWakeRunsAtOnce(t *testing.T) {
	q := newQueue()
	w := newWorked()
	start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Work: w.work, Wake: q.wake, Poll: time.Hour}))
	q.add("", "a")
	q.wake <- struct{}{}
	if id := w.waitFor(t, 2*time.Second); id != "a" {
		t.Errorf("ran %q, want a", id)
	}
}

func TestPollFindsJobsNoWakeAnnounced(t *testing.T) {
	q := newQueue()
	w := newWorked()
	start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Work: w.work, Poll: 20 * time.Millisecond}))
	q.add("", "retry")
	if id := w.waitFor(t, 2*time.Second); id != "retry" {
		t.Errorf("ran %q, want retry", id)
	}
}

// TestLaneWorkers: a lane runs at most its workers' jobs at once; a job
// that ends lets the next one of its lane start without a poll.
func TestLaneWorkers(t *testing.T) {
	q := newQueue()
	q.add("slow", "s1", "s2", "s3")
	q.add("fast", "f1")
	var mu sync.Mutex
	running, most := 0, 0
	gate := make(chan struct{})
	ran := make(chan string, 10)
	work := func(_ context.Context, id string) error {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		if strings.HasPrefix(id, "s") {
			<-gate
		}
		mu.Lock()
		running--
		mu.Unlock()
		ran <- id
		return nil
	}
	start(t, jobs.New(jobs.Config[string]{Lanes: []jobs.Lane{{Name: "slow", Workers: 2}, {Name: "fast"}},
		Claim: q.claim, Work: work, Poll: time.Hour}))
	// The slow lane's two workers are busy; the fast lane still runs.
	if id := <-ran; id != "f1" {
		t.Fatalf("first job done: %q, want f1", id)
	}
	for range 3 {
		gate <- struct{}{}
		select {
		case <-ran:
		case <-time.After(2 * time.Second):
			t.Fatal("a slow job did not end")
		}
	}
	if most > 3 {
		t.Errorf("%d jobs ran at once, want at most 3 (2 slow, 1 fast)", most)
	}
}

// TestBackoffAfterStoreError: after a failed claim, a wake-up does not ask
// the store again; the next poll does.
func TestBackoffAfterStoreError(t *testing.T) {
	q := newQueue()
	q.setFailing(true)
	w := newWorked()
	poll := 300 * time.Millisecond
	start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Work: w.work, Wake: q.wake, Poll: poll}))
	time.Sleep(poll / 3)
	q.add("", "a")
	q.setFailing(false)
	q.wake <- struct{}{}
	time.Sleep(poll / 3)
	if claims, _ := q.stats(); len(claims) != 1 {
		t.Fatalf("%d claims before the poll, want 1 (the failed one)", len(claims))
	}
	if id := w.waitFor(t, 2*time.Second); id != "a" {
		t.Errorf("ran %q, want a", id)
	}
}

// TestReleaseFirstAndAfterUnrecordedJob: Run releases before its first
// claim, retrying at each poll, and again when a job could not record its
// end (an error or a panic), once no job runs.
func TestReleaseFirstAndAfterUnrecordedJob(t *testing.T) {
	q := newQueue()
	q.setFailing(true)
	ran := make(chan string, 10)
	work := func(_ context.Context, id string) error {
		ran <- id
		switch id {
		case "fails":
			return errors.New("cannot record")
		case "panics":
			panic("a reader broke")
		}
		return nil
	}
	start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Release: q.release, Work: work, Wake: q.wake,
		Poll: 10 * time.Millisecond}))
	time.Sleep(50 * time.Millisecond)
	if claims, releases := q.stats(); len(claims) != 0 || releases < 2 {
		t.Fatalf("while the store fails: %d claims, %d releases, want none and at least 2", len(claims), releases)
	}
	q.setFailing(false)
	q.add("", "fails", "panics", "ok")
	for _, want := range []string{"fails", "panics", "ok"} {
		select {
		case id := <-ran:
			if id != want {
				t.Fatalf("ran %q, want %q", id, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%q did not run", want)
		}
	}
	_, before := q.stats()
	time.Sleep(50 * time.Millisecond)
	if _, releases := q.stats(); releases != before {
		t.Errorf("releases went on after a job that recorded its end: %d, then %d", before, releases)
	}
	if before < 4 {
		t.Errorf("%d releases, want the failed ones, the first, and one after each unrecorded job", before)
	}
}

// TestStopWaitsForTheRunningJob: Run returns only once the job under way
// has returned, having seen its context end.
func TestStopWaitsForTheRunningJob(t *testing.T) {
	q := newQueue()
	q.add("", "long")
	started := make(chan struct{})
	var cutOff bool
	work := func(ctx context.Context, _ string) error {
		close(started)
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		cutOff = true
		return nil
	}
	stop := start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Work: work, Poll: time.Hour}))
	<-started
	stop()
	if !cutOff {
		t.Error("Run returned before its job did")
	}
}

// TestTidy: Tidy runs at the start and at the first poll past TidyEvery by
// the runner's clock.
func TestTidy(t *testing.T) {
	q := newQueue()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tidied := make(chan struct{}, 10)
	start(t, jobs.New(jobs.Config[string]{Claim: q.claim, Work: newWorked().work, Poll: 5 * time.Millisecond,
		Tidy: func(context.Context) { tidied <- struct{}{} }, TidyEvery: time.Hour, Now: clock}))
	<-tidied
	time.Sleep(30 * time.Millisecond)
	if n := len(tidied); n != 0 {
		t.Fatalf("tidied %d more times within the hour, want 0", n)
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	select {
	case <-tidied:
	case <-time.After(2 * time.Second):
		t.Fatal("no tidy after the hour")
	}
}
