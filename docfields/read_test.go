package docfields

import (
	"strings"
	"testing"
	"time"

	"acctapi/document"
)

func TestReadInvoiceTraps(t *testing.T) {
	text := `Muster GmbH · Hauptstraße 12 · 10115 Berlin

Herrn                                     Rechnungsnummer: RE-2018-0042
Max Mustermann                            Kundennummer: 47110
Beispielweg 3                             Ihre Bestellung vom: 01.02.2018
80331 München                             Lieferdatum: 01.03.2018
USt-IdNr. DE145998871                     Rechnungsdatum: 05.03.2018

RECHNUNG

Pos  Beschreibung              Menge   Einzelpreis    Gesamt
1    Beratung                  2       100,00         200,00
2    Software                  1       50,00          50,00

                               Nettobetrag              250,00 €
                               zzgl. 19% MwSt.           47,50 €
                               Gesamtbetrag             297,50 €

Zahlbar bis 19.03.2018 ohne Abzug.

Muster GmbH · Geschäftsführer: Erika Muster · Amtsgericht Berlin HRB 12345
USt-IdNr.: DE136695976 · Steuernummer: 12/345/67890
Commerzbank · IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX`
	want := Result{Kind: document.Invoice, Language: "de", Fields: document.Fields{
		DocumentNumber: "RE-2018-0042", IssueDate: "2018-03-05", DueDate: "2018-03-19", Currency: "EUR",
		NetAmount: "250.00", TaxAmount: "47.50", TotalAmount: "297.50", IssuerName: "Muster GmbH",
		IssuerVATID: "DE136695976", IssuerIBAN: "DE89370400440532013000",
	}}
	got := Read(text)
	if got.Kind != want.Kind || got.Language != want.Language || got.Fields != want.Fields {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, name := range document.FieldNames {
		p, ok := got.Confidence[name]
		if !ok || p < 0 || p > 1 {
			t.Errorf("confidence of %s: %v, %v; want a value in [0, 1]", name, p, ok)
		}
	}
	if len(got.Confidence) != len(document.FieldNames) {
		t.Errorf("confidence %v: want one value for each of the ten fields", got.Confidence)
	}
}

func TestDates(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"05.03.2018", "2018-03-05"},
		{"5.3.18", "2018-03-05"},
		{"5. März 2018", "2018-03-05"},
		{"05. Mrz. 2018", "2018-03-05"},
		{"2018-03-05", "2018-03-05"},
		{"March 5, 2018", "2018-03-05"},
		{"5 March 2018", "2018-03-05"},
		{"05/03/2018", "2018-03-05"},
		{"12-Mar-2024", "2024-03-12"},
		{"2nd May 2005", "2005-05-02"},
		{"1er mars 2018", "2018-03-01"},
		{"O5.O3.2O18", "2018-03-05"},
		{"Oct0ber 29,2015", "2015-10-29"},
	} {
		got := Read("Rechnungsdatum: " + c.in).Fields.IssueDate
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMonthFirstWhenProven(t *testing.T) {
	r := Read("INVOICE #1042\nInvoice Date: 03/04/2024\nDue Date: 04/18/2024\nTotal $216.50")
	if r.Fields.IssueDate != "2024-03-04" || r.Fields.DueDate != "2024-04-18" {
		t.Errorf("got %q and %q, want 2024-03-04 and 2024-04-18", r.Fields.IssueDate, r.Fields.DueDate)
	}
}

func TestAmounts(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Gesamtbetrag 1.234,56 €", "1234.56"},
		{"Total €1,234.56", "1234.56"},
		{"Total TTC EUR 1 234,56", "1234.56"},
		{"Gesamtbetrag 1234.56 EUR", "1234.56"},
		{"Gutschriftsbetrag -12,00", "-12.00"},
		{"Summe 1'234.50 CHF", "1234.50"},
		{"Amount due -$12.00", "-12.00"},
	} {
		if got := Read("Rechnung\n" + c.in).Fields.TotalAmount; got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestChecks(t *testing.T) {
	if !ibanValid("DE89370400440532013000") || ibanValid("DE89370400440532013001") {
		t.Error("IBAN mod-97")
	}
	if iban, ok := repairIBAN("DE", "89370400440532O130OO"); !ok || iban != "DE89370400440532013000" {
		t.Errorf("got %q, want the IBAN with O read as 0", iban)
	}
	if !vatChecks("DE", "136695976") || vatChecks("DE", "136695977") {
		t.Error("DE VAT id check digit")
	}
	if got := vatsIn("USt-IdNr. DE 136 695 976"); len(got) != 1 || got[0].id != "DE136695976" {
		t.Errorf("got %v, want DE136695976", got)
	}
	if got := vatsIn("Steuernummer 12/345/67890"); len(got) != 0 {
		t.Errorf("a tax number is no VAT id: got %v", got)
	}
}

// TestOCRMisreadings reads what OCR makes of a photo's lines: the
// degree sign of "N°" as "?" or a quote, a "5" that starts an amount as
// "§", a contract's "§ 3" as "$ 3", a glyph read twice in an IBAN, a legal
// form glued to the name before it.
func TestOCRMisreadings(t *testing.T) {
	for _, c := range []struct {
		text  string
		field func(Result) string
		want  string
	}{
		{"CREDIT NOTE\nInv. No.!      R18797440\nThis credit note refers to invoice 9503-33 of Dec 17, 2018.", func(r Result) string { return r.Fields.DocumentNumber }, "R18797440"},
		{"FACTURE\nN° de facture: F-1\nDate de facture: 13.06.2022\n\nMontant TTC 12,00 €\n\nDupont Imprimerie SARL - 63 rue du Commerce - 67000 Strasbourg\nN° TVAFR23771279240", func(r Result) string { return r.Fields.IssuerVATID }, "FR23771279240"},
		{"Invoice\n1  Labour            5     €352.47    €1762.35\n         Subtotal               €1762.35\n         VAT (20%)              €352.47\n         Total (inci. VAT)      €2114.82",
			func(r Result) string { return r.Fields.TotalAmount }, "2114.82"},
		{"Invoice\nDate of issue:  2nd May 2024\nDue date:     ist June 2024", func(r Result) string { return r.Fields.DueDate }, "2024-06-01"},
		{"Ticket\n28/04/2016 11:33 N? de ticket 9278\nTotal 12,00 EUR", func(r Result) string { return r.Fields.DocumentNumber }, "9278"},
		{"FACTURE\nN’ de facture   Date de facture\nINV-84303      13.06.2022", func(r Result) string { return r.Fields.DocumentNumber }, "INV-84303"},
		{"Invoice\nNet amount   4,347.94\nVAT (20%)   869.59\nInvoice total   §,217.53", func(r Result) string { return r.Fields.TotalAmount }, "5217.53"},
		{"Rechnung\nLeistung gemäß §13b UStG 1.000,00 €\nGesamtbetrag 1.000,00 €", func(r Result) string { return r.Fields.TotalAmount }, "1000.00"},
		{"Wartungsvertrag\n$ 1 Vertragsgegenstand\n$ 2 Laufzeit\n$ 3 Vergütung\nDie Vergütung beträgt 3363,20 EUR zzgl. USt.\n$ 4 Schlussbestimmungen",
			func(r Result) string { return r.Fields.Currency }, "EUR"},
		{"Rechnung\nGLS Bank\nIBAN DEO05 1763 0064 6314 0858 09 BIC: GENODEFIGIL", func(r Result) string { return r.Fields.IssuerIBAN }, "DE05176300646314085809"},
		{"BRIGHTSIDE PRINTLLC\n12 Main Street\n\nInvoice\nInvoice No. 123", func(r Result) string { return r.Fields.IssuerName }, "BRIGHTSIDE PRINT LLC"},
	} {
		if got := c.field(Read(c.text)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.text, got, c.want)
		}
	}
	// A glyph read twice is undone only where a deletion passes the
	// checksum: not where a digit is wrong too.
	if got, ok := ibanWithout("DE", "O05176300646314085819"); ok {
		t.Errorf("an IBAN with a wrong digit read as %q", got)
	}
}

func TestKinds(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Kontoauszug 3/2024\nalter Kontostand 1.234,56\nneuer Kontostand 2.000,00\nBuchungstag Wert Verwendungszweck", document.BankStatement},
		{"Verdienstabrechnung März 2024\nGesamt-Brutto 3.500,00\nLohnsteuer 512,33\nAuszahlungsbetrag 2.264,45", document.Payslip},
		{"Finanzamt Bonn\nEinkommensteuerbescheid für 2023\nfestgesetzt werden 14.223,00\nRechtsbehelfsbelehrung", document.TaxNotice},
		{"Mietvertrag\nzwischen der A GmbH und der B GmbH\n§ 1 Mietgegenstand\n§ 2 Laufzeit", document.Contract},
		{"Gutschrift Nr. 5\nzu Rechnung 4 vom 01.02.2024\nGutschriftsbetrag 12,00 €", document.CreditNote},
		{"Gutschrift\nProvisionsabrechnung im Gutschriftsverfahren gemäß § 14 Abs. 2 UStG\nSumme 100,00 €", document.Invoice},
		{"Bäckerei Weber\nBon-Nr. 4711  05.03.2024 07:12\n2 x Brötchen 0,80\nSUMME EUR 1,60\nBAR 2,00\nRückgeld 0,40", document.Receipt},
		{"Sehr geehrte Damen und Herren, anbei erhalten Sie die Unterlagen zu unserem Treffen.", document.Other},
		{"x", ""},
	} {
		if got := Read(c.text).Kind; got != c.want {
			t.Errorf("%q: got %q, want %q", c.text[:min(30, len(c.text))], got, c.want)
		}
	}
}

