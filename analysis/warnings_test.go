package analysis_test

import (
	"context"
	"slices"
	"testing"

	"acctapi/docfields"
	"acctapi/docread/pdftest"
)

// A page's reading keeps the reader's warnings, as an e-invoice's does its
// XML's; an e-invoice's reading warns of its XML only.
func TestReadingsWarn(t *testing.T) {
	f := newFixture(t)
	text := mustRead(t, "../docfields/testdata/warnings-invoice.txt")
	page := f.mustStore(t, "rechnung.txt", "text/plain", text)
	lines := []string{"RECHNUNG 471102", "Nettobetrag 100,00 EUR", "MwSt. 19,00 EUR", "Gesamtbetrag 120,00 EUR"}
	einvoice := f.mustStore(t, "zugferd.pdf", "application/pdf",
		pdftest.WithFile(lines, "ZUGFeRD-invoice.xml", mustRead(t, "../einvoice/testdata/zugferd1-basic.xml"), pdftest.NameTree))
	if err := f.worker.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, w := range docfields.Read(string(text)).Warnings {
		want = append(want, w.Message)
	}
	if got := f.mustFind(t, page).Analysis.Warnings; len(want) != 4 || !slices.Equal(got, want) {
		t.Errorf("the page's warnings %q, want the reader's four %q", got, want)
	}
	if got := f.mustFind(t, einvoice).Analysis; str(got.Source) != "einvoice" || len(got.Warnings) != 0 {
		t.Errorf("the e-invoice (source %s): warnings %q, want none of its page's", str(got.Source), got.Warnings)
	}
}
