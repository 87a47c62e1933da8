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
	TransactionsToMatch(ctx context.Context, j *db.BankJob, near db.MatchNear) ([]*db.Transaction, error)
	FindFile(ctx context.Context, clientID, id string) (*db.File, error)
	MatchDocuments(ctx context.Context, clientID string) ([]*db.MatchCandidate, error)
	ClientIdentity(ctx context.Context, clientID string) (*db.Identity, error)
	ConfirmedPayments(ctx context.Context, clientID string) ([]*db.ConfirmedPayment, error)
	FilePayments(ctx context.Context, clientID, fileID string) ([]*db.ConfirmedPayment, error)
	RecordMatches(ctx context.Context, clientID string, decisions []db.MatchDecision) error
	RecordPayments(ctx context.Context, clientID string, updates []db.PaymentUpdate) error
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
	return w.match(ctx, j)
}

// match decides the job's transactions against every document of the
// client (a remittance may name any of them), records what changed, and
// then every document's direction and payment state. A file's job that
// finds no transaction to decide records that file's alone, so that
// reading many documents costs no more than one each.
func (w *Worker) match(ctx context.Context, j *db.BankJob) error {
	identity, err := w.store.ClientIdentity(ctx, j.ClientID)
	if db.ErrorCode(err) == db.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	id := matching.Identity{VATIDs: identity.VATIDs, IBANs: identity.IBANs, Names: identity.Names}
	var near db.MatchNear
	var file *db.MatchCandidate
	if j.Target == db.BankJobFile {
		f, err := w.store.FindFile(ctx, j.ClientID, j.TargetID)
		if db.ErrorCode(err) == db.ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		file = candidateOf(f)
		d := documentOf(file)
		near.Text = matching.NumberKey(d.Number)
		if d.Total != 0 {
			near.Amounts = []int64{int64(d.Total), int64(d.Total - d.Discount)}
		}
	}
	txs, err := w.store.TransactionsToMatch(ctx, j, near)
	if err != nil {
		return err
	}
	if len(txs) == 0 && file != nil {
		payments, err := w.store.FilePayments(ctx, j.ClientID, file.FileID)
		if err != nil {
			return err
		}
		// A payment of it and of other documents settles it beside them:
		// that needs them all.
		alone := !slices.ContainsFunc(payments, func(p *db.ConfirmedPayment) bool { return len(p.FileIDs) > 1 })
		if alone {
			return w.recordPayments(ctx, j.ClientID, []*db.MatchCandidate{file}, payments, id)
		}
	}
	candidates, err := w.store.MatchDocuments(ctx, j.ClientID)
	if err != nil {
		return err
	}
	var parted []string
	if len(txs) > 0 {
		if parted, err = w.decide(ctx, j.ClientID, txs, candidates, id); err != nil {
			return err
		}
	}
	confirmed, err := w.store.ConfirmedPayments(ctx, j.ClientID)
	if err != nil {
		return err
	}
	if err := w.recordPayments(ctx, j.ClientID, candidates, confirmed, id); err != nil {
		return err
	}
	if j.Target == db.BankJobFile {
		return nil
	}
	// The instalments of a document may come in several statements: a
	// document paid in part and left to a person is matched again with
	// every transaction naming it, as its own job would, so that the
	// instalments that complete it are matched together.
	for _, fileID := range parted {
		if err := w.match(ctx, &db.BankJob{Target: db.BankJobFile, TargetID: fileID, ClientID: j.ClientID}); err != nil {
			return err
		}
	}
	return nil
}

// decide matches the transactions against the documents, with what the
// payments confirmed outside them settled already, and records what
// changed. It returns the documents a transaction left to a person pays a
// part of.
func (w *Worker) decide(ctx context.Context, clientID string, txs []*db.Transaction, candidates []*db.MatchCandidate, id matching.Identity) ([]string, error) {
	confirmed, err := w.store.ConfirmedPayments(ctx, clientID)
	if err != nil {
		return nil, err
	}
	deciding := map[string]bool{}
	for _, t := range txs {
		deciding[t.ID] = true
	}
	var others []*db.ConfirmedPayment
	for _, p := range confirmed {
		if !deciding[p.TransactionID] {
			others = append(others, p)
		}
	}
	docs := documentsOf(candidates, id)
	paid := matching.Settle(docs, paymentsOf(others))
	for i := range docs {
		docs[i].Paid = paid[docs[i].FileID]
	}
	batch := make([]matching.Transaction, 0, len(txs))
	for _, t := range txs {
		m := transactionOf(t)
		m.OwnAccount = m.CounterpartyIBAN != "" && slices.Contains(id.IBANs, m.CounterpartyIBAN)
		batch = append(batch, m)
	}
	var decisions []db.MatchDecision
	var parted []string
	for i, r := range matching.Decide(batch, docs) {
		for _, c := range r.Candidates {
			if len(r.Matched) == 0 && slices.Contains(c.Reasons, matching.ReasonPartial) && !slices.Contains(parted, c.FileID) {
				parted = append(parted, c.FileID)
			}
		}
		matches := matchesOf(r)
		if !sameMatches(txs[i].Matches, matches) {
			decisions = append(decisions, db.MatchDecision{TransactionID: r.TransactionID, Matches: matches})
		}
	}
	return parted, inBatches(decisions, func(batch []db.MatchDecision) error { return w.store.RecordMatches(ctx, clientID, batch) })
}

