package docfields

// Unit tests of traps seen in real documents, each in text written here.

import "testing"

// The letterhead's VAT id wins over a template footer's that names another
// and over the buyer's printed in a column beside the seller's details.
func TestVATLetterheadFirst(t *testing.T) {
	text := `ATELIER DUPONT                                      FACTURE N° : F-2031
                                                    Date : 15/03/2023
NOM COMMERCIAL
Atelier Dupont et fils

12 rue des Lilas
Bâtiment B, 2e étage

69002 LYON, FR
Courriel : contact@atelier.example
Téléphone : 04 00 00 00 00
GLN : 587451236587                                  Adresse du client
SIREN : 552 100 554                                   CLIENT SA
N° TVA : FR 96 552 100 554                            8 quai Nord
                                                      13002 MARSEILLE
                                                      N° TVA : FR 44 732 829 320

Prestation                         100,00

TOTAL HT 100,00   TVA 20,00   TOTAL TTC 120,00

          MODELE SARL au capital de 10 000 EUR – N° TVA : FR83 404 833 048  Page 1 / 1`
	if got := Read(text).Fields.IssuerVATID; got != "FR96552100554" {
		t.Errorf("VAT id %q, want the letterhead's FR96552100554", got)
	}
}

// A template that right-aligns the number prints it above its label.
func TestNumberAboveLabel(t *testing.T) {
	text := `                                                                                   F20230117
ATELIER DUPONT                                      AVOIR N° :
                                                    Date :                    15/03/2023
12 rue des Lilas                                    Adresse du client

Prestation                         -100,00

TOTAL HT -100,00   TVA -20,00   TOTAL TTC -120,00`
	if got := Read(text).Fields.DocumentNumber; got != "F20230117" {
		t.Errorf("number %q, want F20230117", got)
	}
}

// An exempt invoice's net is its total, beside a labelled zero tax.
func TestExemptNetIsTotal(t *testing.T) {
	text := `Muster Versicherung AG · Hauptstraße 12 · 10115 Berlin

RECHNUNG Nr. 2023-118 vom 05.03.2023

Beitrag Hausrat                                    2.000,00
Umsatzsteuerbefreit nach § 4 Nr. 10a UStG

                     Rechnungssumme ohne USt.      2.000,00
                     Steuerbetrag                      0,00
                     Bruttosumme                   2.000,00`
	f := Read(text).Fields
	if f.NetAmount != "2000.00" || f.TaxAmount != "0.00" || f.TotalAmount != "2000.00" {
		t.Errorf("net %q tax %q total %q, want 2000.00, 0.00, 2000.00", f.NetAmount, f.TaxAmount, f.TotalAmount)
	}
}

// A shop's till receipt headed "TAX INVOICE" is a receipt by its GST lines.
func TestGSTTillReceiptKind(t *testing.T) {
	text := `KEDAI RUNCIT MAJU SDN BHD
GST ID: 001234567890
TAX INVOICE
Date: 06/03/2018 14:22      Cashier: 01
Description        Qty   Price   Amount   Tax
SUSU 1L             2     6.90    13.80    SR
ROTI                1     3.50     3.50    SR
Total Sales (Excluding GST) :    16.32
TotalGST :                        0.98
Total Sales (Inclusive of GST) : 17.30
CASH :                           20.00
Change :                          2.70`
	if got := Read(text).Kind; got != "receipt" {
		t.Errorf("kind %q, want receipt", got)
	}
}

// A zero ("Relief GST 0.00") is never a total, whatever the kind.
func TestZeroIsNoTotal(t *testing.T) {
	a := analyze(newDoc([]string{"INVOICE\nTotal RM 88.20\nRelief GST C RM 0.00"}))
	got := a.tillTotals([]amtCand{{x: amountTok{cents: 0}}, {x: amountTok{cents: 8820}}})
	if len(got) != 1 || got[0].x.cents != 8820 {
		t.Errorf("totals %+v, want 88.20 alone", got)
	}
}

