// Package matching holds the rules that match a client's bank transactions
// to the documents that explain them: which documents are candidates for a
// transaction, how each scores, which transactions are matched without a
// person, which documents the client issued, and how much of each
// document its payments settled. It reads no database; the caller brings
// the transactions and documents.
//
// A document's direction is the side the client is on: Received (a
// supplier's invoice, paid by the client) or Issued (the client's own
// invoice, paid by its customer). A received invoice, receipt or other
// document explains money out and a received credit note or negative total
// money in; an issued document the other way round. Its counterparty is
// its issuer when received and its buyer when issued.
//
// A document other than a bank statement is a candidate for a transaction
// in the currency of both, in the direction it explains, when the booking
// date falls on the document's date or within 120 days after it, or within
// 10 days either side of its due date, and one of these holds:
//
//   - amount: the amount equals what is open of the document (its total,
//     less what confirmed payments settled before; reason "partial" beside
//     "amount" when that is the rest of an instalment plan);
//   - discount: no payment settled any of it yet, the amount equals the
//     total less the discount the document states, and the booking date is
//     on or before the discount's last day, or at most DaysDiscountGrace
//     after it (a transfer ordered on the last day is booked later);
//   - partial: the remittance names the document and the amount is less
//     than what is open;
//   - combined: the remittance names two or more open documents, and the
//     amount equals the sum of what is due of each (open, or the
//     discounted total where the discount holds), within a cent each.
//
// The score (0 to 1) adds weights for what else agrees: ScoreAmount for the
// amount (half for a part payment), ScoreNumber for the document number
// found in the remittance text, ScoreIBAN for the counterparty's IBAN, up
// to ScoreName for the counterparty's name, and ScoreDate for a timely
// payment. A candidate is certain when the amount (or the discount) agrees
// and so does the number or the IBAN; a combined payment's documents are
// certain (their numbers are named); a part payment is certain when it
// names the document and says it is one ("Teilzahlung", "Rate",
// "Anzahlung", "instalment", "acompte"...) or when the batch's payments
// naming the document, with what was settled before, sum to its total.
package matching

import (
	"slices"
	"strings"
	"time"

	"acctapi/bankstatement"
	"acctapi/document"
)

// The weights of the score; they add up to 1.
const (
	ScoreAmount = 0.30
	ScoreNumber = 0.35
	ScoreIBAN   = 0.20
	ScoreName   = 0.10
	ScoreDate   = 0.05
)

// The windows of the date rule, and of a timely payment.
const (
	// DaysAfterDate is how long after a document's date it may be paid.
	DaysAfterDate = 120
	// DaysAroundDue is how far from its due date it may be paid.
	DaysAroundDue = 10
	// DaysTimely is how soon after the document's date a payment counts
	// as timely when the document has no due date.
	DaysTimely = 30
	// DaysDiscountGrace is how long after a discount's last day a payment
	// booked still takes the discount: the bank books a transfer ordered
	// on the last day a working day or two later.
	DaysDiscountGrace = 3
)

// Cent is the tolerance of a sum of payments, per payment: one cent.
const Cent = bankstatement.AmountScale / 100

// MaxCandidates is how many candidates a transaction keeps.
const MaxCandidates = 5

// The reasons a candidate lists.
const (
	ReasonAmount         = "amount"
	ReasonDiscount       = "discount"
	ReasonPartial        = "partial"
	ReasonCombined       = "combined"
	ReasonDocumentNumber = "documentNumber"
	ReasonIBAN           = "iban"
	ReasonName           = "name"
	ReasonDate           = "date"
)

// The directions of a document.
const (
	Received = "received"
	Issued   = "issued"
)

// Transaction is a bank transaction to explain.
type Transaction struct {
	ID               string
	BookingDate      time.Time
	Amount           bankstatement.Amount // negative = money out
	Currency         string
	CounterpartyName string
	CounterpartyIBAN string
	RemittanceInfo   string
	// OwnAccount marks a transfer between two accounts of the same
	// client (the caller knows its accounts): no document explains it, so
	// it has no candidates, whatever a document's misread IBAN says.
	OwnAccount bool
}

