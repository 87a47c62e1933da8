package auth

import (
	"strings"
	"sync"
	"time"
)

// Limiter counts requests per key in fixed windows: a key's window opens with
// its first request and lets max requests through until it closes. State is
// in memory: one server process, and counts start afresh on restart.
type Limiter struct {
	now func() time.Time

	mu      sync.Mutex
	windows map[string]*window
	// refused counts the refusals per scope (see Refusals).
	refused map[string]int64
	// swept is when the windows that had closed were last forgotten.
	swept time.Time
}

type window struct {
	start, end time.Time
	count      int
}

// sweepEvery spaces out forgetting closed windows: without it the map
// would keep a window for every address, key and link ever seen.
const sweepEvery = time.Minute

// Decision is the outcome of one Allow call, with the figures the
// RateLimit-* headers report.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is how long until the window closes and the count starts again.
	Reset time.Duration
}

// NewLimiter returns a Limiter on the clock now (time.Now when nil).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, windows: map[string]*window{}, refused: map[string]int64{}, swept: now()}
}

// Allow counts one request of key against max per period and says whether it
// may go on. Exactly max requests pass in a window, however many race.
func (l *Limiter) Allow(key string, max int, period time.Duration) Decision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	w := l.windows[key]
	if w == nil || now.Sub(w.start) >= period {
		w = &window{start: now, end: now.Add(period)}
		l.windows[key] = w
	}
	d := Decision{Limit: max, Reset: period - now.Sub(w.start)}
	if w.count < max {
		w.count++
		d.Allowed = true
	} else {
		l.refused[scope(key)]++
	}
	d.Remaining = max - w.count
	return d
}

// sweep forgets the windows that have closed, at most once per sweepEvery:
// a closed window counts nothing that a new one would not. The caller holds
// the lock.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < sweepEvery {
		return
	}
	l.swept = now
	for key, w := range l.windows {
		if !now.Before(w.end) {
			delete(l.windows, key)
		}
	}
}

// Spent reports whether key has used up its window of max requests per
// period, with that window's figures. Unlike Allow it counts nothing, so a
// caller can refuse a request before doing any work for it.
func (l *Limiter) Spent(key string, max int, period time.Duration) (Decision, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil || now.Sub(w.start) >= period || w.count < max {
		return Decision{}, false
	}
	return Decision{Limit: max, Reset: period - now.Sub(w.start)}, true
}

// Refusals returns how many requests Allow refused since the Limiter was
// made, per scope: the part of the key before its first colon ("key" in
// "key:<id>"), or "other" for a key without one, so that the scopes are
// the callers' few prefixes and never a key itself.
func (l *Limiter) Refusals() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	counts := make(map[string]int64, len(l.refused))
	for s, n := range l.refused {
		counts[s] = n
	}
	return counts
}

// scope is the prefix of a limiter key that its refusals are counted under.
func scope(key string) string {
	s, _, ok := strings.Cut(key, ":")
	if !ok {
		return "other"
	}
	return s
}
