package docfields

import (
	"os"
	"slices"
	"testing"

	"acctapi/document"
)

// testdata/warnings-invoice.txt states four things that cannot be right:
// its IBAN fails its check digits, its net and tax do not add up to its
// total, its date is no day and its VAT id is too short.
func TestWarnings(t *testing.T) {
	text, err := os.ReadFile("testdata/warnings-invoice.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := Read(string(text))
	var got []string
	for _, w := range r.Warnings {
		got = append(got, w.Message)
	}
	for _, want := range []document.Warning{
		document.IBANCheckFails("DE89370400440532013001"),
		document.VATIDMisshapen("DE12345"),
		document.SumsDiffer("100.00", "19.00", "120.00"),
		document.NotAValue(document.IssueDate, "issue date", "31.02.2026", "a day"),
	} {
		if !slices.Contains(got, want.Message) {
			t.Errorf("no warning %q in %q (fields %+v)", want.Message, got, r.Fields)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d warnings %q, want 4", len(got), got)
	}
}

func TestNoWarningsWhereAllIsRight(t *testing.T) {
	r := Read(`Muster GmbH · Hauptstr. 1 · 10115 Berlin

Kunde AG
Kundenweg 5
54321 Köln

RECHNUNG Nr. 2026-017
Rechnungsdatum: 28.02.2026
USt-IdNr.: DE 136 695 976
Nettobetrag 100,00 EUR
MwSt. 19 % 19,00 EUR
Gesamtbetrag 119,00 EUR
IBAN DE89 3704 0044 0532 0130 00`)
	if len(r.Warnings) != 0 {
		t.Errorf("got warnings %+v on a right invoice (fields %+v)", r.Warnings, r.Fields)
	}
}

func TestNoDay(t *testing.T) {
	for _, c := range []struct {
		a, b, y string
		want    bool
	}{
		{"31", "02", "2026", true},
		{"04", "31", "2026", true},
		{"31", "04", "2026", true},
		{"29", "02", "2024", false},
		{"05", "03", "2026", false},
		{"32", "02", "2026", false},
		{"31", "13", "2026", false},
		{"31", "02", "1890", false},
	} {
		if got := noDay(c.a, c.b, c.y); got != c.want {
			t.Errorf("noDay(%s, %s, %s): got %v, want %v", c.a, c.b, c.y, got, c.want)
		}
	}
}

func TestVATShaped(t *testing.T) {
	for id, want := range map[string]bool{"DE136695976": true, "ATU12345678": true, "CHE123456789": true, "DE12345": false, "FR2137": false, "XX1": false} {
		if got := vatShaped(id); got != want {
			t.Errorf("vatShaped(%s): got %v, want %v", id, got, want)
		}
	}
}