// Document is a document that may explain a transaction, with the fields
// read from it.
type Document struct {
	FileID string
	Kind   string // a document kind: document.Invoice, document.CreditNote...
	// Direction is Received or Issued (see DirectionOf); "" is Received.
	Direction   string
	Number      string
	Currency    string
	IssuerName  string
	IssuerVATID string
	IssuerIBAN  string
	// The buyer, as the document names it: the counterparty of a document
	// the client issued.
	BuyerName  string
	BuyerVATID string
	BuyerIBAN  string
	Date       time.Time // zero if none
	DueDate    time.Time // zero if none
	// Total is the total as the document states it: positive for an
	// invoice, and for a credit note as most are written.
	Total bankstatement.Amount
	// Discount is what the document allows off its total when paid by
	// DiscountUntil; zero when it allows none.
	Discount      bankstatement.Amount
	DiscountUntil time.Time
	// Paid is how much of the total the payments confirmed for it settled
	// already (see Settle), leaving out the transactions being decided.
	Paid bankstatement.Amount
}

// Candidate is a document that may explain a transaction.
type Candidate struct {
	FileID  string
	Score   float64
	Reasons []string // of the Reason constants, in their order
	// Certain is set when the amount agrees and so does the document
	// number or the IBAN, for a combined payment's documents, and for a
	// part payment that names the document and says it is one, or that
	// completes its total.
	Certain bool
	// settles is how much of the document's total the payment settles.
	settles bankstatement.Amount
}

// Result is what Decide says of one transaction.
type Result struct {
	TransactionID string
	// Matched holds the FileIDs matched automatically: none, one, or
	// every document of a combined payment.
	Matched    []string
	Candidates []Candidate
}

// Candidates lists the documents that may explain tx, best first, at most
// MaxCandidates.
func Candidates(tx Transaction, docs []Document) []Candidate {
	c := candidates(newTx(tx), newIndex(docs))
	return c[:min(len(c), MaxCandidates)]
}

// claim is one transaction's certain claim to a document.
type claim struct {
	tx       int
	strength int
	partial  bool
	settles  bankstatement.Amount
	booked   time.Time
}

// Decide says, for a batch of transactions, which are matched without a
// person. A transaction is matched when:
//
//   - its candidates include a combined payment's documents: all of them;
//   - else its strongest certain candidate is the only one that strong:
//     the only candidate whose number is in the remittance, or, when no
//     candidate's number is and the remittance names no other document,
//     the only one certain by IBAN; documents paid in full already are
//     never picked and do not count;
//   - and no other transaction of the batch has as strong a claim to the
//     document: a payment naming the document beats one merely from its
//     counterparty's IBAN, and two of equal strength leave both to a
//     person, but for two payments in full naming it, booked on different
//     days: the earlier pays it. Part payments of one document are no
//     rivals of each other while together they settle no more than is
//     open of it.
//
// Every transaction keeps its candidates, at most MaxCandidates, as
// suggestions. Results are in the order of txs. docs should hold every
// document of the client that may be named in a remittance, not only those
// of the transactions' amounts: the rules look for their numbers.
func Decide(txs []Transaction, docs []Document) []Result {
	ix := newIndex(docs)
	all := make([][]Candidate, len(txs))
	views := make([]txView, len(txs))
	for i, tx := range txs {
		views[i] = newTx(tx)
		all[i] = candidates(views[i], ix)
	}
	completeInstalments(all, ix)
	claims := map[string][]claim{}
	for i := range all {
		for _, c := range all[i] {
			if s := strength(c); s > 0 && !ix.settled(c.FileID) {
				claims[c.FileID] = append(claims[c.FileID], claim{tx: i, strength: s, partial: isPartial(c), settles: c.settles, booked: dayOf(txs[i].BookingDate)})
			}
		}
	}
	out := make([]Result, len(txs))
	for i, tx := range txs {
		out[i] = Result{TransactionID: tx.ID, Candidates: all[i][:min(len(all[i]), MaxCandidates)]}
		picked := pick(all[i], views[i], ix)
		for _, c := range picked {
			if !unrivalled(i, dayOf(tx.BookingDate), c, claims[c.FileID], ix.byID[c.FileID]) {
				picked = nil
				break
			}
		}
		for _, c := range picked {
			out[i].Matched = append(out[i].Matched, c.FileID)
		}
	}
	return out
}

