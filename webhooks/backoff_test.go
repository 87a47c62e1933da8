package webhooks

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	s := Schedule()
	var total time.Duration
	for i, d := range s {
		if i > 0 && d < s[i-1] {
			t.Errorf("retry %d: %v is shorter than retry %d's %v", i+1, d, i, s[i-1])
		}
		total += d
	}
	if day := 24 * time.Hour; total < 3*day-6*time.Hour || total > 3*day+6*time.Hour {
		t.Errorf("total %v, want about 3 days", total)
	}
	s[0] = 0
	if Schedule()[0] == 0 {
		t.Error("changing the returned slice changed the schedule")
	}
}

func TestBackoff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := Schedule()
	for n := 1; n <= len(s); n++ {
		lo, hi := s[n-1]*8/10, s[n-1]*12/10
		var below, above bool
		for range 200 {
			d, ok := Backoff(n, rng)
			if !ok || d < lo || d > hi {
				t.Fatalf("Backoff(%d): got %v, %v, want %v to %v, true", n, d, ok, lo, hi)
			}
			below = below || d < s[n-1]
			above = above || d > s[n-1]
		}
		if !below || !above {
			t.Errorf("Backoff(%d): 200 draws all on one side of %v, want jitter both ways", n, s[n-1])
		}
	}
	for _, n := range []int{0, -1, len(s) + 1, len(s) + 100} {
		if d, ok := Backoff(n, rng); ok {
			t.Errorf("Backoff(%d): got %v, true, want false", n, d)
		}
	}
	a, _ := Backoff(3, rand.New(rand.NewPCG(7, 7)))
	b, _ := Backoff(3, rand.New(rand.NewPCG(7, 7)))
	if a != b {
		t.Errorf("same seed: got %v and %v, want equal delays", a, b)
	}
	if d, ok := Backoff(1, nil); !ok || d < s[0]*8/10 || d > s[0]*12/10 {
		t.Errorf("Backoff(1, nil): got %v, %v", d, ok)
	}
}
