package seed_test

import (
	"bytes"
	"context"
	"flag"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"acctapi/analysis"
	"acctapi/db"
	"acctapi/docread"
	"acctapi/docread/pdftest"
	"acctapi/document"
	"acctapi/filestore"
	"acctapi/ocr"
	"acctapi/ocr/ocrtest"
)

var updateDemo = flag.Bool("update-demo", false, "write the generated documents of db/seed/demo again")

// demoInvoice, demoStatement and demoReceipt are the lines of the demo's
// generated documents: our own content, invented for the demo.
var (
	demoInvoice = []string{
		"Büro Schmidt GmbH · Friedrichstraße 100 · 10117 Berlin",
		"",
		"Müller & Söhne GmbH",
		"Hauptstraße 1",
		"10115 Berlin",
		"",
		"Rechnung",
		"",
		"Rechnungsnummer:  RE-2026-0815",
		"Rechnungsdatum:   15.09.2026",
		"Fällig am:        29.09.2026",
		"",
		"Pos  Bezeichnung                      Menge   Einzelpreis      Betrag",
		"1    Druckerpapier A4, 500 Blatt         20        4,50 €     90,00 €",
		"2    Toner schwarz                        2       80,00 €    160,00 €",
		"",
		"                                       Nettobetrag            250,00 €",
		"                                       Umsatzsteuer 19 %       47,50 €",
		"                                       Gesamtbetrag           297,50 €",
		"",
		"Zahlbar bis 29.09.2026 ohne Abzug auf unser Konto:",
		"IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX",
		"USt-IdNr. DE123475223 · Amtsgericht Berlin HRB 12345",
	}
	demoStatement = []string{
		"Berliner Volksbank eG",
		"",
		"Kontoauszug                            Auszug Nr. 9 / 2026",
		"Zeitraum 01.07.2026 bis 30.09.2026     Erstellt am 30.09.2026",
		"Kontoinhaber: Müller & Söhne GmbH",
		"IBAN DE02 1203 0000 0000 2020 51       BIC BYLADEM1001",
		"",
		"Buchungstag Wertstellung Verwendungszweck                       Betrag EUR",
		"                         Alter Kontostand                        12.480,25",
		"15.07.2026  15.07.2026   Gutschrift Bäckerei Krause KG",
		"                         Rechnung 2026-0107                      +2.500,00",
		"03.08.2026  03.08.2026   SEPA-Lastschrift Stadtwerke Berlin",
		"                         Strom Juli 2026                           -538,30",
		"28.09.2026  28.09.2026   Überweisung Kassentechnik Nord GmbH",
		"                         Rechnung 2026-3117                        -428,40",
		"                         Neuer Kontostand                        14.013,55",
	}
	demoReceipt = []string{
		"     ARAL Tankstelle",
		"  Invalidenstraße 20",
		"     10115 Berlin",
		"",
		"Beleg-Nr. 4711",
		"14.09.2026   08:12",
		"",
		"Super E10",
		"32,50 l x 1,799 EUR/l",
		"                 58,47 EUR",
		"",
		"Summe EUR        58,47",
		"MwSt 19%          9,34",
		"Netto            49,13",
		"",
		"Kartenzahlung girocard",
		"Vielen Dank für Ihren Besuch",
	}
)

