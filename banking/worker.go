// Package banking works the bank jobs in the background: it matches a
// client's bank transactions to the documents that explain them with the
// rules of package matching, never changing what a person decided. A
// statement's new transactions, and a document read or corrected, queue a
// job.
package banking

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"acctapi/bankstatement"
	"acctapi/db"
	"acctapi/document"
	"acctapi/jobs"
	"acctapi/matching"
)

const (
	// DefaultPoll is how often Run looks for jobs no commit woke it for:
	// those a file's reading queues, and retries.
	DefaultPoll = 2 * time.Second
	// retryDelay is the wait before a job that failed runs again.
	retryDelay = 30 * time.Second
	// recordTimeout bounds the recording of a job's end, which also runs
	// while Run is stopping.
	recordTimeout = 10 * time.Second
)

// Options configures New.
type Options struct {
	Store Store
	// Now is the clock; time.Now when nil. It must be the store's.
	Now func() time.Time
	// Logger gets the jobs that failed; nothing is logged when nil.
	Logger *slog.Logger
	// Poll is how often Run looks for jobs; DefaultPoll when 0.
	Poll time.Duration
}

// Worker works the bank jobs. One Worker serves a store.
type Worker struct {
	store  Store
	now    func() time.Time
	log    *slog.Logger
	runner *jobs.Runner[*db.BankJob]
}

// Store is what the worker asks of the store: the bank jobs, and the
// transactions and documents it matches.
type Store interface {
	ReleaseBankJobClaims(ctx context.Context) error
	ClaimBankJobs(ctx context.Context, n int) ([]*db.BankJob, error)
	BankJobsQueued() <-chan struct{}
	FinishBankJob(ctx context.Context, j *db.BankJob) error
	ReleaseBankJob(ctx context.Context, j *db.BankJob, at time.Time, counted bool) error
	TransactionsToMatch(ctx context.Context, j *db.BankJob) ([]*db.Transaction, error)
	MatchDocuments(ctx context.Context, clientID string) ([]*db.MatchCandidate, error)
	AccountIBANs(ctx context.Context, clientID string) ([]string, error)
	RecordMatches(ctx context.Context, clientID string, decisions []db.MatchDecision) error
}

