// Package bankimport turns a bank statement file, parsed by package
// bankstatement, into what the store imports: the statements of one
// account as one, from the earliest start to the latest end, with every
// entry. It holds the rules of what file can be imported; the request
// path (a statement uploaded) and the analysis (a stored file found to be
// one) share them.
package bankimport

import (
	"errors"
	"fmt"
	"time"

	"acctapi/bankstatement"
	"acctapi/db"
)

// ErrSeveralAccounts refuses a file whose statements are of more than one
// account: each account's statements are imported from a file of their
// own.
var ErrSeveralAccounts = errors.New("the file holds statements of more than one account; import each account's statements from a file of its own")

// Read parses a statement file and returns what the store imports (see
// Of). It returns the parser's *bankstatement.Error, or ErrSeveralAccounts.
func Read(data []byte) (*db.StatementImport, error) {
	sts, err := bankstatement.Parse(data)
	if err != nil {
		return nil, err
	}
	return Of(sts)
}

// Of is what the store imports of a parsed file's statements (all of one
// account) as one, from the earliest start to the latest end, with the
// first opening and the last closing balance, and every entry in the
// file's order. It returns a *bankstatement.Error for a file with no
// statement, too many entries or nothing to import, or ErrSeveralAccounts.
func Of(sts []bankstatement.Statement) (*db.StatementImport, error) {
	if len(sts) == 0 {
		return nil, &bankstatement.Error{Reason: "the file holds no statement"}
	}
	first := sts[0]
	ref := first.Account.IBAN
	if ref == "" {
		ref = first.Account.Number
	}
	in := &db.StatementImport{Format: string(first.Format), Currency: first.Currency,
		Account: db.AccountImport{Ref: ref, IBAN: optional(first.Account.IBAN), BIC: optional(first.Account.BIC),
			OwnerName: optional(first.Account.OwnerName)}}
	var from, to time.Time
	entries := 0
	for _, s := range sts {
		if s.Account.IBAN != first.Account.IBAN || s.Account.Number != first.Account.Number || s.Currency != first.Currency {
			return nil, ErrSeveralAccounts
		}
		if from.IsZero() || s.From.Before(from) {
			from = s.From
			if s.Opening != nil {
				in.OpeningBalance = ptr(int64(s.Opening.Amount))
			}
		}
		if to.IsZero() || !s.To.Before(to) {
			to = s.To
			if s.Closing != nil {
				in.ClosingBalance = ptr(int64(s.Closing.Amount))
			}
		}
		entries += len(s.Entries)
	}
	if entries > bankstatement.MaxEntries {
		return nil, &bankstatement.Error{Reason: fmt.Sprintf("the file holds %d entries, over the %d a statement file may have", entries, bankstatement.MaxEntries)}
	}
	if entries == 0 && in.OpeningBalance == nil && in.ClosingBalance == nil {
		return nil, &bankstatement.Error{Reason: "the file holds no entry and no balance"}
	}
	in.From, in.To = from.Format(time.DateOnly), to.Format(time.DateOnly)
	in.Entries = make([]db.EntryImport, 0, entries)
	for _, s := range sts {
		for _, e := range s.Entries {
			entry := db.EntryImport{BookingDate: e.BookingDate.Format(time.DateOnly), Amount: int64(e.Amount),
				Currency: e.Currency, CounterpartyName: optional(e.CounterpartyName), CounterpartyIBAN: optional(e.CounterpartyIBAN),
				RemittanceInfo: optional(e.RemittanceInfo), EndToEndID: optional(e.EndToEndID), BankReference: optional(e.BankReference)}
			if entry.Currency == "" {
				entry.Currency = s.Currency
			}
			if !e.ValueDate.IsZero() {
				entry.ValueDate = ptr(e.ValueDate.Format(time.DateOnly))
			}
			in.Entries = append(in.Entries, entry)
		}
	}
	return in, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func ptr[T any](v T) *T { return &v }
