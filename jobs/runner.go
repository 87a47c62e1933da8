// Package jobs runs the jobs of a queue the store keeps, in the
// background: it claims the jobs that are due, runs each with the work
// function it is given, a lane's workers at a time, at once when the store
// wakes it and every poll for the jobs that came due, and stops cleanly.
// The store keeps the queue and each job's schedule; the work function
// records each job's end.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// DefaultPoll is how often Run looks for due jobs no wake-up announced
// when Config.Poll is 0.
const DefaultPoll = time.Second

// Lane is a part of the queue whose jobs are claimed apart, with how many of
// them run at once (1 when 0).
type Lane struct {
	Name    string
	Workers int
}

// Config configures New. Claim and Work are required.
type Config[J any] struct {
	// Name names the queue in the runner's log lines.
	Name string
	// Lanes are claimed from in their order; one lane named "" with one
	// worker when empty.
	Lanes []Lane
	// Release gives back the claims a stopped process left. Run calls it
	// before its first claim, and again, once no job of its own is under
	// way, after a job whose end could not be recorded (Work's error): the
	// store then holds the claims of no running job. nil when the queue
	// keeps no claims.
	Release func(ctx context.Context) error
	// Claim claims up to n due jobs of the lane.
	Claim func(ctx context.Context, lane string, n int) ([]J, error)
	// Work runs one claimed job and records its end, even when ctx ends
	// meanwhile. Its error says that the end could not be recorded: the
	// job stays claimed until Release.
	Work func(ctx context.Context, job J) error
	// Wake receives when the store queues a job; nil when nothing does.
	Wake <-chan struct{}
	// Poll is how often Run looks for jobs that came due; DefaultPoll when 0.
	Poll time.Duration
	// Tidy, when set, runs when Run starts and at the first poll each
	// TidyEvery after (a purge of ended jobs).
	Tidy      func(ctx context.Context)
	TidyEvery time.Duration
	// Now is the clock TidyEvery is measured with; time.Now when nil.
	Now func() time.Time
	// Logger gets the store's errors and the jobs that panicked; nothing
	// is logged when nil.
	Logger *slog.Logger
}

// Runner runs the jobs of one queue. One Runner serves a queue, running one
// Run or RunDue at a time.
type Runner[J any] struct {
	c Config[J]
}

// New returns a Runner.
func New[J any](c Config[J]) *Runner[J] {
	if len(c.Lanes) == 0 {
		c.Lanes = []Lane{{}}
	}
	for i := range c.Lanes {
		c.Lanes[i].Workers = max(c.Lanes[i].Workers, 1)
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner[J]{c: c}
}

// Run runs jobs until ctx ends: at once when Wake receives or a worker
// frees, and every Poll for the jobs that came due. After the store failed
// (a claim or a release), it waits for the next poll before it asks again.
// When ctx ends it claims no more and waits for the jobs under way, which
// see ctx end. Run returns nil.
func (r *Runner[J]) Run(ctx context.Context) error {
	poll := time.NewTicker(r.c.Poll)
	defer poll.Stop()
	f := &flight{busy: make([]int, len(r.c.Lanes)), done: make(chan done, r.workers())}
	defer f.drain()
	tidied := r.tidy(ctx)
	f.release = r.c.Release != nil
	backoff := false
	for {
		if !backoff && ctx.Err() == nil {
			backoff = !r.turn(ctx, f)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.c.Wake:
		case d := <-f.done:
			f.finish(d)
		case <-poll.C:
			backoff = false
			if r.c.Tidy != nil && r.c.Now().Sub(tidied) >= r.c.TidyEvery {
				tidied = r.tidy(ctx)
			}
		}
	}
}

// flight is the jobs under way of one Run; only Run's goroutine uses it.
type flight struct {
	busy []int // per lane
	done chan done
	// release is a Release owed before the next claim.
	release bool
}

// done is what a job's goroutine reports when Work has returned.
type done struct {
	lane int
	err  error
}

func (f *flight) finish(d done) {
	f.busy[d.lane]--
	f.release = f.release || d.err != nil
}

func (f *flight) running() int {
	n := 0
	for _, b := range f.busy {
		n += b
	}
	return n
}

// drain waits for the jobs under way.
func (f *flight) drain() {
	for f.running() > 0 {
		f.finish(<-f.done)
	}
}

// turn releases what is owed, then claims for each lane's free workers and
// starts their jobs. It reports whether the store answered.
func (r *Runner[J]) turn(ctx context.Context, f *flight) bool {
	if f.release {
		if f.running() > 0 {
			return true
		}
		if err := r.c.Release(ctx); err != nil {
			r.logStore(ctx, "release the claims left", "", err)
			return false
		}
		f.release = false
	}
	ok := true
	for i, l := range r.c.Lanes {
		free := l.Workers - f.busy[i]
		if free <= 0 {
			continue
		}
		jobs, err := r.c.Claim(ctx, l.Name, free)
		if err != nil {
			r.logStore(ctx, "claim", l.Name, err)
			ok = false
			continue
		}
		for _, job := range jobs[:min(len(jobs), free)] {
			f.busy[i]++
			go func() { f.done <- done{lane: i, err: r.work(ctx, job)} }()
		}
	}
	return ok
}

// RunDue runs the jobs due now one at a time, claiming from the lanes in
// their order, until none is due, and says how many it ran. It stops at
// the store's first error, or Work's, and returns it; or ctx.Err(). It is
// for a command that works the queue once, and for tests.
func (r *Runner[J]) RunDue(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		job, ok, err := r.claimOne(ctx)
		if err != nil || !ok {
			return n, err
		}
		n++
		if err := r.work(ctx, job); err != nil {
			return n, err
		}
	}
	return n, ctx.Err()
}

// claimOne claims one due job, from the first lane that has one.
func (r *Runner[J]) claimOne(ctx context.Context) (job J, ok bool, err error) {
	for _, l := range r.c.Lanes {
		jobs, err := r.c.Claim(ctx, l.Name, 1)
		if err != nil {
			return job, false, err
		}
		if len(jobs) > 0 {
			return jobs[0], true, nil
		}
	}
	return job, false, nil
}

// work runs Work, turning a panic into an error: the job's end is not
// recorded, and its claim is released once nothing runs.
func (r *Runner[J]) work(ctx context.Context, job J) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the job panicked: %v\n%s", v, debug.Stack())
		}
		if err != nil {
			r.c.Logger.Error(r.c.Name+": a job's end could not be recorded; its claim is released", "error", err.Error())
		}
	}()
	return r.c.Work(ctx, job)
}

func (r *Runner[J]) tidy(ctx context.Context) time.Time {
	if r.c.Tidy != nil {
		r.c.Tidy(ctx)
	}
	return r.c.Now()
}

func (r *Runner[J]) workers() int {
	n := 0
	for _, l := range r.c.Lanes {
		n += l.Workers
	}
	return n
}

// logStore logs a store's error, unless it is the stop's.
func (r *Runner[J]) logStore(ctx context.Context, what, lane string, err error) {
	if ctx.Err() != nil {
		return
	}
	attrs := []any{"error", err.Error()}
	if lane != "" {
		attrs = append(attrs, "lane", lane)
	}
	r.c.Logger.Error(r.c.Name+": "+what, attrs...)
}
