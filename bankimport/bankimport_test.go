package bankimport_test

import (
	"errors"
	"testing"
	"time"

	"acctapi/bankimport"
	"acctapi/bankstatement"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// daily is an MT940 file of two daily statements of one account, given
// out of order.
func daily() []bankstatement.Statement {
	account := bankstatement.Account{IBAN: "DE89370400440532013000"}
	return []bankstatement.Statement{
		{Format: bankstatement.FormatMT940, Account: account, Currency: "EUR", From: day("2026-03-02"), To: day("2026-03-02"),
			Opening: &bankstatement.Balance{Amount: 5000}, Closing: &bankstatement.Balance{Amount: 4000},
			Entries: []bankstatement.Entry{{BookingDate: day("2026-03-02"), Amount: -1000, BankReference: "R2"}}},
		{Format: bankstatement.FormatMT940, Account: account, Currency: "EUR", From: day("2026-03-01"), To: day("2026-03-01"),
			Opening: &bankstatement.Balance{Amount: 0}, Closing: &bankstatement.Balance{Amount: 5000},
			Entries: []bankstatement.Entry{{BookingDate: day("2026-03-01"), ValueDate: day("2026-03-03"), Amount: 5000, Currency: "USD"}}},
	}
}

func TestOf(t *testing.T) {
	in, err := bankimport.Of(daily())
	if err != nil {
		t.Fatal(err)
	}
	if in.From != "2026-03-01" || in.To != "2026-03-02" || *in.OpeningBalance != 0 || *in.ClosingBalance != 4000 {
		t.Errorf("span and balances: got %s to %s, %d to %d, want 2026-03-01 to 2026-03-02, 0 to 4000",
			in.From, in.To, *in.OpeningBalance, *in.ClosingBalance)
	}
	if in.Account.Ref != "DE89370400440532013000" || in.Account.IBAN == nil || in.Format != "mt940" {
		t.Errorf("account: got %+v of %s, want the IBAN's of mt940", in.Account, in.Format)
	}
	// Entries keep the file's order; one without a currency takes its
	// statement's.
	if len(in.Entries) != 2 || in.Entries[0].Currency != "EUR" || *in.Entries[0].BankReference != "R2" ||
		in.Entries[1].Currency != "USD" || *in.Entries[1].ValueDate != "2026-03-03" || in.Entries[0].ValueDate != nil {
		t.Errorf("entries: got %+v", in.Entries)
	}
}

func TestOfRefuses(t *testing.T) {
	several := daily()
	several[1].Account.IBAN = "DE02120300000000202051"
	if _, err := bankimport.Of(several); !errors.Is(err, bankimport.ErrSeveralAccounts) {
		t.Errorf("two accounts: got %v, want ErrSeveralAccounts", err)
	}
	empty := daily()[:1]
	empty[0].Entries, empty[0].Opening, empty[0].Closing = nil, nil, nil
	for name, sts := range map[string][]bankstatement.Statement{"no statement": nil, "nothing to import": empty} {
		var refused *bankstatement.Error
		if _, err := bankimport.Of(sts); !errors.As(err, &refused) {
			t.Errorf("%s: got %v, want a *bankstatement.Error", name, err)
		}
	}
}