// "TOTAL  ROUNDED", its words split by a wide space, is the total.
func TestRoundedTotalSplit(t *testing.T) {
	text := `KEDAI MAJU SDN BHD
CASH BILL
Date: 06/03/2018 14:22
SUSU 1L             2     6.90    13.80
ROTI                1     3.50     3.52
TOTAL                             RM  17.32
ROUNDING  ADJUSTMENT              -RM  0.02
TOTAL  ROUNDED                    RM  17.30
CASH                              RM  20.00
CHANGE                            RM   2.70`
	if got := Read(text).Fields.TotalAmount; got != "17.30" {
		t.Errorf("total %q, want 17.30", got)
	}
}

// A net and tax that add up to an unlabelled total beat a net read as an
// exempt total beside a zero in the tax summary.
func TestTaxThatAddsUpBeatsExempt(t *testing.T) {
	text := `KEDAI MAJU SDN BHD
TAX INVOICE
05/01/2018          Cashier:  C501
BEBOLA              2    14.90   29.80

TOTAL EXCL.GST               28.11
ADD :  GST @ 6% On            1.69
                             29.80
CASH                         50.00
CHANGE                       20.20

GST summary   Amount RM     Tax RM
SR=    6%         28.11       1.69
                   0.00       0.00`
	f := Read(text).Fields
	if f.TotalAmount != "29.80" || f.TaxAmount != "1.69" {
		t.Errorf("total %q tax %q, want 29.80 and 1.69", f.TotalAmount, f.TaxAmount)
	}
}

// Two dates of a line in different spellings, the numeric one first, are
// read in the line's order: the reader once indexed past the second.
func TestMixedSpellingsOnOneLine(t *testing.T) {
	text := `RECHNUNG Nr. 7
Leistungszeitraum 01.02.2018 bis 5. März 2018
Rechnungsdatum 06.03.2018
Summe 5,00`
	if got := Read(text).Fields.IssueDate; got != "2018-03-06" {
		t.Errorf("issue date %q, want 2018-03-06", got)
	}
	ds := datesIn("from 01.02.2018 to 5 March 2018")
	if len(ds) != 2 || ds[0].start > ds[1].start {
		t.Errorf("dates %+v, want two in the line's order", ds)
	}
}

// A VAT id under a VAT label that has its country's prefix but not its
// shape (a sample's "DE12435679") is reported as printed, with a low
// confidence; a well-shaped one elsewhere on the page wins over it, and a
// misshapen one without a label is no VAT id.
func TestMisshapenVATIDAsPrinted(t *testing.T) {
	r := Read(`Lieferant GmbH
USt-IdNr.: DE12435679
RECHNUNG Nr. 5 vom 01.02.2024
Summe 100,00`)
	if r.Fields.IssuerVATID != "DE12435679" || r.Confidence["issuerVatId"] > 0.3 {
		t.Errorf("VAT id %q (%.2f), want DE12435679 at a low confidence", r.Fields.IssuerVATID, r.Confidence["issuerVatId"])
	}
	r = Read(`Lieferant GmbH
USt-IdNr.: DE12435679
RECHNUNG Nr. 5 vom 01.02.2024
Summe 100,00
Lieferant GmbH · USt-IdNr. DE136695976`)
	if r.Fields.IssuerVATID != "DE136695976" {
		t.Errorf("VAT id %q, want the well-shaped DE136695976", r.Fields.IssuerVATID)
	}
	if got := Read("Lieferant GmbH\nKundennummer DE12435679\nRECHNUNG Nr. 5\nSumme 100,00").Fields.IssuerVATID; got != "" {
		t.Errorf("VAT id %q from an unlabelled number", got)
	}
}

// A number glued before a date ("#19- 21/03/2018") makes a match that is
// no date; the date it overlaps is still found.
func TestDateAfterNumberAndDash(t *testing.T) {
	ds := datesIn("ORD #18 -REG #19- 21/03/2018  19:53:23")
	if len(ds) != 1 || ds[0].t.Format("2006-01-02") != "2018-03-21" {
		t.Errorf("dates %+v, want 2018-03-21", ds)
	}
}

