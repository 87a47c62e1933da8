package analysis

import (
	"io"
	"path"
	"strings"

	"acctapi/db"
	"acctapi/docread"
	"acctapi/einvoice"
)

// resultOf turns what the reader read into what the store records: an
// e-invoice's fields from its XML (a plain XML upload, or the XML a PDF/A-3
// carries), and the text the search reads.
func resultOf(doc *docread.Document, src io.ReaderAt, size int64) db.AnalysisResult {
	invoice := eInvoiceOf(doc, src, size)
	if doc.Format == docread.FormatPDF && !hasText(doc) && invoice == nil {
		return skipped("the PDF has no text layer (a scan); its pages need OCR, which this server does not run")
	}
	text := &db.FileText{Text: doc.Text(), Pages: max(doc.PageCount, len(doc.Pages)), Source: db.TextFromPDF}
	result := db.AnalysisResult{Status: db.AnalysisDone, Source: &text.Source, Text: text}
	if invoice != nil {
		source := db.TextFromEInvoice
		result.Source = &source
		if doc.Format == docread.FormatXML {
			text.Source = source
		}
		result.Kind = &invoice.Kind
		result.Language = nonEmpty(strings.ToLower(invoice.Language))
		result.Fields = fieldsOf(invoice)
	}
	return result
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

// nonEmpty is s, or nil when it is empty.
func nonEmpty(s string) *string {
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
