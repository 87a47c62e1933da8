package docread_test

import (
	"bytes"
	"fmt"
	"testing"

	"acctapi/docread"
	"acctapi/docread/pdftest"
)

// Every way a PDF carries its e-invoice gives the file, named as its file
// specification names it, whatever the name's case.
func TestReadEmbeddedFileCarriers(t *testing.T) {
	r := mustReader(t)
	xml := []byte(`<?xml version="1.0" encoding="UTF-8"?><rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>`)
	carriers := map[pdftest.Carrier]string{
		pdftest.NameTree:            "name tree",
		pdftest.NameTreeKids:        "name tree kids",
		pdftest.Annotation:          "annotation",
		pdftest.AssociatedFiles:     "catalog /AF",
		pdftest.PageAssociatedFiles: "page /AF",
	}
	for c, carrier := range carriers {
		for _, name := range []string{"ZUGFeRD-invoice.xml", "zugferd-invoice.xml", "factur-x.xml", "XRECHNUNG.XML", "Rechnung 2024-17 (Kopie).xml"} {
			t.Run(fmt.Sprintf("%s %s", carrier, name), func(t *testing.T) {
				doc := mustRead(t, r, pdftest.WithFile([]string{"Rechnung 2024-17"}, name, xml, c), "invoice.pdf", "application/pdf")
				if len(doc.Attachments) != 1 {
					t.Fatalf("got %d attachments %+v, want 1", len(doc.Attachments), doc.Attachments)
				}
				a := doc.Attachments[0]
				if a.Name != name || !bytes.Equal(a.Data, xml) || a.Size != int64(len(xml)) {
					t.Errorf("got %q of %d bytes %.40q, want %q with the XML", a.Name, a.Size, a.Data, name)
				}
				if a.MIME != "text/xml" {
					t.Errorf("got MIME %q, want text/xml", a.MIME)
				}
				if doc.Text() != "Rechnung 2024-17" {
					t.Errorf("got text %q", doc.Text())
				}
			})
		}
	}
}

// The files PDFium does not list are kept within MaxAttachmentBytes too,
// and a file too large for it is listed without its bytes.
func TestScannedFileLimit(t *testing.T) {
	r := mustNewReader(t, docread.Options{Limits: docread.Limits{MaxAttachmentBytes: 1000}})
	doc := mustRead(t, r, pdftest.WithFile([]string{"x"}, "factur-x.xml", bytes.Repeat([]byte("x"), 2000), pdftest.AssociatedFiles), "a.pdf", "")
	if len(doc.Attachments) != 1 || doc.Attachments[0].Data != nil || doc.Attachments[0].Name != "factur-x.xml" {
		t.Fatalf("got %+v, want factur-x.xml without data", doc.Attachments)
	}
}
