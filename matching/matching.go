// Package matching holds the rules that match a client's bank transactions
// to the documents that explain them: which documents are candidates for a
// transaction, how each scores, and which transactions are matched without
// a person. It reads no database; the caller brings the transactions and
// documents.
//
// A document other than a bank statement is a candidate for a transaction
// when both hold:
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
	// OwnAccount marks a transfer between two accounts of the same
	// client (the caller knows its accounts): no document explains it, so
	// it has no candidates, whatever a document's misread IBAN says.
	OwnAccount bool
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
	c := candidates(newTx(tx), newIndex(docs))
	return c[:min(len(c), MaxCandidates)]
}

// Decide says, for a batch of transactions, which are matched without a
// person. A transaction is matched to a document when:
//
//   - the document is its strongest certain candidate, and the only one that
//     strong: the only candidate whose number is in the remittance, or, when
//     no candidate's number is and the remittance names no other document,
//     the only one certain by IBAN; documents in taken (those already
//     confirmed for another transaction) are never picked and do not count;
//   - no other transaction of the batch has as strong a claim to it: a
//     payment naming the document beats one merely from its issuer's IBAN,
//     and two of equal strength leave both to a person.
//
// Every transaction keeps its candidates, at most MaxCandidates, as
// suggestions. Results are in the order of txs. docs should hold every
// document of the client that may be named in a remittance, not only those
// of the transactions' amounts: the first rule looks for their numbers.
func Decide(txs []Transaction, docs []Document, taken map[string]bool) []Result {
	all := make([][]Candidate, len(txs))
	pick := make([]int, len(txs)) // index into all[i], or -1
	// claims lists, for each document, the strength of every transaction's
	// claim to it.
	claims := map[string][]int{}
	ix := newIndex(docs)
	for i, tx := range txs {
		view := newTx(tx)
		all[i] = candidates(view, ix)
		pick[i] = -1
		best, n := 0, 0
		for k, c := range all[i] {
			if taken[c.FileID] {
				// A document confirmed for another transaction is paid:
				// it is still shown, but neither matched nor a rival.
				continue
			}
			s := strength(c)
			if s > 0 {
				claims[c.FileID] = append(claims[c.FileID], s)
			}
			switch {
			case s > best:
				best, n, pick[i] = s, 1, k
			case s == best && s > 0:
				n++
			}
		}
		// A payment naming some document is for that one: when the named
		// one is not a candidate, the IBAN alone does not pick another.
		if n != 1 || best == 1 && ix.namesDocument(view.tokens) {
			pick[i] = -1
		}
	}
	out := make([]Result, len(txs))
	for i, tx := range txs {
		out[i] = Result{TransactionID: tx.ID, Candidates: all[i][:min(len(all[i]), MaxCandidates)]}
		if pick[i] < 0 {
			continue
		}
		c := all[i][pick[i]]
		s, rivals := strength(c), 0
		for _, other := range claims[c.FileID] {
			if other >= s {
				rivals++ // this transaction's own claim counts once
			}
		}
		if rivals == 1 {
			out[i].Matched = c.FileID
		}
	}
	return out
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

// docView is a document with what the rules compare prepared once.
type docView struct {
	Document
	number string // the number's tokens joined
	iban   string
	name   []string
}

// index holds the documents by the magnitude of their totals, which a
// candidate's must equal, and the numbers of them all.
type index struct {
	byAmount map[bankstatement.Amount][]docView
	numbers  map[string]bool // tokens joined
}

func newIndex(docs []Document) index {
	ix := index{byAmount: map[bankstatement.Amount][]docView{}, numbers: map[string]bool{}}
	for _, d := range docs {
		// A statement's total is a balance, which pays for nothing.
		if d.Kind == document.BankStatement {
			continue
		}
		v := docView{Document: d, number: strings.Join(tokens(d.Number), ""), iban: compactIBAN(d.IssuerIBAN), name: nameTokens(d.IssuerName)}
		if len(v.number) >= MinNumberLength {
			ix.numbers[v.number] = true
		}
		if d.Total != 0 {
			ix.byAmount[magnitude(d.Total)] = append(ix.byAmount[magnitude(d.Total)], v)
		}
	}
	return ix
}

// namesDocument reports whether the remittance tokens hold the number of
// any document, as numberFound finds one.
func (ix index) namesDocument(remittance []string) bool {
	for i := range remittance {
		got := ""
		for j := i; j < len(remittance) && j < i+maxNumberTokens; j++ {
			got += remittance[j]
			if ix.numbers[got] {
				return true
			}
		}
	}
	return false
}

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
	if tx.OwnAccount {
		return nil
	}
	var out []Candidate
	for _, d := range ix.byAmount[magnitude(tx.Amount)] {
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
func score(tx txView, d docView) (Candidate, bool) {
	if !amountAgrees(tx.Transaction, d.Document) {
		return Candidate{}, false
	}
	inWindow, timely := dateAgrees(tx.BookingDate, d.Document)
	if !inWindow {
		return Candidate{}, false
	}
	c := Candidate{FileID: d.FileID, Score: ScoreAmount, Reasons: []string{ReasonAmount}}
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
