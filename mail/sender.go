package mail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/mail"
	"strings"
	"time"

	"acctapi/db"
	"acctapi/jobs"
	"acctapi/retry"
)

const (
	// DefaultPoll is how often Run looks for retries and reminders that
	// came due when no new mail woke it.
	DefaultPoll = time.Second
	// purgeEvery is how often Run deletes the mails past db.MailRetention.
	purgeEvery = time.Hour
	// recordTimeout bounds the recording of an attempt, which also runs
	// while Run is stopping.
	recordTimeout = 10 * time.Second
)

// schedule is the delay before each retry of a mail the relay did not
// take: 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h, 24 h; nine attempts over
// about two days, after which the mail has failed for good. A relay's
// refusal for good (5xx) ends the mail at once.
var schedule = retry.Schedule{
	time.Minute,
	5 * time.Minute,
	15 * time.Minute,
	time.Hour,
	3 * time.Hour,
	6 * time.Hour,
	12 * time.Hour,
	24 * time.Hour,
}

// Schedule returns the delays before retries 1, 2, ... without jitter.
func Schedule() []time.Duration { return schedule.Delays() }

// Options configures NewSender.
type Options struct {
	Store Store
	Relay *Relay
	// From is the sender's address; each mail shows the firm's name
	// beside it.
	From string
	// Now is the clock; time.Now when nil. It MUST be the clock Store was
	// opened with: reminders and retries are timed by the store.
	Now func() time.Time
	// Logger gets failed attempts and the store's errors, never a link;
	// nothing is logged when nil.
	Logger *slog.Logger
	// Poll is how often Run looks for mails that came due; DefaultPoll when 0.
	Poll time.Duration
	// Rand draws the jitter of retry delays; the package's source when nil.
	Rand *rand.Rand
}

// Sender sends the mail outbox through the relay, one mail at a time, at
// least once: a mail is claimed in the store, sent, then marked sent; a
// crash between the relay's acceptance and the mark sends it again after
// the next start, with the same Message-ID. One Sender serves a store,
// running one Run or RunDue at a time.
type Sender struct {
	store  Store
	relay  *Relay
	from   string
	now    func() time.Time
	log    *slog.Logger
	rng    *retry.Source
	runner *jobs.Runner[*db.OutgoingMail]
}

// Store is what the sender asks of the store: the mail outbox.
type Store interface {
	ReleaseMailClaims(ctx context.Context) (int, error)
	ClaimMails(ctx context.Context, n int) ([]*db.OutgoingMail, error)
	MailsQueued() <-chan struct{}
	MailSent(ctx context.Context, id string, at time.Time) error
	MailFailed(ctx context.Context, id string, at time.Time, answer string, next *time.Time) error
	PurgeMails(ctx context.Context, before time.Time) (int, error)
}

// NewSender returns a Sender; Store, Relay and From are required.
func NewSender(opts Options) *Sender {
	s := &Sender{store: opts.Store, relay: opts.Relay, from: opts.From, now: opts.Now, log: opts.Logger,
		rng: retry.NewSource(opts.Rand)}
	if s.now == nil {
		s.now = time.Now
	}
	s.relay.hello = Domain(s.from)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.runner = jobs.New(jobs.Config[*db.OutgoingMail]{Name: "mail",
		Release: s.releaseClaims, Wake: opts.Store.MailsQueued(),
		Claim: func(ctx context.Context, _ string, n int) ([]*db.OutgoingMail, error) {
			return opts.Store.ClaimMails(ctx, n)
		},
		Work: s.send, Poll: cmp.Or(opts.Poll, DefaultPoll),
		Tidy: s.purge, TidyEvery: purgeEvery, Now: s.now, Logger: s.log})
	return s
}

// Run sends until ctx ends: at once when the store queues mail, and every
// Poll for retries and reminders that came due. It first releases the
// claims a crashed process left, and again after the store failed to
// record an attempt (one sender serves a store, so no claim is anyone
// else's). It purges ended mails when it starts and about hourly after.
// The store's errors are logged and the work is taken up at the next poll.
// When ctx ends, the attempt under way is cut off and not recorded: its
// mail is sent again, with its Message-ID, after the next start. Run
// returns nil.
func (s *Sender) Run(ctx context.Context) error { return s.runner.Run(ctx) }