// pick chooses among a transaction's candidates what it is matched to
// unless another transaction claims as much: every document of a combined
// payment, or the one strongest certain candidate.
func pick(cands []Candidate, tx txView, ix index) []Candidate {
	var combined []Candidate
	for _, c := range cands {
		if slices.Contains(c.Reasons, ReasonCombined) {
			combined = append(combined, c)
		}
	}
	if len(combined) > 0 {
		return combined
	}
	best, n, at := 0, 0, -1
	for k, c := range cands {
		if ix.settled(c.FileID) {
			// A document paid in full is still shown, but neither
			// matched nor a rival.
			continue
		}
		switch s := strength(c); {
		case s > best:
			best, n, at = s, 1, k
		case s == best && s > 0:
			n++
		}
	}
	// A payment naming some document is for that one: when the named one
	// is not a candidate, the IBAN alone does not pick another.
	if n != 1 || best == 1 && ix.namesDocument(tx.tokens) {
		return nil
	}
	return cands[at : at+1]
}

// unrivalled reports whether transaction i's claim to c's document, booked
// on the given day, stands against the batch's other claims to it. Of two
// payments in full that both name the document, the one booked earlier
// pays it and the later one is paid twice: it is left to a person.
func unrivalled(i int, booked time.Time, c Candidate, claims []claim, d docView) bool {
	s, partial := strength(c), isPartial(c)
	var parts bankstatement.Amount
	for _, other := range claims {
		switch {
		case other.tx == i:
		case partial && other.partial:
			parts += other.settles
		case partial || other.partial:
			return false
		case s == 2 && other.strength == 2 && booked.Before(other.booked):
		case other.strength >= s:
			return false
		}
	}
	if partial {
		return parts+c.settles <= d.open()+Cent*bankstatement.Amount(len(claims))
	}
	return true
}

// completeInstalments makes certain the part payments of one document that,
// with what was settled before, sum to its total: the instalments are all
// there.
func completeInstalments(all [][]Candidate, ix index) {
	type part struct{ tx, k int }
	parts := map[string][]part{}
	for i := range all {
		for k, c := range all[i] {
			if isPartial(c) && slices.Contains(c.Reasons, ReasonDocumentNumber) {
				parts[c.FileID] = append(parts[c.FileID], part{i, k})
			}
		}
	}
	for id, ps := range parts {
		d := ix.byID[id]
		sum := d.Paid
		for _, p := range ps {
			sum += all[p.tx][p.k].settles
		}
		if within(sum, magnitude(d.Total), len(ps)) {
			for _, p := range ps {
				all[p.tx][p.k].Certain = true
			}
		}
	}
}

// within reports whether a sum of n payments equals want, a cent each
// either way.
func within(sum, want bankstatement.Amount, n int) bool {
	return magnitude(sum-want) <= Cent*bankstatement.Amount(n)
}

// strength ranks how certain a candidate is: 2 when its number is in the
// remittance, 1 when only the IBAN makes it certain, 0 when it is not
// certain.
func strength(c Candidate) int {
	switch {
	case !c.Certain:
		return 0
	case slices.Contains(c.Reasons, ReasonDocumentNumber):
		return 2
	}
	return 1
}

// isPartial reports whether the candidate pays part of what is open.
func isPartial(c Candidate) bool {
	return slices.Contains(c.Reasons, ReasonPartial) && !slices.Contains(c.Reasons, ReasonAmount)
}

// txView is a transaction with what the rules compare prepared once.
type txView struct {
	Transaction
	iban   string
	tokens []string
	name   []string
	// instalment is set when the remittance says it pays a part.
	instalment bool
}

func newTx(tx Transaction) txView {
	v := txView{
		Transaction: tx,
		iban:        compactIBAN(tx.CounterpartyIBAN),
		tokens:      tokens(tx.RemittanceInfo),
		name:        nameTokens(tx.CounterpartyName),
	}
	v.instalment = saysInstalment(tx.RemittanceInfo)
	return v
}

// docView is a document with what the rules compare prepared once.
type docView struct {
	Document
	number string // the number's tokens joined
	// The counterparty's IBAN and name: the issuer's, or the buyer's of a
	// document the client issued.
	iban string
	name []string
}

// open is what is left to pay of the document.
func (d docView) open() bankstatement.Amount { return max(magnitude(d.Total)-d.Paid, 0) }

// settled reports whether payments settled the document in full.
func (d docView) settled() bool { return d.Paid > 0 && d.Paid+Cent >= magnitude(d.Total) }

