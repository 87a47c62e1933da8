package retry

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	s := Schedule{time.Second, time.Minute, time.Hour}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= len(s); n++ {
		lo, hi := s[n-1]*8/10, s[n-1]*12/10
		var below, above bool
		for range 200 {
			d, ok := s.Delay(n, rng)
			if !ok || d < lo || d > hi {
				t.Fatalf("Delay(%d): got %v, %v, want %v to %v, true", n, d, ok, lo, hi)
			}
			below = below || d < s[n-1]
			above = above || d > s[n-1]
		}
		if !below || !above {
			t.Errorf("Delay(%d): 200 draws all on one side of %v, want jitter both ways", n, s[n-1])
		}
	}
	for _, n := range []int{0, -1, len(s) + 1} {
		if d, ok := s.Delay(n, rng); ok {
			t.Errorf("Delay(%d): got %v, true, want false", n, d)
		}
	}
	d := s.Delays()
	d[0] = 0
	if s[0] == 0 {
		t.Error("changing the copy changed the schedule")
	}
}

// TestSourceShared draws from one Source on many goroutines; -race reports
// an unguarded *rand.Rand.
func TestSourceShared(t *testing.T) {
	s := Schedule{time.Second}
	src := NewSource(rand.New(rand.NewPCG(3, 4)))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if d, ok := src.Delay(s, 1); !ok || d < 800*time.Millisecond || d > 1200*time.Millisecond {
					t.Errorf("got %v, %v", d, ok)
				}
			}
		})
	}
	wg.Wait()
	if d, ok := (*Source)(nil).Delay(s, 1); !ok || d <= 0 {
		t.Errorf("nil source: got %v, %v", d, ok)
	}
}