// releaseClaims makes the mails left claimed due again.
func (s *Sender) releaseClaims(ctx context.Context) error {
	n, err := s.store.ReleaseMailClaims(ctx)
	if n > 0 {
		s.log.Info("mail: sending again the mails left claimed", "count", n)
	}
	return err
}

// RunDue sends every mail due at Now and returns how many attempts it
// made, and the store's error, after which it stops; or ctx.Err(). With a
// clock that does not move, a mail that failed waits for its retry time.
// Tests drive the sender with it and a clock of their own.
func (s *Sender) RunDue(ctx context.Context) (attempts int, err error) { return s.runner.RunDue(ctx) }

// send makes one attempt of a claimed mail and records it. An attempt cut
// off by the end of ctx is left claimed.
func (s *Sender) send(ctx context.Context, m *db.OutgoingMail) error {
	attrs := []any{"mail_id", m.ID, "kind", m.Kind, "attempt", m.Attempt}
	at := s.now()
	msg, err := s.compose(m, at)
	if err == nil {
		err = s.relay.Send(ctx, s.from, m.To, msg)
	}
	if err != nil && ctx.Err() != nil {
		s.log.Info("mail: attempt cut off by shutdown, to be sent again after the next start", attrs...)
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err == nil {
		s.log.Debug("mail: sent", attrs...)
		if rerr := s.store.MailSent(rctx, m.ID, s.now()); rerr != nil {
			return fmt.Errorf("record mail %s as sent: %w", m.ID, rerr)
		}
		return nil
	}
	answer := err.Error()
	var next *time.Time
	if delay, ok := s.rng.Delay(schedule, m.Attempt); ok && !Permanent(err) && !errors.Is(err, errCompose) {
		t := s.now().Add(delay)
		next = &t
		s.log.Info("mail: attempt failed", append(attrs, "error", answer, "next_retry", t.UTC().Format(time.RFC3339))...)
	} else {
		s.log.Warn("mail: attempt failed, no retry left: the mail has failed", append(attrs, "error", answer)...)
	}
	if rerr := s.store.MailFailed(rctx, m.ID, s.now(), answer, next); rerr != nil {
		return fmt.Errorf("record failed mail %s: %w", m.ID, rerr)
	}
	return nil
}

// ParseFrom checks a --mail-from address: a bare address, without a
// display name (each mail shows the firm's name).
func ParseFrom(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", err
	}
	if a.Name != "" || a.Address != s {
		return "", errors.New("give the bare address; each mail shows the firm's name beside it")
	}
	return a.Address, nil
}

// Domain is the part of an address after its last @: the host of the
// Message-IDs and of EHLO.
func Domain(address string) string {
	if i := strings.LastIndexByte(address, '@'); i >= 0 {
		return address[i+1:]
	}
	return address
}

// errCompose marks a mail that cannot be written: sending it again would
// fail the same way.
var errCompose = errors.New("cannot write the mail")

// compose writes the mail with the firm's sender name beside the sender address.
func (s *Sender) compose(m *db.OutgoingMail, at time.Time) ([]byte, error) {
	c, err := render(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCompose, err)
	}
	b, err := message{from: mail.Address{Name: m.FromName, Address: s.from}, to: m.To, subject: c.subject,
		date: at, messageID: m.MessageID, text: c.text, html: c.html}.bytes()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCompose, err)
	}
	return b, nil
}

// purge deletes the mails that ended more than db.MailRetention ago.
func (s *Sender) purge(ctx context.Context) {
	n, err := s.store.PurgeMails(ctx, s.now().Add(-db.MailRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Error("mail: cannot purge old mails", "error", err.Error())
	case n > 0:
		s.log.Info("mail: purged old mails", "count", n, "retention", db.MailRetention.String())
	}
}
