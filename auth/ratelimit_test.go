package auth_test

import (
	"maps"
	"strconv"
	"testing"
	"time"

	"acctapi/auth"
)

func TestLimiterRefusals(t *testing.T) {
	l := auth.NewLimiter(newClock().Now)
	if got := l.Refusals(); len(got) != 0 {
		t.Fatalf("Refusals of a new Limiter: got %v, want none", got)
	}
	for _, key := range []string{"key:a", "key:a", "key:a", "key:b", "key:b", "addr:10.0.0.1", "addr:10.0.0.1", "bare", "bare"} {
		l.Allow(key, 1, time.Minute)
	}
	want := map[string]int64{"key": 3, "addr": 1, "other": 1}
	got := l.Refusals()
	if !maps.Equal(got, want) {
		t.Errorf("Refusals: got %v, want %v", got, want)
	}
	// The map is a copy.
	got["key"] = 100
	if again := l.Refusals(); again["key"] != 3 {
		t.Errorf("Refusals after changing its result: got %v, want key 3", again)
	}
}

// TestLimiterForgetsClosedWindows: the windows of callers gone quiet are
// forgotten once they have closed, so the limiter does not grow with every
// address, key and link it has ever seen; an open window keeps its count.
func TestLimiterForgetsClosedWindows(t *testing.T) {
	c := newClock()
	l := auth.NewLimiter(c.Now)
	for i := range 1000 {
		l.Allow("addr:10.0.0."+strconv.Itoa(i), 600, time.Minute)
	}
	l.Allow("key:long", 1, time.Hour)
	if n := l.Windows(); n != 1001 {
		t.Fatalf("windows after 1001 callers: %d, want 1001", n)
	}
	c.Advance(2 * time.Minute)
	l.Allow("addr:10.0.1.1", 600, time.Minute)
	if n := l.Windows(); n != 2 {
		t.Errorf("windows after the minute-long ones closed: %d, want 2 (the hour-long one and the new one)", n)
	}
	if d := l.Allow("key:long", 1, time.Hour); d.Allowed {
		t.Errorf("the hour-long window's second request: allowed, want refused (its count was kept)")
	}
}
