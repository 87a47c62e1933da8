package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"acctapi/db"
	"acctapi/retry"
)

const (
	// DefaultWorkers is how many subscriptions a Dispatcher delivers to at
	// the same time.
	DefaultWorkers = 8
	// DefaultPoll is how often Run looks for retries that came due when no
	// new event woke it.
	DefaultPoll = time.Second

	// purgeEvery is how often Run deletes the deliveries past
	// db.DeliveryRetention.
	purgeEvery = time.Hour
	// recordTimeout bounds the recording of an attempt, which also runs
	// while Run is stopping.
	recordTimeout = 10 * time.Second
)

// DispatcherOptions configures NewDispatcher.
type DispatcherOptions struct {
	Store  Store
	Client *Client
	// Now is the clock; time.Now when nil. It MUST be the clock Store was
	// opened with (db.Options.Now): the dispatcher sets retry times from it
	// and Store.DueDeliveries compares them with the store's clock.
	Now func() time.Time
	// Logger gets failed attempts and the store's errors; nothing is
	// logged when nil.
	Logger *slog.Logger
	// Workers is how many subscriptions are delivered to at the same time;
	// DefaultWorkers when 0.
	Workers int
	// Poll is how often Run looks for retries that came due; DefaultPoll
	// when 0.
	Poll time.Duration
	// Rand draws the jitter of retry delays (see retry.Schedule.Delay);
	// the package's random source when nil.
	Rand *rand.Rand
}

// Dispatcher delivers the outbox: each pending delivery whose time has
// come is sent to its subscription's URL through the Client, and the
// attempt is recorded in the store with its retry, if any. Different
// subscriptions are delivered to in parallel, up to Workers at a time; the
// deliveries of one subscription go one at a time, in the order their
// events were made (the store hands out only the oldest pending delivery of
// each subscription), so a slow receiver holds back its own deliveries
// only. One Dispatcher serves a store, running one Run or RunDue at a
// time: two loops would send the same delivery twice.
type Dispatcher struct {
	store   Store
	client  *Client
	now     func() time.Time
	log     *slog.Logger
	workers int
	poll    time.Duration

	rng *retry.Source
}

// Store is what the dispatcher asks of the store: the outbox.
type Store interface {
	DueDeliveries(ctx context.Context, limit int) ([]db.DueDelivery, error)
	EventsWritten() <-chan struct{}
	RecordAttempt(ctx context.Context, deliveryID string, r db.AttemptResult) error
	PurgeDeliveries(ctx context.Context, before time.Time) (int, error)
}

