// Package retry holds what the background senders share: the delays
// between attempts, moved a little at random so that work that failed
// together does not all come back at the same second. The webhook
// dispatcher and the mail sender each keep their own schedule.
package retry

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Jitter is how far Delay moves a delay from its schedule, either way.
const Jitter = 0.2

// Schedule is the delay before each retry: Schedule[0] after the first
// attempt failed, and so on. After the last retry the work has failed for
// good.
type Schedule []time.Duration

// Delays returns a copy of the delays, without jitter.
func (s Schedule) Delays() []time.Duration { return slices.Clone(s) }

// Delay returns the delay before retry n (n = 1 after the first failed
// attempt): the scheduled delay moved by up to ±20% drawn from rng (the
// package's random source when nil). ok is false when n is past the last
// retry, or below 1: the work has failed for good.
func (s Schedule) Delay(n int, rng *rand.Rand) (delay time.Duration, ok bool) {
	if n < 1 || n > len(s) {
		return 0, false
	}
	f := rand.Float64
	if rng != nil {
		f = rng.Float64
	}
	scale := 1 - Jitter + 2*Jitter*f()
	return time.Duration(float64(s[n-1]) * scale), true
}

// Source is a random source that concurrent attempts may share: a
// *rand.Rand is not safe for concurrent use.
type Source struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// NewSource wraps rng; a nil rng draws from the package's random source.
func NewSource(rng *rand.Rand) *Source { return &Source{rng: rng} }

// Delay is s.Delay(n) drawn from the source.
func (src *Source) Delay(s Schedule, n int) (time.Duration, bool) {
	if src == nil || src.rng == nil {
		return s.Delay(n, nil)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	return s.Delay(n, src.rng)
}