// recordPayments records the documents' directions and payment states that
// changed, from the client's identity and the payments confirmed for them.
func (w *Worker) recordPayments(ctx context.Context, clientID string, candidates []*db.MatchCandidate, confirmed []*db.ConfirmedPayment, id matching.Identity) error {
	docs := documentsOf(candidates, id)
	paid := matching.Settle(docs, paymentsOf(confirmed))
	var updates []db.PaymentUpdate
	for i, d := range docs {
		p := db.Payment{Direction: &d.Direction}
		if state, open := matching.State(d, paid[d.FileID]); state != "" {
			units := int64(open)
			p.Status, p.OpenAmount = &state, &units
		}
		if !samePayment(candidates[i].Payment, p) {
			updates = append(updates, db.PaymentUpdate{FileID: d.FileID, Payment: p})
		}
	}
	return inBatches(updates, func(batch []db.PaymentUpdate) error { return w.store.RecordPayments(ctx, clientID, batch) })
}

// inBatches writes items recordBatch at a time: one transaction each,
// short enough not to hold the single writer long.
func inBatches[T any](items []T, write func([]T) error) error {
	for len(items) > 0 {
		n := min(len(items), recordBatch)
		if err := write(items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// recordBatch is how many transactions' matches, or documents' states, one
// write records: a few milliseconds of the writer, as an import's batch.
const recordBatch = 100

func samePayment(a, b db.Payment) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Direction, b.Direction) && eq(a.Status, b.Status) &&
		(a.OpenAmount == nil) == (b.OpenAmount == nil) && (a.OpenAmount == nil || *a.OpenAmount == *b.OpenAmount)
}

// documentsOf are the candidates as the rules read them, each with its
// direction.
func documentsOf(candidates []*db.MatchCandidate, id matching.Identity) []matching.Document {
	docs := make([]matching.Document, len(candidates))
	for i, c := range candidates {
		docs[i] = documentOf(c)
		docs[i].Direction = matching.DirectionOf(docs[i], id)
	}
	return docs
}

// paymentsOf are the confirmed payments as the rules read them.
func paymentsOf(confirmed []*db.ConfirmedPayment) []matching.Payment {
	out := make([]matching.Payment, 0, len(confirmed))
	for _, p := range confirmed {
		booking, _ := time.Parse(time.DateOnly, p.BookingDate)
		out = append(out, matching.Payment{Transaction: matching.Transaction{ID: p.TransactionID, BookingDate: booking,
			Amount: bankstatement.Amount(p.Amount)}, FileIDs: p.FileIDs})
	}
	return out
}

// candidateOf is a file as MatchDocuments returns it.
func candidateOf(f *db.File) *db.MatchCandidate {
	c := &db.MatchCandidate{FileID: f.ID, Kind: f.Kind, Payment: f.Payment}
	if f.DocumentDateSource != nil && *f.DocumentDateSource == db.SourceUser {
		c.DocumentDate = &f.DocumentDate
	}
	if f.Analysis.Fields != nil {
		c.Fields = *f.Analysis.Fields
		if total, err := bankstatement.ParseAmount(value(c.Fields.Value(document.TotalAmount))); err == nil {
			units := int64(total)
			c.TotalAmount = &units
		}
	}
	return c
}

// matchesOf is what the store records of a decision: the documents
// matched, confirmed, or the candidates, suggested.
func matchesOf(r matching.Result) []db.TransactionMatch {
	matches := []db.TransactionMatch{}
	for _, c := range r.Candidates {
		m := db.TransactionMatch{FileID: c.FileID, State: db.MatchSuggested, Score: c.Score,
			Reasons: append([]string{}, c.Reasons...), Source: db.MatchAuto}
		if len(r.Matched) > 0 {
			if !slices.Contains(r.Matched, c.FileID) {
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
	f := &c.Fields
	d := matching.Document{FileID: c.FileID, Kind: value(c.Kind), Number: value(f.Value(document.DocumentNumber)),
		Currency: value(f.Value(document.Currency)), IssuerName: value(f.Value(document.IssuerName)),
		IssuerVATID: value(f.Value(document.IssuerVATID)), IssuerIBAN: value(f.Value(document.IssuerIBAN))}
	if c.TotalAmount != nil {
		d.Total = bankstatement.Amount(*c.TotalAmount)
	}
	if date, err := time.Parse(time.DateOnly, value(f.Value(document.IssueDate))); err == nil {
		d.Date = date
	} else if c.DocumentDate != nil {
		d.Date = *c.DocumentDate
	}
	if due, err := time.Parse(time.DateOnly, value(f.Value(document.DueDate))); err == nil {
		d.DueDate = due
	}
	if t := f.Terms; t != nil {
		d.BuyerName, d.BuyerVATID, d.BuyerIBAN = t.BuyerName, t.BuyerVATID, t.BuyerIBAN
		d.Discount, d.DiscountUntil = discountOf(d.Total, t)
	}
	return d
}

// discountOf is the discount the terms allow off the total, and its last
// day: the amount they state, else their percentage of the total rounded
// to the cent; none without a last day.
func discountOf(total bankstatement.Amount, t *db.PaymentTerms) (bankstatement.Amount, time.Time) {
	until, err := time.Parse(time.DateOnly, t.DiscountDueDate)
	if err != nil || total == 0 {
		return 0, time.Time{}
	}
	if amount, err := bankstatement.ParseAmount(t.DiscountAmount); err == nil && amount > 0 {
		return amount, until
	}
	percent, err := bankstatement.ParseAmount(t.DiscountPercent)
	if err != nil || percent <= 0 || percent >= 100*bankstatement.AmountScale {
		return 0, time.Time{}
	}
	total = max(total, -total)
	// total × percent / 100, in units, rounded half up to the cent.
	cents := (int64(total)/1000*int64(percent)/bankstatement.AmountScale + 50) / 100
	return bankstatement.Amount(cents * 1000), until
}

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