// Thermal slips fade: OCR reads a 0 as 6 and a 1 as 7, and loses or
// misreads a date's separators. A part no date can have is read again;
// a year after next that cannot be mended is no date.
func TestMisreadDates(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"Date: 10/03/2078 5:41:08", "2018-03-10"},
		{"12-02-2618   11:34:45 AM", "2018-02-12"},
		{"Date : 36/03/2018 # 8:13 PM", "2018-03-30"},
		{"ADMIN : 30/63/2018 11:18", "2018-03-30"},
		{"Dow No.  :  GS00183546   Cate:  32/02/2018", "2018-02-02"},
		{"Date: 38/02/2018", ""},
		{"Receipt#: CS00087400 Date: 27092017", "2017-09-27"},
		{"Doc No. CS00065374 Date  0502/2018", "2018-02-05"},
		{"Receipt #:  CS00087400   ~~ Bate: 2709/2017", "2017-09-27"},
		{"Cate:  2709/2017", "2017-09-27"},
		{"RECEIPT # 0300933990 DATE: 2870412017", "2017-04-28"},
		{"Mater  Sat  21710/2017  01:31:54 PM", "2017-10-21"},
		{"ORD #15 -REG #19- 02/03/2018  12:59:16", "2018-03-02"},
		{"Wate       . 0405/2017 7:19:43 AM", "2017-05-04"},
		{"Beleg 0405/2017", ""},
		{"DATE: 20/03/2094", ""},
		{"RCI1-23-69 - 12/144", ""},
		{"Rechnung Nr. 0502/2018", ""},
		{"Invoice 27092017", ""},
	} {
		ds := datesIn(repairDigits(c.line))
		got := ""
		if len(ds) > 0 {
			got = ds[0].t.Format("2006-01-02")
		}
		if got != c.want {
			t.Errorf("%q: date %q, want %q", c.line, got, c.want)
		}
	}
	// Two mendings that both fit are no answer.
	if v, ok := undoMisread("67", func(int) bool { return true }); ok {
		t.Errorf("67 mended to %d though 07 and 61 both fit", v)
	}
}

// Dollar signs OCR made of an S do not make a Malaysian receipt's dates
// month first: its ringgit and GST say day first.
func TestDayFirstMarksOutweighDollars(t *testing.T) {
	r := Read("99 SPEED MART\nGST ID 000181747712\n10-05-17\n$425 MAGGI HOT CUP RM3.50\n$1.75 X 2\nTotal Sales RM 72.74")
	if r.Fields.IssueDate != "2017-05-10" {
		t.Errorf("date %q, want 2017-05-10, day first", r.Fields.IssueDate)
	}
}

// A till prints the moment of its sale, a date with its time; another
// date at the top (a number misread as one) gives way to it.
func TestReceiptDateWithTime(t *testing.T) {
	r := Read("PASAR MINI\nTAXINV :002-1550040    19/03/16\nVEGETABLES  2.20\nTOTAL RM 28.60\nCASH 100.00\nCHANGE 71.40\n18/03/18 09:03 #902- 15500408")
	if r.Kind != "receipt" || r.Fields.IssueDate != "2018-03-18" {
		t.Errorf("kind %q, date %q; want a receipt of 2018-03-18", r.Kind, r.Fields.IssueDate)
	}
}

// A narrow slip of prices is a till receipt though headed "INVOICE NO"
// and told to "Keep the invoice": a slip's heading is a weaker title than
// a page's, and "Invoice No" is one title, not two.
func TestSlipHeadedInvoiceIsReceipt(t *testing.T) {
	slip := `        99 SPEED MART S/B  (519537-X)
          INVOICE NO  :  18311/103/T0280

    483 CARLSBERG CAN 4X320ML   RM106.50  s
    2101  CARLSBERG SMOOTH       RM104.50 s

    Total  Sales  (Inclusive GST)  RM  213.00
                          CASH RM   213.00
                         CHANGE RM      .00

         Thank You.  Please come  again
    Keep  the  invoice  for applicable  returns`
	if k := Read(slip).Kind; k != "receipt" {
		t.Errorf("kind %q, want receipt", k)
	}
	page := "Lieferant GmbH, Lieferantenstraße 20, 80333 München, USt-IdNr. DE123456789, Tel. 089 123456\n" +
		"                                                                 RECHNUNG NR 2018-42\n" +
		"Pos  Beschreibung                          Menge      Einzelpreis         Gesamt\n" +
		"1    Beratung Projekt Alpha                 10         120,00 EUR     1.200,00 EUR\n" +
		"                                                      Gesamtbetrag     1.428,00 EUR"
	if k := Read(page).Kind; k != "invoice" {
		t.Errorf("kind %q of a page headed RECHNUNG NR, want invoice", k)
	}
}
