package analysis_test

import (
	"context"
	"fmt"
	"testing"

	"acctapi/db"
	"acctapi/docread/pdftest"
	"acctapi/document"
)

// A PDF's e-invoice is read from its XML however the PDF carries it and
// whatever the file is called: a ZUGFeRD 1.0 invoice's currency, net and
// VAT id are in its XML, not on its page.
func TestEInvoiceInEveryCarrier(t *testing.T) {
	f := newFixture(t)
	xml := mustRead(t, "../einvoice/testdata/zugferd1-basic.xml")
	page := []string{"Rechnung 471102", "Summe 235,62"}
	ids := map[string]string{}
	for _, c := range []pdftest.Carrier{pdftest.NameTree, pdftest.NameTreeKids, pdftest.Annotation, pdftest.AssociatedFiles, pdftest.PageAssociatedFiles} {
		for _, name := range []string{"ZUGFeRD-invoice.xml", "zugferd-invoice.xml", "factur-x.xml", "xrechnung.xml", "Rechnung 471102.XML", "invoice"} {
			ids[fmt.Sprintf("carrier %d, %s", c, name)] = f.mustStore(t, "invoice.pdf", "application/pdf", pdftest.WithFile(page, name, xml, c))
		}
	}
	if err := f.worker.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for what, id := range ids {
		a := f.mustFind(t, id).Analysis
		if str(a.Source) != "einvoice" || a.Fields == nil {
			t.Errorf("%s: source %q, want the e-invoice", what, str(a.Source))
			continue
		}
		for field, want := range map[string]string{document.Currency: "EUR", document.NetAmount: "198.00", document.DocumentNumber: "471102"} {
			if got := str(a.Fields.Value(field)); got != want {
				t.Errorf("%s: %s %q, want %q", what, field, got, want)
			}
		}
	}
}

// An e-invoice's buyer and discount are kept beside its fields, and a
// discount its page states fills one its XML leaves out.
func TestPaymentTermsKept(t *testing.T) {
	f := newFixture(t)
	xml := mustRead(t, "../einvoice/testdata/facturx-extended-horstoeko.xml")
	withDiscount := f.mustStore(t, "invoice.xml", "application/xml", xml)
	basic := mustRead(t, "../einvoice/testdata/zugferd1-basic.xml")
	onPage := f.mustStore(t, "invoice.pdf", "application/pdf",
		pdftest.WithFile([]string{"Rechnung 471102", "Rechnungsdatum 05.03.2020", "Summe 235,62", "2 % Skonto bei Zahlung bis 15.03.2020"},
			"factur-x.xml", basic, pdftest.NameTree))
	if err := f.worker.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]db.PaymentTerms{
		withDiscount: {BuyerName: "MUSTER-KUNDE GMBH", DiscountPercent: "2.00", DiscountAmount: "9.60", DiscountDueDate: "2018-10-16"},
		onPage:       {BuyerName: "Kunden AG Mitte", DiscountPercent: "2", DiscountDueDate: "2020-03-15"},
	} {
		fields := f.mustFind(t, id).Analysis.Fields
		if fields == nil || fields.Terms == nil || *fields.Terms != want {
			t.Errorf("%s: terms %+v, want %+v", id, fields, want)
		}
	}
}
