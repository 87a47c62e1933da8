package webhooks

import (
	"time"

	"acctapi/retry"
)

// schedule is the delay before each retry, the example schedule of Standard
// Webhooks: after the first attempt fails, retries follow 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h, 14 h, 20 h and 24 h later, 10 attempts over about 75.5 hours
// (3.1 days), after which the delivery has failed for good.
var schedule = retry.Schedule{
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

// Schedule returns the delays before retries 1, 2, ... without jitter.
func Schedule() []time.Duration { return schedule.Delays() }
