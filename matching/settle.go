package matching

import (
	"cmp"
	"slices"
	"strings"
	"time"
	"unicode"

	"acctapi/bankstatement"
	"acctapi/document"
)

// The payment states of a document.
const (
	Open       = "open"
	PartlyPaid = "partial"
	FullyPaid  = "paid"
)

// Payment is a transaction confirmed for one or more documents.
type Payment struct {
	Transaction
	FileIDs []string
}

// Settle says how much of each document's total the payments confirmed for
// it settled, by FileID. Payments count in the order they were booked. A
// payment confirmed for one document settles what it paid of it, or all of
// it when it is the discounted total paid in time; one confirmed for
// several settles each in full when it pays what is due of them all (a
// cent each; a credit note set against invoices taken off), else each in
// turn until its amount is spent, a credit note set against them first. A
// payment settles no more of a document than is open.
func Settle(docs []Document, payments []Payment) map[string]bankstatement.Amount {
	byID := map[string]docView{}
	for _, d := range docs {
		if d.Total != 0 {
			byID[d.FileID] = docView{Document: d}
		}
	}
	payments = slices.Clone(payments)
	slices.SortStableFunc(payments, func(a, b Payment) int {
		return cmp.Or(a.BookingDate.Compare(b.BookingDate), strings.Compare(a.ID, b.ID))
	})
	paid := map[string]bankstatement.Amount{}
	for _, p := range payments {
		var ds []docView
		for _, id := range p.FileIDs {
			if d, ok := byID[id]; ok {
				d.Paid = paid[id]
				ds = append(ds, d)
			}
		}
		left := magnitude(p.Amount)
		out := p.Amount < 0
		// offset tells a document set against the others: one explaining
		// money the other way, beside one explaining the payment's way.
		offset := func(d docView) bool { return moneyIn(d.Document) == out }
		if !slices.ContainsFunc(ds, func(d docView) bool { return !offset(d) }) {
			offset = func(docView) bool { return false }
		}
		var due bankstatement.Amount
		for _, d := range ds {
			if offset(d) {
				due -= dueOn(d, p.BookingDate)
			} else {
				due += dueOn(d, p.BookingDate)
			}
		}
		if len(ds) > 0 && within(due, left, len(ds)) {
			for _, d := range ds {
				paid[d.FileID] += d.open()
			}
			continue
		}
		// Short: what is set against the payment is used in full, and
		// the rest pays the others in turn.
		for _, d := range ds {
			if offset(d) {
				paid[d.FileID] += d.open()
				left += d.open()
			}
		}
		for _, d := range ds {
			if !offset(d) {
				part := min(left, d.open())
				paid[d.FileID] += part
				left -= part
			}
		}
	}
	return paid
}

// dueOn is what pays what is open of d in full when booked on the given
// day: the discounted total when the discount holds, else what is open.
func dueOn(d docView, booked time.Time) bankstatement.Amount {
	if amount, ok := d.discounted(booked); ok {
		return amount
	}
	return d.open()
}

// State is a document's payment state, given what payments settled of it
// (see Settle), and what is left to pay: "" for a document of a kind that
// is never paid (a bank statement, a contract) or without a total; else
// Open, PartlyPaid or FullyPaid.
func State(d Document, paid bankstatement.Amount) (string, bankstatement.Amount) {
	if d.Total == 0 || d.Kind == document.BankStatement || d.Kind == document.Contract {
		return "", 0
	}
	v := docView{Document: d}
	v.Paid = paid
	switch {
	case v.settled():
		return FullyPaid, 0
	case paid > 0:
		return PartlyPaid, v.open()
	}
	return Open, magnitude(d.Total)
}

// Identity is what tells the client's own documents from others': its VAT
// ids, the IBANs of its accounts, its names (its name, its legal name, its
// accounts' owner names).
type Identity struct {
	VATIDs []string
	IBANs  []string
	Names  []string
}

// DirectionOf says whether the client issued d or received it:
//
//   - Issued when the issuer's VAT id is one of the client's; Received when
//     the buyer's is, or when the issuer's is read and is not the client's;
//   - else Issued when the issuer's name is one of the client's names (the
//     same words, legal forms aside), Received when the buyer's is;
//   - else Issued when the document names no issuer and its IBAN is one of
//     the client's accounts (a received direct-debit notice prints the
//     client's IBAN too, beside its issuer's name);
//   - else Received.
func DirectionOf(d Document, id Identity) string {
	vat := func(s string) bool {
		s = compactVATID(s)
		return s != "" && slices.ContainsFunc(id.VATIDs, func(v string) bool { return compactVATID(v) == s })
	}
	switch {
	case vat(d.IssuerVATID):
		return Issued
	case vat(d.BuyerVATID) || compactVATID(d.IssuerVATID) != "":
		return Received
	}
	name := func(s string) bool {
		n := nameTokens(s)
		return len(n) > 0 && slices.ContainsFunc(id.Names, func(v string) bool { return sameWords(n, nameTokens(v)) })
	}
	switch {
	case name(d.IssuerName):
		return Issued
	case name(d.BuyerName):
		return Received
	case strings.TrimSpace(d.IssuerName) == "" && d.IssuerIBAN != "" &&
		slices.ContainsFunc(id.IBANs, func(v string) bool { return compactIBAN(v) == compactIBAN(d.IssuerIBAN) }):
		return Issued
	}
	return Received
}

// sameWords reports whether two names have the same words, in any order.
func sameWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, w := range a {
		if !slices.Contains(b, w) {
			return false
		}
	}
	return true
}

// compactVATID is a VAT id upper-case with only its letters and digits.
func compactVATID(s string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s))
}
