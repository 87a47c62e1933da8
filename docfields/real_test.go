package docfields

import (
	"testing"

	"acctapi/document"
)

// TestKindsOfRealPages holds the kinds real pages were misread as: titles
// spaced out or compounded, an order or delivery note named in an
// invoice's header, and kinds named in Dutch, Italian and Spanish.
func TestKindsOfRealPages(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"letter-spaced title", `
Lieferant                     Kunde                  W A R E N R E C H N U N G      Seite 1
Holzbau Kern GmbH             Baumarkt Ost KG
                                                     Beleg-Nr     : R-5501
                                                     Beleg-Datum  : 02.03.2021
Pos  Menge  Bezeichnung                Einzelpreis     Gesamt
1    10     Bretter Fichte                   4,00       40,00
Nettobetrag 40,00  USt 19% 7,60  Gesamtbetrag 47,60 EUR`, document.Invoice},
		{"compound title with an order named below", `
Mietrechnung Nr.    7781/22 vom 01.10.2022
Währung             : EUR
Bestellung          : B-4410
Lieferavis          : L-9921
Verkäufer:
Autoverleih Sommer GmbH
Rechnungsbetrag 595,00 EUR`, document.Invoice},
		{"corrected invoice", `
Rechnungskorrektur Nr. RK-17 vom 16.09.2021
Bestellung          : B-12
Korrigierter Betrag 119,00 EUR
Nettobetrag 100,00  USt 19,00  Gesamtbetrag 119,00`, document.Invoice},
		{"Dutch", `
FACTUUR
Factuurnummer: 2023-118
Factuurdatum: 14-02-2023
Omschrijving            Bedrag
Advieswerk              500,00
Totaal excl. btw        500,00
BTW 21%                 105,00
Totaal te betalen       605,00`, document.Invoice},
		{"Italian", `
FATTURA N. 45/2023
Data fattura: 03/04/2023
Descrizione              Importo
Consulenza               200,00
Imponibile               200,00
IVA 22%                   44,00
Totale fattura           244,00`, document.Invoice},
		{"Spanish", `
FACTURA
Número de factura: F-2023-77
Fecha de factura: 05/06/2023
Concepto                 Importe
Servicios                300,00
Base imponible           300,00
IVA 21%                   63,00
Total factura            363,00`, document.Invoice},
		{"Dutch credit note", `
CREDITNOTA
Creditnotanummer: CN-12
Datum: 01-03-2023
Retour geleverde goederen
Totaal te betalen      -121,00 EUR`, document.CreditNote},
	} {
		if got := Read(c.text); got.Kind != c.want {
			t.Errorf("%s: kind %q, want %q", c.name, got.Kind, c.want)
		}
	}
}

// TestIssueDatesOfRealPages holds dates real pages were misread on: a
// viewer's version date above the invoice's, a date wrapped below its
// "vom", and "von" for "vom".
func TestIssueDatesOfRealPages(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"version date", `
Darstellung elektronischer Rechnungen
Viewer-Version:                         3.1 vom 12.12.2024
Handelsrechnung (380)   Nr. 5521   vom    07.03.2021
Nettobetrag 10,00  USt 1,90  Gesamtbetrag 11,90`, "2021-03-07"},
		{"wrapped date", `
ZUGFeRD-Version: 2.2 vom 14.02.2022
TEILRECHNUNG     (326)   Nr.   88/14 vom
03.05.2021
Liefer- und Leistungsdatum    : 30.04.2021
Gesamtbetrag 11,90`, "2021-05-03"},
		{"von", `
Rechnung # RE-0815/2 von 24.06.2020
Druck: 2022-01-05
Gesamtbetrag 11,90 EUR`, "2020-06-24"},
	} {
		if got := Read(c.text).Fields.IssueDate; got != c.want {
			t.Errorf("%s: issue date %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNumbersOfRealPages holds document numbers real pages were misread
// on: a title's bare "Nr." below prose that names another "Belegnummer",
// and a number whose letters look like labels ("/M/").
func TestNumbersOfRealPages(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"title number", `
Handelsrechnung (380)   Nr. K2020334455 vom 02.02.2020
Bestellung Nr. Kunde:              7788
Bei Rückfragen nennen Sie bitte Ihre Kundennummer 5544 und Belegnummer 2020334455.
Gesamtbetrag 11,90 EUR`, "K2020334455"},
		{"letters in the number", `
Mietrechnung Nr.     4711002/00/M/01/N vom 01.10.2020
Gesamtbetrag 11,90 EUR`, "4711002/00/M/01/N"},
	} {
		if got := Read(c.text).Fields.DocumentNumber; got != c.want {
			t.Errorf("%s: number %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReceiptTotals holds what till receipts print around their total: a
// rounded total below the exact one, a refund's negative line, a year.
func TestReceiptTotals(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"rounded", `
KEDAI BUKU MAJU
Receipt
Date: 14/03/2019 18:22
Pen blue        2   3.99     7.98
Notebook A5     1  33.49    33.49
Total Incl GST :        41.47
Rounded Total :         41.45
Cash :                  50.00
Change :                 8.55`, "41.45"},
		{"negative and year", `
Backstube Kern
Kassenbon
12.05.2019 07:44
Brötchen        2 x 0,45     0,90
Pfand zurück                -2025,00
Summe EUR                   12,40
2019,00`, "12.40"},
	} {
		if got := Read(c.text).Fields.TotalAmount; got != c.want {
			t.Errorf("%s: total %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTotalsOfRealInvoices holds totals real invoices were misread on: a
// gross sum whose tax label says "inkl.", and an amount due that takes
// off a prepayment.
func TestTotalsOfRealInvoices(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"tax included", `
RECHNUNG Nr. 77
Steuerbasisbetrag USt. 19%                  300,00    57,00
Rechnungssumme Brutto (inkl. USt.)                   357,00`, "357.00"},
		{"prepaid", `
FACTURE N° 12
TOTAL HT        TOTAL TVA        TOTAL TTC
200,00          40,00            240,00
Acompte versé                     40,00
NET A PAYER                      200,00 EUR`, "240.00"},
	} {
		if got := Read(c.text).Fields.TotalAmount; got != c.want {
			t.Errorf("%s: total %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTaxInvoiceReceipt: a till receipt headed "Tax invoice", as the law
// names it in some countries, is a receipt by its shape and words.
func TestTaxInvoiceReceipt(t *testing.T) {
	text := `
KEDAI RUNCIT MAJU SDN BHD
GST REG NO: 000123456789
TAX INVOICE
Date: 03/04/2018 14:22
Cashier: 02
Milk 1L           1   6.50    6.50
Bread             2   2.40    4.80
Total Incl GST :         11.30
Rounding Adj :            0.00
Cash :                   20.00
Change :                  8.70
Thank you, please come again`
	got := Read(text)
	if got.Kind != document.Receipt || got.Fields.TotalAmount != "11.30" {
		t.Errorf("kind %q, total %q; want a receipt of 11.30", got.Kind, got.Fields.TotalAmount)
	}
	if p := got.Confidence[document.TotalAmount]; p >= 0.9 {
		t.Errorf("a receipt's total read without a check has confidence %v, want < 0.9", p)
	}
}
