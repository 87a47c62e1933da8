// Package bankstatement reads bank statements: ISO 20022 CAMT.053 (the
// versions camt.053.001.02 to .13) and SWIFT MT940 as German banks write it.
// Bytes go in, statements with their entries come out; nothing else of
// acctapi is imported.
//
// A file is refused with an *Error, whose Reason is plain English fit to
// show a person, when it is not a statement, over a limit (MaxSize bytes,
// MaxEntries entries, XML nested deeper than MaxDepth or with a DOCTYPE), or
// when its balances do not add up: where a statement gives both an opening
// and a closing balance, the opening plus the entries must equal the
// closing.
package bankstatement

import (
	"bytes"
	"fmt"
	"time"
)

// The limits of one file.
const (
	// MaxSize is the largest file Parse reads, in bytes.
	MaxSize = 20 << 20
	// MaxEntries is how many entries one file may hold, over all its
	// statements.
	MaxEntries = 100_000
	// MaxDepth is how deep XML elements may nest; CAMT.053 stays below 15.
	MaxDepth = 64
)

// Format is the syntax a statement was written in.
type Format string

// The formats Parse reads.
const (
	FormatCAMT053 Format = "camt.053"
	FormatMT940   Format = "mt940"
)

// Account is the account a statement is of.
type Account struct {
	IBAN      string // upper-case, no spaces; empty when the file names the account otherwise
	BIC       string
	Number    string // the MT940 :25: account id when it is not an IBAN, or CAMT's Othr/Id
	Currency  string
	OwnerName string
}

// Statement is one statement of a file: one CAMT.053 Stmt, or one MT940
// message from :20: to :62F: (or :62M:).
type Statement struct {
	Format   Format
	ID       string // CAMT Stmt/Id; MT940 the :20: reference and the :28C: number, joined by '/'
	Account  Account
	Currency string
	// From and To are the days the statement covers, at UTC midnight; zero
	// when the file does not say (MT940 takes the opening and closing
	// balances' dates).
	From, To time.Time
	// Opening and Closing are nil when the file states none.
	Opening, Closing *Balance
	Entries          []Entry
}

// Balance is a booked balance on a day.
type Balance struct {
	Amount Amount
	Date   time.Time // UTC midnight; zero when not stated
}

// Entry is one booked movement of money. An entry is one CAMT Ntry, or one
// of its TxDtls when the Ntry carries several whose amounts add up to the
// Ntry's; an MT940 :61: line with its :86: details.
type Entry struct {
	BookingDate, ValueDate time.Time // UTC midnight
	Amount                 Amount    // negative = money out
	Currency               string
	CounterpartyName       string
	CounterpartyIBAN       string // upper-case, no spaces; only a valid IBAN
	RemittanceInfo         string // the parts joined by spaces, white space collapsed
	EndToEndID             string
	BankReference          string // CAMT AcctSvcrRef; MT940 the reference after "//" on :61:
}

// Error is why a file was refused. Reason is plain English, fit to show a
// person.
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "bankstatement: " + e.Reason }

func refuse(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Parse reads every statement in data, which is CAMT.053 XML or MT940 text.
// It returns an *Error when data is not a statement, is over a limit, or
// has balances that do not add up.
func Parse(data []byte) ([]Statement, error) {
	return parse(data, MaxEntries)
}

// parse is Parse with an entry limit that tests can lower.
func parse(data []byte, maxEntries int) ([]Statement, error) {
	if len(data) > MaxSize {
		return nil, refuse("the file is %d bytes, over the %d bytes a statement file may have", len(data), MaxSize)
	}
	body := bytes.TrimSpace(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}))
	if len(body) == 0 {
		return nil, refuse("the file is empty")
	}
	var (
		sts []Statement
		err error
	)
	if body[0] == '<' {
		sts, err = parseCAMT(body, maxEntries)
	} else {
		sts, err = parseMT940(body, maxEntries)
	}
	if err != nil {
		return nil, err
	}
	for i := range sts {
		if err := sts[i].checkBalances(i, len(sts)); err != nil {
			return nil, err
		}
	}
	return sts, nil
}

// Sniff reports, from the first bytes of data only, whether it looks like
// CAMT.053 or MT940; Parse still decides.
func Sniff(data []byte) (Format, bool) {
	head := data[:min(len(data), 4096)]
	head = bytes.TrimSpace(bytes.TrimPrefix(head, []byte{0xEF, 0xBB, 0xBF}))
	if len(head) == 0 {
		return "", false
	}
	if head[0] == '<' {
		if bytes.Contains(head, []byte(camtNamespace)) {
			return FormatCAMT053, true
		}
		return "", false
	}
	if _, rest, ok := mt940Start(head); ok && bytes.Contains(rest, []byte(":60")) {
		return FormatMT940, true
	}
	return "", false
}

// checkBalances refuses a statement whose opening balance plus its entries
// is not its closing balance.
func (s *Statement) checkBalances(i, n int) error {
	if s.Opening == nil || s.Closing == nil {
		return nil
	}
	sum := s.Opening.Amount
	for _, e := range s.Entries {
		var ok bool
		if sum, ok = sum.add(e.Amount); !ok {
			return refuse("the amounts of statement %s are too large to add up", s.name(i, n))
		}
	}
	if sum != s.Closing.Amount {
		return refuse("the balances of statement %s do not add up: opening %s plus %d entries totalling %s is %s, but the closing balance is %s",
			s.name(i, n), s.Opening.Amount.Format(s.Currency), len(s.Entries), (sum - s.Opening.Amount).Format(s.Currency),
			sum.Format(s.Currency), s.Closing.Amount.Format(s.Currency))
	}
	return nil
}

// name says which statement of a file is meant.
func (s *Statement) name(i, n int) string {
	id := s.ID
	if id == "" {
		id = "without an id"
	} else {
		id = fmt.Sprintf("%q", id)
	}
	if n > 1 {
		return fmt.Sprintf("%s (%d of %d)", id, i+1, n)
	}
	return id
}

// day is the UTC midnight of a calendar day.
func day(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