// discounted is what pays the document in full when paid by the discount's
// last day, and whether that holds for a payment booked on b.
func (d docView) discounted(b time.Time) (bankstatement.Amount, bool) {
	if d.Discount <= 0 || d.Discount >= magnitude(d.Total) || d.Paid != 0 || d.DiscountUntil.IsZero() {
		return 0, false
	}
	return magnitude(d.Total) - d.Discount, !dayOf(b).After(dayOf(d.DiscountUntil).AddDate(0, 0, DaysDiscountGrace))
}

// index holds the documents by the amounts a payment of each may have, and
// by their numbers.
type index struct {
	byAmount     map[bankstatement.Amount][]docView // what is open, or the total of a settled one
	byDiscounted map[bankstatement.Amount][]docView
	byNumber     map[string][]docView // tokens joined
	byID         map[string]docView
}

func newIndex(docs []Document) index {
	ix := index{byAmount: map[bankstatement.Amount][]docView{}, byDiscounted: map[bankstatement.Amount][]docView{},
		byNumber: map[string][]docView{}, byID: map[string]docView{}}
	for _, d := range docs {
		// A statement's total is a balance, which pays for nothing.
		if d.Kind == document.BankStatement || d.Total == 0 {
			continue
		}
		v := docView{Document: d, number: strings.Join(tokens(d.Number), "")}
		if d.Direction == Issued {
			v.iban, v.name = compactIBAN(d.BuyerIBAN), nameTokens(d.BuyerName)
		} else {
			v.iban, v.name = compactIBAN(d.IssuerIBAN), nameTokens(d.IssuerName)
		}
		ix.byID[d.FileID] = v
		if len(v.number) >= MinNumberLength {
			ix.byNumber[v.number] = append(ix.byNumber[v.number], v)
		}
		due := v.open()
		if v.settled() {
			due = magnitude(d.Total)
		}
		ix.byAmount[due] = append(ix.byAmount[due], v)
		if amount, ok := v.discounted(d.DiscountUntil); ok {
			ix.byDiscounted[amount] = append(ix.byDiscounted[amount], v)
		}
	}
	return ix
}

func (ix index) settled(id string) bool { return ix.byID[id].settled() }