// New returns a Worker; Store is required.
func New(opts Options) *Worker {
	w := &Worker{store: opts.Store, now: opts.Now, log: opts.Logger}
	if w.now == nil {
		w.now = time.Now
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.runner = jobs.New(jobs.Config[*db.BankJob]{Name: "bank jobs",
		Release: opts.Store.ReleaseBankJobClaims, Wake: opts.Store.BankJobsQueued(),
		Claim: func(ctx context.Context, _ string, n int) ([]*db.BankJob, error) {
			return opts.Store.ClaimBankJobs(ctx, n)
		},
		// A recording that failed is logged and leaves the job claimed
		// until the next start.
		Work: func(ctx context.Context, j *db.BankJob) error { w.work(ctx, j); return nil },
		Poll: cmp.Or(opts.Poll, DefaultPoll), Logger: w.log})
	return w
}

// Run works jobs until ctx ends: at once when a commit queues one, and
// every Poll. It first releases the claims a stopped process left. A job
// cut off by the stop is given back uncounted. Run returns nil.
func (w *Worker) Run(ctx context.Context) error { return w.runner.Run(ctx) }

// RunDue works the jobs due now, one at a time, and says how many it
// worked; for tests.
func (w *Worker) RunDue(ctx context.Context) (int, error) { return w.runner.RunDue(ctx) }

// work runs one job and records its end: done, or back in the queue.
func (w *Worker) work(ctx context.Context, j *db.BankJob) {
	err := w.safely(ctx, j)
	record, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	switch {
	case err == nil:
		err = w.store.FinishBankJob(record, j)
	case ctx.Err() != nil:
		err = w.store.ReleaseBankJob(record, j, w.now(), false)
	default:
		w.log.Error("matching", "target", j.Target, "id", j.TargetID, "client_id", j.ClientID, "error", err)
		err = w.store.ReleaseBankJob(record, j, w.now().Add(retryDelay), true)
	}
	if err != nil {
		w.log.Error("record bank job", "target", j.Target, "id", j.TargetID, "error", err)
	}
}

// safely runs the job, turning a panic into an error.
func (w *Worker) safely(ctx context.Context, j *db.BankJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	txs, err := w.store.TransactionsToMatch(ctx, j)
	if err != nil {
		return err
	}
	return w.match(ctx, j.ClientID, txs)
}

// match decides the transactions against every document of the client
// with a total (a remittance may name any of them) and records what
// changed.
func (w *Worker) match(ctx context.Context, clientID string, txs []*db.Transaction) error {
	if len(txs) == 0 {
		return nil
	}
	candidates, err := w.store.MatchDocuments(ctx, clientID)
	if err != nil {
		return err
	}
	ibans, err := w.store.AccountIBANs(ctx, clientID)
	if err != nil {
		return err
	}
	docs := make([]matching.Document, 0, len(candidates))
	taken := map[string]bool{}
	for _, c := range candidates {
		docs = append(docs, documentOf(c))
		taken[c.FileID] = len(c.ConfirmedFor) > 0
	}
	batch := make([]matching.Transaction, 0, len(txs))
	for _, t := range txs {
		m := transactionOf(t)
		m.OwnAccount = m.CounterpartyIBAN != "" && slices.Contains(ibans, m.CounterpartyIBAN)
		batch = append(batch, m)
	}
	var decisions []db.MatchDecision
	for i, r := range matching.Decide(batch, docs, taken) {
		matches := matchesOf(r)
		if !sameMatches(txs[i].Matches, matches) {
			decisions = append(decisions, db.MatchDecision{TransactionID: r.TransactionID, Matches: matches})
		}
	}
	// Written in batches: one transaction each, short enough not to hold
	// the single writer long.
	for len(decisions) > 0 {
		n := min(len(decisions), recordBatch)
		if err := w.store.RecordMatches(ctx, clientID, decisions[:n]); err != nil {
			return err
		}
		decisions = decisions[n:]
	}
	return nil
}

// recordBatch is how many transactions' matches one write records: a
// few milliseconds of the writer, as an import's batch.
const recordBatch = 100

// matchesOf is what the store records of a decision: the document matched,
// confirmed, or the candidates, suggested.
func matchesOf(r matching.Result) []db.TransactionMatch {
	matches := []db.TransactionMatch{}
	for _, c := range r.Candidates {
		m := db.TransactionMatch{FileID: c.FileID, State: db.MatchSuggested, Score: c.Score,
			Reasons: append([]string{}, c.Reasons...), Source: db.MatchAuto}
		if r.Matched != "" {
			if c.FileID != r.Matched {
				continue
			}
			m.State = db.MatchConfirmed
		}
		matches = append(matches, m)
	}
	return matches
}

// sameMatches reports whether recording b would change nothing of a.
func sameMatches(a, b []db.TransactionMatch) bool {
	return slices.EqualFunc(a, b, func(x, y db.TransactionMatch) bool {
		return x.FileID == y.FileID && x.State == y.State && x.Score == y.Score && x.Source == y.Source &&
			slices.Equal(x.Reasons, y.Reasons)
	})
}

func transactionOf(t *db.Transaction) matching.Transaction {
	booking, _ := time.Parse(time.DateOnly, t.BookingDate)
	return matching.Transaction{ID: t.ID, BookingDate: booking, Amount: bankstatement.Amount(t.Amount), Currency: t.Currency,
		CounterpartyName: value(t.CounterpartyName), CounterpartyIBAN: value(t.CounterpartyIBAN), RemittanceInfo: value(t.RemittanceInfo)}
}

// documentOf is a candidate as the rules read it. A document that states
// no date of its own is taken to be of the date a person gave its file;
// the upload time says nothing of it.
func documentOf(c *db.MatchCandidate) matching.Document {
	d := matching.Document{FileID: c.FileID, Kind: value(c.Kind), Number: value(c.Fields.Value(document.DocumentNumber)),
		Currency: value(c.Fields.Value(document.Currency)), IssuerName: value(c.Fields.Value(document.IssuerName)), IssuerIBAN: value(c.Fields.Value(document.IssuerIBAN)),
		Total: bankstatement.Amount(c.TotalAmount)}
	if date, err := time.Parse(time.DateOnly, value(c.Fields.Value(document.IssueDate))); err == nil {
		d.Date = date
	} else if c.DocumentDate != nil {
		d.Date = *c.DocumentDate
	}
	if due, err := time.Parse(time.DateOnly, value(c.Fields.Value(document.DueDate))); err == nil {
		d.DueDate = due
	}
	return d
}

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