// NewDispatcher returns a Dispatcher; opts.Store and opts.Client are
// required.
func NewDispatcher(opts DispatcherOptions) *Dispatcher {
	d := &Dispatcher{store: opts.Store, client: opts.Client, now: opts.Now, log: opts.Logger,
		workers: opts.Workers, poll: opts.Poll, rng: retry.NewSource(opts.Rand)}
	if d.now == nil {
		d.now = time.Now
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.workers <= 0 {
		d.workers = DefaultWorkers
	}
	if d.poll <= 0 {
		d.poll = DefaultPoll
	}
	return d
}

// Run delivers until ctx ends: at once when the store signals new events
// (or a delivery retried by hand), and every Poll for the retries that came
// due. It deletes the deliveries past db.DeliveryRetention when it starts
// and about hourly after. The store's errors are logged, and the work they
// stopped is taken up again at the next poll.
//
// When ctx ends, Run starts no more attempts and cancels those under way.
// An attempt cut off that way is not recorded: its delivery stays pending
// and is sent again, with the same webhook-id, after the next start
// (delivery is at least once). Attempts that ended are recorded. Run
// returns nil once its attempts have returned.
func (d *Dispatcher) Run(ctx context.Context) error {
	f := d.newFlights(ctx)
	poll := time.NewTicker(d.poll)
	defer poll.Stop()
	// held are the subscriptions whose last attempt could not be recorded:
	// they wait for the next poll, so that a failing store is not asked
	// again after every attempt.
	held := map[string]bool{}
	d.purge(ctx)
	purged := d.now()
	for {
		if ctx.Err() != nil {
			for len(f.busy) > 0 {
				f.wait()
			}
			return nil
		}
		if err := f.start(held); err != nil && ctx.Err() == nil {
			d.log.Error("webhooks: cannot read the due deliveries", "error", err.Error())
		}
		select {
		case <-ctx.Done():
		case o := <-f.done:
			f.finish(o)
			if o.err != nil {
				held[o.webhookID] = true
			}
		case <-d.store.EventsWritten():
		case <-poll.C:
			clear(held)
			if now := d.now(); now.Sub(purged) >= purgeEvery {
				d.purge(ctx)
				purged = now
			}
		}
	}
}

// RunDue delivers every delivery due at Now, and those that come due
// meanwhile (after a success, the next event of the subscription), and
// returns when none is due and no attempt is under way: with a clock that
// does not move, a delivery that failed waits for its retry time. It
// returns how many attempts it made, not counting those cut off by the end
// of ctx (which are not recorded, as in Run), and the store's errors, after
// which it starts no more attempts; or ctx.Err(). Tests drive the
// dispatcher with it and a clock of their own.
func (d *Dispatcher) RunDue(ctx context.Context) (attempts int, err error) {
	f := d.newFlights(ctx)
	var errs []error
	for {
		if len(errs) == 0 && ctx.Err() == nil {
			if err := f.start(nil); err != nil {
				errs = append(errs, err)
			}
		}
		if len(f.busy) == 0 {
			break
		}
		o := f.wait()
		if o.sent {
			attempts++
		}
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	if ctx.Err() != nil {
		return attempts, ctx.Err()
	}
	return attempts, errors.Join(errs...)
}

// flights are the attempts under way of one Run or RunDue: at most one per
// subscription, at most workers in all. Only the goroutine of Run or RunDue
// uses them.
type flights struct {
	d    *Dispatcher
	ctx  context.Context
	busy map[string]bool // subscriptions with an attempt under way
	done chan outcome
}

// outcome is what an attempt reports when it has returned.
type outcome struct {
	webhookID string
	// sent is false for an attempt cut off by the end of the context: it
	// was not recorded.
	sent bool
	// err is the store's error recording the attempt.
	err error
}

func (d *Dispatcher) newFlights(ctx context.Context) *flights {
	return &flights{d: d, ctx: ctx, busy: map[string]bool{}, done: make(chan outcome, d.workers)}
}

// start begins an attempt of each due delivery whose subscription has none
// under way and is not in skip, while workers are free. It does not wait
// for them: a slow receiver keeps one worker, not the others.
func (f *flights) start(skip map[string]bool) error {
	free := f.d.workers - len(f.busy)
	if free <= 0 {
		return nil
	}
	// The store returns at most one delivery per subscription: asking for
	// as many more as there are busy and skipped subscriptions still finds
	// free work when there is.
	due, err := f.d.store.DueDeliveries(f.ctx, free+len(f.busy)+len(skip))
	if err != nil {
		return err
	}
	for _, dd := range due {
		if free == 0 {
			break
		}
		if f.busy[dd.WebhookID] || skip[dd.WebhookID] {
			continue
		}
		f.busy[dd.WebhookID] = true
		free--
		go func() { f.done <- f.d.deliver(f.ctx, dd) }()
	}
	return nil
}

// wait waits for an attempt to return.
func (f *flights) wait() outcome {
	o := <-f.done
	f.finish(o)
	return o
}

// finish frees the subscription of an attempt that returned; its next
// delivery may start.
func (f *flights) finish(o outcome) { delete(f.busy, o.webhookID) }

// deliver makes one attempt of the delivery and records it.
func (d *Dispatcher) deliver(ctx context.Context, dd db.DueDelivery) outcome {
	o := outcome{webhookID: dd.WebhookID}
	n := dd.Attempts + 1
	at := d.now()
	a := d.client.Send(ctx, dd.URL, dd.EventID, at.Unix(), dd.Payload, dd.Secrets...)
	if a.Err == errCanceled && ctx.Err() != nil {
		// Stopping. The receiver may have the event or not: the delivery
		// stays pending and goes out again after the next start.
		d.log.Info("webhooks: attempt cut off by shutdown, to be sent again after the next start",
			"webhook_id", dd.WebhookID, "delivery_id", dd.ID, "event_id", dd.EventID, "attempt", n)
		return o
	}
	o.sent = true
	r := db.AttemptResult{At: at, Duration: a.Duration, StatusCode: a.StatusCode, Error: a.Err}
	if a.Err != "" {
		if delay, ok := d.backoff(n); ok {
			retry := d.now().Add(delay)
			r.Retry = &retry
		}
	}
	// An attempt that ended is recorded even when ctx has just ended: the
	// receiver has answered.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := d.store.RecordAttempt(rctx, dd.ID, r)
	switch {
	case db.ErrorCode(err) == db.ENOTFOUND:
		// The subscription was deleted meanwhile, or the delivery ended:
		// there is nothing left to record the attempt on.
		err = nil
	case err != nil:
		o.err = fmt.Errorf("record attempt %d of delivery %s: %w", n, dd.ID, err)
		d.log.Error("webhooks: cannot record an attempt; the delivery will be sent again",
			"webhook_id", dd.WebhookID, "delivery_id", dd.ID, "event_id", dd.EventID, "attempt", n, "error", err.Error())
	}
	d.logAttempt(dd, n, a, r.Retry)
	return o
}

// logAttempt logs a failed attempt, with what an operator needs to follow
// it up and never the secrets, the payload or the URL (which may hold a
// receiver's token).
func (d *Dispatcher) logAttempt(dd db.DueDelivery, n int, a Attempt, retry *time.Time) {
	attrs := []any{"webhook_id", dd.WebhookID, "delivery_id", dd.ID, "event_id", dd.EventID, "attempt", n,
		"status", a.StatusCode, "duration_ms", a.Duration.Milliseconds()}
	switch {
	case a.Err == "":
		d.log.Debug("webhooks: delivered", attrs...)
	case retry != nil:
		d.log.Info("webhooks: attempt failed", append(attrs, "error", a.Err, "next_retry", retry.UTC().Format(time.RFC3339))...)
	default:
		d.log.Warn("webhooks: attempt failed, no retry left: the delivery has failed",
			append(attrs, "error", a.Err, "next_retry", nil)...)
	}
}

// backoff is the delay before retry n (n = 1 after the first failed
// attempt), jittered from the dispatcher's random source; ok is false past
// the last retry: the delivery has failed for good.
func (d *Dispatcher) backoff(n int) (time.Duration, bool) { return d.rng.Delay(schedule, n) }

// purge deletes the deliveries that ended more than db.DeliveryRetention
// ago.
func (d *Dispatcher) purge(ctx context.Context) {
	n, err := d.store.PurgeDeliveries(ctx, d.now().Add(-db.DeliveryRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		d.log.Error("webhooks: cannot purge old deliveries", "error", err.Error())
	case n > 0:
		d.log.Info("webhooks: purged old deliveries", "count", n, "retention", db.DeliveryRetention.String())
	}
}