// named lists the documents whose numbers the remittance tokens hold, as
// numberFound finds them.
func (ix index) named(remittance []string) []docView {
	var out []docView
	for i := range remittance {
		got := ""
		for j := i; j < len(remittance) && j < i+maxNumberTokens; j++ {
			got += remittance[j]
			for _, d := range ix.byNumber[got] {
				if !slices.ContainsFunc(out, func(o docView) bool { return o.FileID == d.FileID }) {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// namesDocument reports whether the remittance tokens hold the number of
// any document.
func (ix index) namesDocument(remittance []string) bool { return len(ix.named(remittance)) > 0 }

// maxNumberTokens bounds the tokens one document number is looked for in;
// real numbers have fewer.
const maxNumberTokens = 8

func magnitude(a bankstatement.Amount) bankstatement.Amount {
	if a < 0 {
		return -a
	}
	return a
}

func candidates(tx txView, ix index) []Candidate {
	if tx.OwnAccount || tx.Amount == 0 {
		return nil
	}
	paid := magnitude(tx.Amount)
	var out []Candidate
	add := func(c Candidate) {
		if !slices.ContainsFunc(out, func(o Candidate) bool { return o.FileID == c.FileID }) {
			out = append(out, c)
		}
	}
	named := ix.named(tx.tokens)
	if c := combined(tx, named); len(c) > 0 {
		// The payment is for the documents it names, together.
		return sortCandidates(c)
	}
	for _, d := range ix.byAmount[paid] {
		if !agrees(tx, d) {
			continue
		}
		c := score(tx, d, ReasonAmount, d.open())
		if d.Paid > 0 && !d.settled() {
			c.Reasons = slices.Insert(c.Reasons, 1, ReasonPartial)
		}
		add(c)
	}
	for _, d := range ix.byDiscounted[paid] {
		if _, ok := d.discounted(tx.BookingDate); ok && agrees(tx, d) {
			add(score(tx, d, ReasonDiscount, magnitude(d.Total)))
		}
	}
	for _, d := range named {
		if paid < d.open() && !d.settled() && agrees(tx, d) {
			c := score(tx, d, ReasonPartial, paid)
			// A part payment is certain when it says so; completeInstalments
			// makes the others certain when they complete the total.
			c.Certain = tx.instalment
			add(c)
		}
	}
	return sortCandidates(out)
}

// combined returns the candidates of a payment of several named documents
// together: none unless the remittance names two or more, each open, in
// the payment's direction, currency and dates, and the payment equals the
// sum of what is due of them, a cent each.
func combined(tx txView, named []docView) []Candidate {
	if len(named) < 2 {
		return nil
	}
	var sum bankstatement.Amount
	ways := 0
	for _, d := range named {
		if d.settled() || !inTerms(tx, d) {
			return nil
		}
		// A document explaining money the other way (a credit note set
		// against invoices) is taken off.
		if moneyIn(d.Document) == (tx.Amount > 0) {
			sum += dueOn(d, tx.BookingDate)
			ways++
		} else {
			sum -= dueOn(d, tx.BookingDate)
		}
	}
	if ways == 0 || !within(sum, magnitude(tx.Amount), len(named)) {
		return nil
	}
	out := make([]Candidate, 0, len(named))
	for _, d := range named {
		c := score(tx, d, ReasonCombined, d.open())
		c.Certain = true
		out = append(out, c)
	}
	return out
}

func sortCandidates(out []Candidate) []Candidate {
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.FileID, b.FileID)
	})
	return out
}

// agrees applies the currency, direction and date rules.
func agrees(tx txView, d docView) bool {
	return moneyIn(d.Document) == (tx.Amount > 0) && inTerms(tx, d)
}

// inTerms applies the currency and date rules.
func inTerms(tx txView, d docView) bool {
	if d.Currency != "" && !strings.EqualFold(d.Currency, tx.Currency) {
		return false
	}
	inWindow, _ := dateAgrees(tx.BookingDate, d.Document)
	return inWindow
}

// moneyIn reports whether the document explains money in: a received
// credit note or refund, or an issued invoice.
func moneyIn(d Document) bool {
	in := d.Kind == document.CreditNote || d.Total < 0
	return in != (d.Direction == Issued)
}

// score rates d as an explanation of tx, whose amount agrees by the given
// reason and settles the given part of the document.
func score(tx txView, d docView, reason string, settles bankstatement.Amount) Candidate {
	_, timely := dateAgrees(tx.BookingDate, d.Document)
	c := Candidate{FileID: d.FileID, Score: ScoreAmount, Reasons: []string{reason}, settles: settles}
	if reason == ReasonPartial {
		c.Score = ScoreAmount / 2
	}
	number := numberFound(tx.tokens, d.number)
	if number {
		c.Score += ScoreNumber
		c.Reasons = append(c.Reasons, ReasonDocumentNumber)
	}
	iban := tx.iban != "" && tx.iban == d.iban
	if iban {
		c.Score += ScoreIBAN
		c.Reasons = append(c.Reasons, ReasonIBAN)
	}
	if sim := similarity(tx.name, d.name); sim >= NameThreshold {
		c.Score += ScoreName * sim
		c.Reasons = append(c.Reasons, ReasonName)
	}
	if timely {
		c.Score += ScoreDate
		c.Reasons = append(c.Reasons, ReasonDate)
	}
	c.Score = float64(int(c.Score*1000+0.5)) / 1000
	c.Certain = reason != ReasonPartial && (number || iban)
	return c
}

// dateAgrees applies the date rule, and says whether the payment is
// timely: within DaysAroundDue of the due date, or, without one, within
// DaysTimely after the document's date.
func dateAgrees(booking time.Time, d Document) (inWindow, timely bool) {
	b := dayOf(booking)
	if !d.DueDate.IsZero() {
		due := dayOf(d.DueDate)
		if !b.Before(due.AddDate(0, 0, -DaysAroundDue)) && !b.After(due.AddDate(0, 0, DaysAroundDue)) {
			return true, true
		}
	}
	if !d.Date.IsZero() {
		date := dayOf(d.Date)
		if !b.Before(date) && !b.After(date.AddDate(0, 0, DaysAfterDate)) {
			return true, d.DueDate.IsZero() && !b.After(date.AddDate(0, 0, DaysTimely))
		}
	}
	return false, false
}

func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

func compactIBAN(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}
