package bankstatement

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, v := range []string{"02", "04", "08", "13"} {
		f.Add([]byte(camtDoc(v, "2000.00", "2650.01", sampleEntries)))
	}
	f.Add([]byte(mt940Sample))
	f.Add(toLatin1(mt940Sample))
	f.Add([]byte("{1:F01COBADEFFAXXX0000000000}{2:I940COBADEFFXXXXN}{4:\n" + mt940Sample + "-}"))
	f.Add([]byte(""))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>`))
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		f.Add(mustReadTestdata(f, filepath.Base(name)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sts, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" || sts != nil {
				t.Fatalf("got %v and error %v, want no statements and an *Error with a reason", sts, err)
			}
			return
		}
		if len(sts) == 0 {
			t.Fatal("got no statements and no error")
		}
		for _, s := range sts {
			if s.Currency == "" || s.Account.IBAN == "" && s.Account.Number == "" || s.From.IsZero() || s.To.Before(s.From) {
				t.Fatalf("statement %q of %q, %v to %v", s.ID, s.Currency, s.From, s.To)
			}
			if s.Format != FormatCAMT053 && s.Format != FormatMT940 {
				t.Fatalf("got format %q", s.Format)
			}
			if s.Opening != nil && s.Closing != nil {
				sum := s.Opening.Amount
				for _, e := range s.Entries {
					sum += e.Amount
				}
				if sum != s.Closing.Amount {
					t.Fatalf("statement %q passed with balances that do not add up", s.ID)
				}
			}
			for _, e := range s.Entries {
				a, err := ParseAmount(e.Amount.Format("XXX"))
				if err != nil || a != e.Amount {
					t.Fatalf("amount %d formats as %q, which reads back as %d, %v", e.Amount, e.Amount.Format("XXX"), a, err)
				}
				if e.CounterpartyIBAN != "" && validIBAN(e.CounterpartyIBAN) != e.CounterpartyIBAN {
					t.Fatalf("counterparty IBAN %q is not a valid compact IBAN", e.CounterpartyIBAN)
				}
				if e.RemittanceInfo != strings.TrimSpace(e.RemittanceInfo) || e.BookingDate.IsZero() || e.Currency != s.Currency {
					t.Fatalf("entry %+v", e)
				}
				if clean(e.CounterpartyName, MaxName) != e.CounterpartyName || clean(e.RemittanceInfo, MaxRemittance) != e.RemittanceInfo {
					t.Fatalf("entry %+v keeps text a person should not see", e)
				}
			}
		}
	})
}

// camtLarge is a CAMT.053 statement of n entries with one TxDtls each.
func camtLarge(n int) []byte {
	entries := make([]genEntry, n)
	sum := int64(0)
	for i := range entries {
		cents := int64(100 + i%50000)
		ind := "DBIT"
		if i%3 == 0 {
			ind = "CRDT"
			sum += cents
		} else {
			sum -= cents
		}
		entries[i] = genEntry{amount: fmt.Sprintf("%d.%02d", cents/100, cents%100), ind: ind, booking: "2026-03-12", value: "2026-03-13",
			ref: fmt.Sprintf("REF%08d", i), txs: []genTx{{name: "Lieferant Nummer " + fmt.Sprint(i%100) + " GmbH", iban: "DE75512108001245126199",
				ustrd: []string{fmt.Sprintf("Rechnung RE-2026-%05d vom 01.03.2026 Kundennummer 4711", i)}, e2e: fmt.Sprintf("E2E-%d", i)}}}
	}
	closing := 1_000_000_00 + sum
	return []byte(camtDoc("08", "1000000.00", fmt.Sprintf("%d.%02d", closing/100, closing%100), entries))
}

func TestParseLarge(t *testing.T) {
	sts, err := Parse(camtLarge(10_000))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sts[0].Entries); n != 10_000 {
		t.Fatalf("got %d entries, want 10000", n)
	}
}

func BenchmarkParseCAMT10k(b *testing.B) {
	data := camtLarge(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
