package webhooks

import (
	"math/rand/v2"
	"slices"
	"time"
)

// schedule is the delay before each retry, the example schedule of Standard
// Webhooks: after the first attempt fails, retries follow 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h, 14 h, 20 h and 24 h later, 10 attempts over about 75.5 hours
// (3.1 days), after which the delivery has failed for good.
var schedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

// jitter is how far Backoff moves a delay from the schedule, either way, so
// that deliveries that failed together (a receiver's outage) do not all come
// back at the same second.
const jitter = 0.2

// Schedule returns the delays before retries 1, 2, ... without jitter.
func Schedule() []time.Duration { return slices.Clone(schedule) }

// Backoff returns the delay before retry n (n = 1 after the first failed
// attempt): the scheduled delay moved by up to ±20% drawn from rng (the
// package's random source when nil). ok is false when n is past the last
// retry, or below 1: the delivery has failed for good.
func Backoff(n int, rng *rand.Rand) (delay time.Duration, ok bool) {
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	f := rand.Float64
	if rng != nil {
		f = rng.Float64
	}
	scale := 1 - jitter + 2*jitter*f()
	return time.Duration(float64(schedule[n-1]) * scale), true
}