// writeDemoDocuments makes the demo's generated documents: two PDFs with a
// text layer and a phone photo of a till receipt. The XML documents are
// written by hand.
func writeDemoDocuments(t *testing.T) {
	t.Helper()
	var photo bytes.Buffer
	page := ocrtest.Page(560, 0, 26, demoReceipt)
	shot := ocrtest.Shot{Degrees: 1.5, Lo: 50, Hi: 215, Sigma: 6, Seed: 2026, Shade: 0.15}
	if err := jpeg.Encode(&photo, shot.Take(page), &jpeg.Options{Quality: 70}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"invoice.pdf":   pdftest.Document(demoInvoice),
		"statement.pdf": pdftest.Document(demoStatement),
		"receipt.jpg":   photo.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join("demo", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDemoDocuments reads the documents of db/seed/demo as the server does
// and checks that each reads as what it is: the demo and the walk-through
// show people reading working. go test ./db/seed -run TestDemoDocuments
// -update-demo makes the generated ones again.
func TestDemoDocuments(t *testing.T) {
	if *updateDemo {
		writeDemoDocuments(t)
	}
	ctx := context.Background()
	dir := t.TempDir()
	store := mustOpenStore(t, filepath.Join(dir, "acctapi.db"))
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := docread.NewReader(ctx, docread.Options{Instances: 1,
		CacheDir: filepath.Join(os.TempDir(), "acctapi-docread-test-cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	opts := analysis.Options{Store: store, Files: files, Reader: reader, TempDir: dir}
	engine, err := ocr.New(ocr.Options{})
	switch {
	case err == nil:
		opts.OCR = engine
	case os.Getenv("CI") == "true":
		t.Fatalf("OCR: %v", err)
	default:
		opts.NoOCR = "OCR is not installed"
		t.Logf("the receipt photo is not read: OCR: %v (apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng)", err)
	}
	firm := mustFirm(t, store, "Demo Firm")
	client, err := store.CreateClient(ctx, firm.ID, db.ClientCreate{Name: "Müller & Söhne", Type: db.ClientLegalPerson})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := store.CreateWorkspace(ctx, client.ID, "Annual accounts 2026")
	if err != nil {
		t.Fatal(err)
	}

	type want struct {
		kind, number, date, total, source string
	}
	docs := []struct {
		file, mimeType string
		want           *want
	}{
		{"invoice.pdf", "application/pdf", &want{"invoice", "RE-2026-0815", "2026-09-15", "297.50", db.TextFromPDF}},
		{"statement.pdf", "application/pdf", &want{"bank_statement", "9", "2026-09-30", "", db.TextFromPDF}},
		{"einvoice.xml", "application/xml", &want{"invoice", "2026-3117", "2026-09-22", "428.40", db.TextFromEInvoice}},
		{"receipt.jpg", "image/jpeg", &want{"receipt", "4711", "2026-09-14", "58.47", db.TextFromOCR}},
		// The statement as the bank's XML: read, its kind is for the
		// bank-statement import to say.
		{"statement.xml", "application/xml", nil},
	}
	ids := map[string]string{}
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join("demo", d.file))
		if err != nil {
			t.Fatal(err)
		}
		pending, err := files.Write(bytes.NewReader(data), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		id := db.NewID()
		if err := files.Keep(pending, id, func() error {
			_, err := store.CreateFile(ctx, client.ID, db.FileCreate{ID: id, WorkspaceID: ws.ID, Name: d.file,
				MimeType: d.mimeType, Size: pending.Size, SHA256: pending.SHA256})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		ids[d.file] = id
	}
	if err := analysis.New(opts).RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	str := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, d := range docs {
		f, err := store.FindFile(ctx, client.ID, ids[d.file])
		if err != nil {
			t.Fatal(err)
		}
		a := f.Analysis
		if d.want == nil || d.want.source == db.TextFromOCR && opts.OCR == nil {
			if a.Status == db.AnalysisFailed {
				t.Errorf("%s: analysis failed: %s", d.file, str(a.Reason))
			}
			continue
		}
		got := want{kind: str(f.Kind), source: str(a.Source)}
		if a.Fields != nil {
			got.number, got.date, got.total = str(a.Fields.Value(document.DocumentNumber)), str(a.Fields.Value(document.IssueDate)), str(a.Fields.Value(document.TotalAmount))
		}
		if a.Status != db.AnalysisDone || got != *d.want {
			t.Errorf("%s: %s (%s), read %+v, want %+v", d.file, a.Status, str(a.Reason), got, *d.want)
		}
	}
}
