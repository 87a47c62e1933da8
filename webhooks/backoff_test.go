package webhooks

import (
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