func TestBounded(t *testing.T) {
	n := 30000 // more than the 1 MiB read
	if raceEnabled {
		n /= 30
	}
	huge := strings.Repeat("Rechnungsdatum 05.03.2018   Gesamtbetrag 1.234,56 €   DE136695976  Summe 12,00\n", n)
	start := time.Now()
	Read(huge)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a %d-byte text took %v", len(huge), d)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("Rechnung Nr. 1\nDatum: 05.03.2018\nGesamtbetrag 1.234,56 €\nIBAN DE89 3704 0044 0532 0130 00")
	f.Add("INVOICE\nInvoice date: March 5, 2018\nTotal due $1,234.56\nVAT No. GB123456789")
	f.Add("Facture n° 1\nDate : 05/03/2018\nTotal TTC 1 234,56 €\nTVA intracom. FR32123456789")
	f.Add("\f\f\x00\xff 12.12.12.12.12 1.1.1.1,11 DE DE DE")
	f.Add("Leistungszeitraum 01.02.2018 bis 5. März 2018\nRechnungsdatum 6 March 2018")
	f.Add("TAX INVOICE\nDate: 2870412017 Sat 21710/2017\n36/63/2618 0405/2017 7:19\n#19- 02/03/2018\nCASH 50.00\nCHANGE 1.00")
	f.Fuzz(func(t *testing.T, s string) {
		r := Read(s)
		if iban := r.Fields.IssuerIBAN; iban != "" && (len(iban) < 15 || len(iban) > 34 || strings.Trim(iban, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "") {
			t.Errorf("malformed IBAN %q", iban)
		}
		if d := r.Fields.IssueDate; d != "" {
			if _, err := time.Parse("2006-01-02", d); err != nil {
				t.Errorf("bad date %q", d)
			}
		}
	})
}

func BenchmarkRead(b *testing.B) {
	page1 := `Muster GmbH · Hauptstraße 12 · 10115 Berlin

Herrn                                     Rechnungsnummer: RE-2018-0042
Max Mustermann                            Kundennummer: 47110
Beispielweg 3                             Lieferdatum: 01.03.2018
80331 München                             Rechnungsdatum: 05.03.2018

RECHNUNG

Pos  Beschreibung              Menge   Einzelpreis    Gesamt
` + strings.Repeat("1    Beratung                  2       100,00         200,00\n", 30) + `
Seite 1 von 2`
	page2 := strings.Repeat("2    Software                  1       50,00          50,00\n", 20) + `
                               Nettobetrag            7.000,00 €
                               zzgl. 19% MwSt.        1.330,00 €
                               Gesamtbetrag           8.330,00 €

Zahlbar bis 19.03.2018 ohne Abzug.

Muster GmbH · Geschäftsführer: Erika Muster · Amtsgericht Berlin HRB 12345
USt-IdNr.: DE136695976 · Steuernummer: 12/345/67890
Commerzbank · IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX
Seite 2 von 2`
	text := page1 + "\f" + page2
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Read(text)
	}
}
