package analysis

import (
	"cmp"
	"io"
	"path"
	"strings"

	"acctapi/db"
	"acctapi/docfields"
	"acctapi/docread"
	"acctapi/document"
	"acctapi/einvoice"
)

// resultOf turns what the reader read into what the store records: an
// e-invoice's fields from its XML (a plain XML upload, or the XML a PDF/A-3
// carries), else what the document's text says, and the text the search
// reads. A PDF with no text at all is skipped, noOCR saying why OCR did not
// read it ("" when it did, and found nothing).
func resultOf(doc *docread.Document, src io.ReaderAt, size int64, noOCR string) db.AnalysisResult {
	for i := range doc.Pages {
		doc.Pages[i].Text = document.CleanText(doc.Pages[i].Text)
	}
	invoice := eInvoiceOf(doc, src, size)
	if doc.Format == docread.FormatPDF && !hasText(doc) && invoice == nil {
		if noOCR == "" {
			return skipped("the PDF has no text layer, and OCR found no text on its pages")
		}
		return skipped("the PDF has no text layer (a scan), whose pages are read with OCR, and " + noOCR)
	}
	text := &db.FileText{Text: doc.Text(), Pages: max(doc.PageCount, len(doc.Pages)), Source: db.TextFromPDF}
	result := db.AnalysisResult{Status: db.AnalysisDone, Source: &text.Source, Text: text}
	var read docfields.Result
	if doc.Format != docread.FormatXML {
		pages := make([]string, len(doc.Pages))
		for i, p := range doc.Pages {
			pages[i] = p.Text
		}
		read = docfields.ReadPages(pages)
	}
	result.Kind, result.Language = nonEmpty(read.Kind), nonEmpty(read.Language)
	result.Fields = textFieldsOf(read.Fields)
	if invoice != nil {
		source := db.TextFromEInvoice
		result.Source = &source
		if doc.Format == docread.FormatXML {
			text.Source = source
		}
		result.Kind = &invoice.Kind
		result.Language = cmp.Or(nonEmpty(strings.ToLower(invoice.Language)), result.Language)
		result.Fields = withGaps(fieldsOf(invoice), result.Fields)
	}
	return result
}

// textFieldsOf are the fields read from a document's text as the store
// keeps them.
func textFieldsOf(f docfields.Fields) *db.DocumentFields {
	return &db.DocumentFields{
		DocumentNumber: nonEmpty(f.DocumentNumber), IssueDate: nonEmpty(f.IssueDate), DueDate: nonEmpty(f.DueDate),
		Currency: nonEmpty(f.Currency), NetAmount: nonEmpty(f.NetAmount), TaxAmount: nonEmpty(f.TaxAmount),
		TotalAmount: nonEmpty(f.TotalAmount), IssuerName: nonEmpty(f.IssuerName), IssuerVATID: nonEmpty(f.IssuerVATID),
		IssuerIBAN: nonEmpty(f.IssuerIBAN),
	}
}

// withGaps fills the fields an e-invoice's XML leaves empty (a MINIMUM
// profile names no IBAN, say) from what its PDF's text says. What the XML
// says is the invoice: the text never overrides it.
func withGaps(xml, text *db.DocumentFields) *db.DocumentFields {
	for _, f := range []struct{ dst, src **string }{
		{&xml.DocumentNumber, &text.DocumentNumber}, {&xml.IssueDate, &text.IssueDate}, {&xml.DueDate, &text.DueDate},
		{&xml.Currency, &text.Currency}, {&xml.NetAmount, &text.NetAmount}, {&xml.TaxAmount, &text.TaxAmount},
		{&xml.TotalAmount, &text.TotalAmount}, {&xml.IssuerName, &text.IssuerName}, {&xml.IssuerVATID, &text.IssuerVATID},
		{&xml.IssuerIBAN, &text.IssuerIBAN},
	} {
		if *f.dst == nil {
			*f.dst = *f.src
		}
	}
	return xml
}

// eInvoiceOf reads the e-invoice in doc: the XML itself, or the first
// attachment of a PDF that is one (the standard names first, then any
// other XML). nil when there is none.
func eInvoiceOf(doc *docread.Document, src io.ReaderAt, size int64) *einvoice.Invoice {
	switch doc.Format {
	case docread.FormatXML:
		if size > einvoice.MaxSize {
			return nil
		}
		data := make([]byte, size)
		if _, err := src.ReadAt(data, 0); err != nil && err != io.EOF {
			return nil
		}
		return parseInvoice(data)
	case docread.FormatPDF:
		for _, standard := range []bool{true, false} {
			for _, a := range doc.Attachments {
				if a.Data == nil || einvoice.IsEInvoiceAttachment(a.Name) != standard ||
					!standard && !strings.EqualFold(path.Ext(a.Name), ".xml") {
					continue
				}
				if inv := parseInvoice(a.Data); inv != nil {
					return inv
				}
			}
		}
	}
	return nil
}

// parseInvoice reads data as an e-invoice; XML broken after its header
// still gives what it held.
func parseInvoice(data []byte) *einvoice.Invoice {
	inv, err := einvoice.Parse(data)
	if err != nil {
		return nil
	}
	return inv
}

// fieldsOf are the fields of an e-invoice as the store keeps them.
func fieldsOf(inv *einvoice.Invoice) *db.DocumentFields {
	return &db.DocumentFields{
		DocumentNumber: nonEmpty(inv.Number), IssueDate: nonEmpty(inv.IssueDate), DueDate: nonEmpty(inv.DueDate),
		Currency: nonEmpty(inv.Currency), NetAmount: nonEmpty(inv.NetAmount), TaxAmount: nonEmpty(inv.TaxAmount),
		TotalAmount: nonEmpty(inv.TotalAmount), IssuerName: nonEmpty(inv.SellerName), IssuerVATID: nonEmpty(inv.SellerVATID),
		IssuerIBAN: nonEmpty(inv.SellerIBAN), EInvoice: &db.EInvoice{Syntax: inv.Syntax, Profile: inv.Profile},
	}
}

// nonEmpty is s without format characters (see document.CleanField), or
// nil when that is empty. Every field read from a document passes here.
func nonEmpty(s string) *string {
	s = document.CleanField(s)
	if s == "" {
		return nil
	}
	return &s
}

// hasText says whether any page of doc has a letter or digit.
func hasText(doc *docread.Document) bool {
	for _, p := range doc.Pages {
		if p.HasText {
			return true
		}
	}
	return false
}

// allText says whether every page of doc has a letter or digit.
func allText(doc *docread.Document) bool {
	for _, p := range doc.Pages {
		if !p.HasText {
			return false
		}
	}
	return true
}
