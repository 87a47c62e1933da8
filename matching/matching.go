// Package matching holds the rules that match a client's bank transactions
// to the documents that explain them: which documents are candidates for a
// transaction, how each scores, and which transactions are matched without
// a person. It reads no database; the caller brings the transactions and
// documents.
//
// A document is a candidate for a transaction when both hold:
//
//   - amount: its total equals the transaction's amount in the same
//     currency, in the direction the document explains: an invoice, a
//     receipt or any other document explains money out; a credit note, or a
//     document stating a negative total (a refund), explains money in;
//   - date: the booking date falls on the document's date or within 120
//     days after it, or within 10 days either side of its due date.
//
// The score (0 to 1) adds weights for what else agrees: ScoreAmount for the
// amount (always), ScoreNumber for the document number found in the
// remittance text, ScoreIBAN for the counterparty's IBAN equal to the
// issuer's, up to ScoreName for the counterparty's name against the
// issuer's, and ScoreDate for a timely payment. A candidate is certain when
// the amount agrees and so does the number or the IBAN.
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
)

// MaxCandidates is how many candidates a transaction keeps.
const MaxCandidates = 5

// The reasons a candidate lists.
const (
	ReasonAmount         = "amount"
	ReasonDocumentNumber = "documentNumber"
	ReasonIBAN           = "iban"
	ReasonName           = "name"
	ReasonDate           = "date"
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
}

// Document is a document that may explain a transaction, with the fields
// read from it.
type Document struct {
	FileID     string
	Kind       string // a document kind: document.Invoice, document.CreditNote...
	Number     string
	Currency   string
	IssuerName string
	IssuerIBAN string
	Date       time.Time // zero if none
	DueDate    time.Time // zero if none
	// Total is the total as the document states it: positive for an
	// invoice, and for a credit note as most are written.
	Total bankstatement.Amount
}

// Candidate is a document that may explain a transaction.
type Candidate struct {
	FileID  string
	Score   float64
	Reasons []string // of ReasonAmount, ReasonDocumentNumber, ReasonIBAN, ReasonName, ReasonDate, in that order
	// Certain is set when the amount agrees and so does the document
	// number or the IBAN.
	Certain bool
}

// Result is what Decide says of one transaction.
type Result struct {
	TransactionID string
	Matched       string // the FileID matched automatically, or ""
	Candidates    []Candidate
}

// Candidates lists the documents that may explain tx, best first, at most
// MaxCandidates: only those whose amount and date agree.
func Candidates(tx Transaction, docs []Document) []Candidate {
	c := candidates(newTx(tx), docs)
	return c[:min(len(c), MaxCandidates)]
}

// Decide says, for a batch of transactions, which are matched without a
// person: a transaction is matched when exactly one of its candidates is
// certain, that document is certain for no other transaction of the batch,
// and it is not in taken (the documents already confirmed for another
// transaction). Every other transaction keeps its candidates as
// suggestions. Results are in the order of txs.
func Decide(txs []Transaction, docs []Document, taken map[string]bool) []Result {
	all := make([][]Candidate, len(txs))
	certainFor := map[string]int{}
	for i, tx := range txs {
		all[i] = candidates(newTx(tx), docs)
		for _, c := range all[i] {
			if c.Certain {
				certainFor[c.FileID]++
			}
		}
	}
	out := make([]Result, len(txs))
	for i, tx := range txs {
		r := Result{TransactionID: tx.ID, Candidates: all[i][:min(len(all[i]), MaxCandidates)]}
		certain := ""
		n := 0
		for _, c := range all[i] {
			if c.Certain {
				certain = c.FileID
				n++
			}
		}
		if n == 1 && certainFor[certain] == 1 && !taken[certain] {
			r.Matched = certain
		}
		out[i] = r
	}
	return out
}

// txView is a transaction with what the rules compare prepared once.
type txView struct {
	Transaction
	iban   string
	tokens []string
	name   []string
}

func newTx(tx Transaction) txView {
	return txView{
		Transaction: tx,
		iban:        compactIBAN(tx.CounterpartyIBAN),
		tokens:      tokens(tx.RemittanceInfo),
		name:        nameTokens(tx.CounterpartyName),
	}
}

func candidates(tx txView, docs []Document) []Candidate {
	var out []Candidate
	for _, d := range docs {
		if c, ok := score(tx, d); ok {
			out = append(out, c)
		}
	}
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

// score rates d as an explanation of tx; ok is false when the amount or
// the date disagrees.
func score(tx txView, d Document) (Candidate, bool) {
	if !amountAgrees(tx.Transaction, d) {
		return Candidate{}, false
	}
	inWindow, timely := dateAgrees(tx.BookingDate, d)
	if !inWindow {
		return Candidate{}, false
	}
	c := Candidate{FileID: d.FileID, Score: ScoreAmount, Reasons: []string{ReasonAmount}}
	number := numberFound(tx.tokens, d.Number)
	if number {
		c.Score += ScoreNumber
		c.Reasons = append(c.Reasons, ReasonDocumentNumber)
	}
	iban := tx.iban != "" && tx.iban == compactIBAN(d.IssuerIBAN)
	if iban {
		c.Score += ScoreIBAN
		c.Reasons = append(c.Reasons, ReasonIBAN)
	}
	if sim := similarity(tx.name, nameTokens(d.IssuerName)); sim >= NameThreshold {
		c.Score += ScoreName * sim
		c.Reasons = append(c.Reasons, ReasonName)
	}
	if timely {
		c.Score += ScoreDate
		c.Reasons = append(c.Reasons, ReasonDate)
	}
	c.Score = float64(int(c.Score*1000+0.5)) / 1000
	c.Certain = number || iban
	return c, true
}

// amountAgrees applies the amount rule: same currency (a document that
// states none is taken to be in the transaction's), same magnitude, and
// the direction the document's kind explains.
func amountAgrees(tx Transaction, d Document) bool {
	if d.Total == 0 || tx.Amount == 0 {
		return false
	}
	if d.Currency != "" && !strings.EqualFold(d.Currency, tx.Currency) {
		return false
	}
	total := d.Total
	moneyIn := d.Kind == document.CreditNote || total < 0
	if total < 0 {
		total = -total
	}
	if moneyIn {
		return tx.Amount == total
	}
	return tx.Amount == -total
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
