package analysis

import (
	"cmp"
	"io"
	"strings"
	"time"

	"acctapi/bankstatement"
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
	result.Confidence = confidenceOf(result.Fields, read.Confidence)
	if statement := statementOf(doc, src, size); statement != nil {
		result.Kind = nonEmpty(document.BankStatement)
		result.Fields = storedFields(map[string]string{
			document.IssueDate: statement.To.Format(time.DateOnly), document.Currency: statement.Currency})
		result.Confidence = map[string]float64{}
		for name := range result.Fields.Values {
			result.Confidence[name] = 1
		}
		return result
	}
	if invoice != nil {
		source := db.TextFromEInvoice
		result.Source = &source
		if doc.Format == docread.FormatXML {
			text.Source = source
		}
		result.Kind = &invoice.Kind
		result.Language = cmp.Or(nonEmpty(strings.ToLower(invoice.Language)), result.Language)
		xml := fieldsOf(invoice)
		result.Confidence = withGaps(xml, result.Fields, invoiceConfidence(invoice), result.Confidence)
		result.Fields = xml
		for _, w := range invoice.Warnings {
			result.Warnings = append(result.Warnings, w.Message)
		}
	}
	return result
}

// confidenceOf is the reader's confidence in each value of fields; a value
// it gave none for is as likely wrong as right.
func confidenceOf(fields *db.DocumentFields, read map[string]float64) map[string]float64 {
	c := map[string]float64{}
	for name := range fields.Values {
		p, ok := read[name]
		if !ok {
			p = 0.5
		}
		c[name] = min(max(p, 0), 1)
	}
	return c
}

// invoiceConfidence is an e-invoice's confidence: what it states is the
// invoice (1), but for the values a warning concerns (0).
func invoiceConfidence(inv *einvoice.Invoice) map[string]float64 {
	c := map[string]float64{}
	for name := range inv.Values() {
		c[name] = 1
	}
	for _, w := range inv.Warnings {
		for _, name := range w.Fields {
			if _, ok := c[name]; ok {
				c[name] = 0
			}
		}
	}
	return c
}

// textFieldsOf are the fields read from a document's text as the store
// keeps them.
func textFieldsOf(f docfields.Fields) *db.DocumentFields {
	return storedFields(map[string]string{
		document.DocumentNumber: f.DocumentNumber, document.IssueDate: f.IssueDate, document.DueDate: f.DueDate,
		document.Currency: f.Currency, document.NetAmount: f.NetAmount, document.TaxAmount: f.TaxAmount,
		document.TotalAmount: f.TotalAmount, document.IssuerName: f.IssuerName, document.IssuerVATID: f.IssuerVATID,
		document.IssuerIBAN: f.IssuerIBAN,
	})
}

// storedFields keeps the values read, each without format characters (see
// document.CleanField), and none that is empty then. Every field read from
// a document, its text's or its XML's, passes here.
func storedFields(read map[string]string) *db.DocumentFields {
	values := map[string]string{}
	for name, v := range read {
		if v := nonEmpty(v); v != nil {
			values[name] = *v
		}
	}
	return &db.DocumentFields{Values: values}
}

// withGaps fills the fields an e-invoice's XML leaves empty (a MINIMUM
// profile names no IBAN, say) from what its PDF's text says, each with its
// confidence, and returns the confidence of them all. What the XML says is
// the invoice: the text never overrides it.
func withGaps(xml, text *db.DocumentFields, xmlConfidence, textConfidence map[string]float64) map[string]float64 {
	for name, v := range text.Values {
		if _, ok := xml.Values[name]; !ok {
			xml.Values[name] = v
			xmlConfidence[name] = textConfidence[name]
		}
	}
	return xmlConfidence
}

// eInvoiceOf reads the e-invoice in doc: the XML itself, or the first
// attachment of a PDF that is one (the standard names first, then any
// other XML by its name, type or bytes). nil when there is none.
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
					!standard && !einvoice.IsXMLAttachment(a.Name, a.MIME, a.Data) {
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

// statementOf is the bank statement (CAMT.053 or MT940) a plain XML or
// text file holds, or nil when it holds none that parses: its kind and its
// date are known exactly, and the banking worker imports its entries.
func statementOf(doc *docread.Document, src io.ReaderAt, size int64) *bankstatement.Statement {
	if doc.Format != docread.FormatXML && doc.Format != docread.FormatText || size > bankstatement.MaxSize {
		return nil
	}
	data := make([]byte, size)
	if _, err := src.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil
	}
	if _, ok := bankstatement.Sniff(data); !ok {
		return nil
	}
	statements, err := bankstatement.Parse(data)
	if err != nil || len(statements) == 0 {
		return nil
	}
	return &statements[len(statements)-1]
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
	fields := storedFields(inv.Values())
	fields.EInvoice = &db.EInvoice{Syntax: inv.Syntax, Profile: inv.Profile}
	return fields
}

// nonEmpty is s without format characters (see document.CleanField), or
// nil when that is empty.
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
