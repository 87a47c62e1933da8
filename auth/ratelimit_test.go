package auth_test

import (
	"maps"
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
