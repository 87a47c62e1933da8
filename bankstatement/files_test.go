package bankstatement

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The files of testdata are written from the published formats (SWIFT
// MT940 and MT942, ISO 20022 camt.053) in the ways banks write them; each
// is a seed of FuzzParse too.

func mustReadTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func mustParseFile(tb testing.TB, name string) []Statement {
	tb.Helper()
	sts, err := Parse(mustReadTestdata(tb, name))
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return sts
}

func TestFilesAsTheBankMeantThem(t *testing.T) {
	t.Run("a dash line inside :86:", func(t *testing.T) {
		sts := mustParseFile(t, "ing-dash-in-86.sta")
		if len(sts) != 1 {
			t.Fatalf("got %d statements, want 1", len(sts))
		}
		s := sts[0]
		if len(s.Entries) != 8 || s.Opening.Amount.String() != "662.23" || s.Closing.Amount.String() != "620.20" || s.Account.IBAN != "NL20INGB0001234567" {
			t.Fatalf("got %d entries, %v to %v, account %+v", len(s.Entries), s.Opening, s.Closing, s.Account)
		}
		if got := s.Entries[3].RemittanceInfo; !strings.Contains(got, "/MARF/MND - EV01//CSID/") || !strings.Contains(got, "T1234 Factuur123/") {
			t.Errorf("entry 4: got remittance %q", got)
		}
	})
	t.Run("several :86: lines of one entry", func(t *testing.T) {
		sts := mustParseFile(t, "rabobank-several-86.sta")
		if len(sts) != 1 || len(sts[0].Entries) != 2 {
			t.Fatalf("got %+v", sts)
		}
		e := sts[0].Entries[0]
		if e.RemittanceInfo != "BETALINGSKENM. 123456789 FACTUURNUMMER 987654321" || e.Amount.String() != "-44.95" {
			t.Errorf("got %+v", e)
		}
		if got := sts[0].Entries[1].RemittanceInfo; got != "Betaalautomaat 14:23 pasnr. 065" {
			t.Errorf("entry 2: got remittance %q", got)
		}
	})
	t.Run("wrapped lines and subfields", func(t *testing.T) {
		sts := mustParseFile(t, "wrapped-lines.sta")
		e := sts[0].Entries
		// A space after :86: is still structured; subfields the bank
		// ended short are words apart; a line wrapped across "HAMBU"
		// and "RG" is one word.
		if e[0].CounterpartyName != "Backhaus am Hafen GmbH" || e[0].RemittanceInfo != "EC 12345678 12.03 10.15 ME1 HAMBURG KARTE 1 GUELTIG BIS 12/28" {
			t.Errorf("entry 1: got %q, %q", e[0].CounterpartyName, e[0].RemittanceInfo)
		}
		// Unstructured text: a short line ended at a space, a line of
		// 65 characters was cut in a word.
		want := "KARTENZAHLUNG EC 12345678 12.03 11.40 ME1 Fischmarkt HAMBURG KARTE 1 GUELTIG BIS 12/28 Lieferung laut Rechnung RE-2026-00421 vom 01.03.2026"
		if e[1].RemittanceInfo != want {
			t.Errorf("entry 2: got %q\nwant %q", e[1].RemittanceInfo, want)
		}
	})
	t.Run("a CAMT statement of an opening balance only", func(t *testing.T) {
		s := mustParseFile(t, "camt-opening-only.xml")[0]
		if !s.From.Equal(day(2026, 3, 31)) || !s.To.Equal(day(2026, 3, 31)) || s.Closing != nil || s.Currency != "EUR" {
			t.Errorf("got %v to %v, closing %v, %q", s.From, s.To, s.Closing, s.Currency)
		}
	})
	t.Run("CAMT times on the bank's day", func(t *testing.T) {
		s := mustParseFile(t, "camt-bank-day.xml")[0]
		if !s.From.Equal(day(2026, 3, 12)) || !s.To.Equal(day(2026, 7, 2)) {
			t.Errorf("got period %v to %v, want 2026-03-12 to 2026-07-02", s.From, s.To)
		}
		for i, want := range []struct {
			booking time.Time
			name    string
		}{
			{day(2026, 3, 13), "Kanzlei Berger und Partner"},
			{day(2026, 7, 2), ""},
			{day(2026, 3, 12), "Stadtwerke"},
		} {
			if e := s.Entries[i]; !e.BookingDate.Equal(want.booking) || e.CounterpartyName != want.name {
				t.Errorf("entry %d: got %v %q, want %v %q", i+1, e.BookingDate, e.CounterpartyName, want.booking, want.name)
			}
		}
	})
	t.Run("names and remittance cleaned and bounded", func(t *testing.T) {
		e := mustParseFile(t, "camt-long-names.xml")[0].Entries[0]
		if n := utf8.RuneCountInString(e.CounterpartyName); n != MaxName || !strings.HasPrefix(e.CounterpartyName, "Amazon EU S.a r.l.xxx") {
			t.Errorf("got a name of %d characters: %q", n, e.CounterpartyName)
		}
		if n := utf8.RuneCountInString(e.RemittanceInfo); n > MaxRemittance || n < MaxRemittance-110 || strings.ContainsAny(e.RemittanceInfo, "\u2066\u2069") {
			t.Errorf("got a remittance of %d characters: %q", n, e.RemittanceInfo)
		}
		mt := ":20:X\n:25:DE89370400440532013000\n:60F:C260301EUR10,00\n:61:2603020302DR1,00NMSCNONREF\n" +
			":86:166?20Miete \x1b[2J\u202eMaerz?32Haus\x07verwaltung\u200f Nord\n:62F:C260302EUR9,00\n-"
		sts, err := Parse([]byte(mt))
		if err != nil {
			t.Fatal(err)
		}
		if e := sts[0].Entries[0]; e.RemittanceInfo != "Miete [2JMaerz" || e.CounterpartyName != "Hausverwaltung Nord" {
			t.Errorf("got %q, %q", e.RemittanceInfo, e.CounterpartyName)
		}
	})
}

func TestFilesRefused(t *testing.T) {
	for _, tc := range []struct{ file, reason string }{
		{"mt942.sta", "MT942 interim report"},
		{"mt940-no-account.sta", "names no account (:25:)"},
		{"mt940-two-currencies.sta", "is in USD, but the statement's other balances are in EUR"},
		{"camt-mixed-currency.xml", "mixes currencies: entry 1 is in USD, but its account (Acct/Ccy) is in EUR"},
		{"camt-no-currency.xml", "states no currency"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sts, err := Parse(mustReadTestdata(t, tc.file))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.reason) {
				t.Fatalf("got %v, %v; want a refusal saying %q", sts, err, tc.reason)
			}
		})
	}
	for name, mt := range map[string]string{
		"account in another currency": ":20:X\n:25:DE89370400440532013000USD\n:60F:C260301EUR10,00\n:62F:C260302EUR10,00\n-",
		"no balance":                  ":20:X\n:25:DE89370400440532013000\n:61:2603020302DR1,00NMSCNONREF\n-",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(mt)); err == nil {
				t.Fatal("got no error")
			}
		})
	}
}
