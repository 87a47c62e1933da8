package analysis

import (
	"io"
	"log/slog"
	"strings"
	"time"

	"acctapi/bankimport"
	"acctapi/bankstatement"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/docread"
	"acctapi/document"
	"acctapi/einvoice"
)

// input is a document as the readers get it: what docread made of it, and
// its bytes.
type input struct {
	doc  *docread.Document
	src  io.ReaderAt
	size int64
}

// reader reads a document's fields one way.
type reader interface {
	// read returns what it found in the document, and false when the
	// document is not one it reads.
	read(in input) (reading, bool)
}

// readers are asked in this order, each document by every reader that
// reads it; the first decides (see fill). A bank statement and an
// e-invoice's XML state their values exactly; the text is read for every
// document but XML, and fills what an e-invoice leaves empty.
var readers = []reader{statementReader{}, eInvoiceReader{}, textReader{}}

// reading is what one reader found in a document. Its values are without
// format characters (see document.CleanField).
type reading struct {
	kind, language string
	fields         document.Fields
	// confidence says, for each field with a value, how likely it is
	// right, in [0, 1].
	confidence map[string]float64
	// source is where the values come from when not from the text:
	// db.TextFromEInvoice.
	source   string
	eInvoice *db.EInvoice
	// terms are the buyer and the discount for early payment it found.
	terms    db.PaymentTerms
	warnings []string
	// statements are the bank statement the file is, parsed once: the
	// import takes them from here.
	statements []bankstatement.Statement
	// whole says the reader read all there is: no later reader fills its
	// fields.
	whole bool
}

// fill takes from a later reader what r lacks: the language, and, unless r
// read the document whole, the fields r leaves empty, each with the later
// reader's confidence. A later reader never overrides a value r states.
func (r *reading) fill(later reading) {
	if r.language == "" {
		r.language = later.language
	}
	if r.whole {
		return
	}
	if r.terms.DiscountDueDate == "" && later.terms.DiscountDueDate != "" {
		r.terms.DiscountPercent, r.terms.DiscountAmount, r.terms.DiscountDueDate =
			later.terms.DiscountPercent, later.terms.DiscountAmount, later.terms.DiscountDueDate
	}
	for _, name := range document.FieldNames {
		if v, l := r.fields.Field(name), *later.fields.Field(name); *v == "" && l != "" {
			*v = l
			r.confidence[name] = later.confidence[name]
		}
	}
}

// resultOf turns what the readers read into what the store records: the
// first reading of the readers in their order, completed by the later
// ones, and the text the search reads. A PDF with no text at all and no
// e-invoice is skipped, noOCR saying why OCR did not read it ("" when it
// did, and found nothing). log gets why a statement is not imported.
func resultOf(doc *docread.Document, src io.ReaderAt, size int64, noOCR string, log *slog.Logger) db.AnalysisResult {
	for i := range doc.Pages {
		doc.Pages[i].Text = document.CleanText(doc.Pages[i].Text)
	}
	var read *reading
	for _, r := range readers {
		got, ok := r.read(input{doc, src, size})
		switch {
		case !ok:
		case read == nil:
			read = &got
		default:
			read.fill(got)
		}
	}
	if read == nil {
		read = &reading{confidence: map[string]float64{}}
	}
	if doc.Format == docread.FormatPDF && !hasText(doc) && read.source != db.TextFromEInvoice {
		if noOCR == "" {
			return skipped("the PDF has no text layer, and OCR found no text on its pages")
		}
		return skipped("the PDF has no text layer (a scan), whose pages are read with OCR, and " + noOCR)
	}
	text := &db.FileText{Text: doc.Text(), Pages: max(doc.PageCount, len(doc.Pages)), Source: db.TextFromPDF}
	result := db.AnalysisResult{Status: db.AnalysisDone, Source: &text.Source, Text: text,
		Kind: nonEmpty(read.kind), Language: nonEmpty(read.language), Confidence: read.confidence,
		Fields: &db.DocumentFields{Values: read.fields.Values(), EInvoice: read.eInvoice, Terms: termsOf(read.terms)}, Warnings: read.warnings}
	if read.source != "" {
		result.Source = &read.source
		if doc.Format == docread.FormatXML {
			text.Source = read.source
		}
	}
	if read.statements != nil {
		// A file whose statements cannot be imported (of two accounts,
		// say) is a bank statement all the same.
		var err error
		if result.Statement, err = bankimport.Of(read.statements); err != nil {
			log.Info("file not imported as a bank statement", "reason", err.Error())
		}
	}
	return result
}

// statementReader reads a bank statement (CAMT.053 or MT940), a plain XML
// or text file: its kind and its date are known exactly.
type statementReader struct{}

func (statementReader) read(in input) (reading, bool) {
	if in.doc.Format != docread.FormatXML && in.doc.Format != docread.FormatText || in.size > bankstatement.MaxSize {
		return reading{}, false
	}
	data := make([]byte, in.size)
	if _, err := in.src.ReadAt(data, 0); err != nil && err != io.EOF {
		return reading{}, false
	}
	if _, ok := bankstatement.Sniff(data); !ok {
		return reading{}, false
	}
	statements, err := bankstatement.Parse(data)
	if err != nil || len(statements) == 0 {
		return reading{}, false
	}
	last := statements[len(statements)-1]
	r := reading{kind: document.BankStatement, statements: statements, whole: true,
		fields: cleaned(document.Fields{IssueDate: last.To.Format(time.DateOnly), Currency: last.Currency})}
	r.confidence = certain(r.fields)
	return r, true
}

// eInvoiceReader reads an e-invoice's XML: the XML itself, or the one a
// PDF/A-3 carries. What it states is the invoice (confidence 1), but for
// the values a warning concerns (0).
type eInvoiceReader struct{}

func (eInvoiceReader) read(in input) (reading, bool) {
	inv := eInvoiceOf(in.doc, in.src, in.size)
	if inv == nil {
		return reading{}, false
	}
	r := reading{kind: inv.Kind, language: document.CleanField(strings.ToLower(inv.Language)),
		fields: cleaned(inv.Fields), source: db.TextFromEInvoice, eInvoice: &db.EInvoice{Syntax: inv.Syntax, Profile: inv.Profile},
		terms: db.PaymentTerms{BuyerName: inv.BuyerName, BuyerVATID: inv.BuyerVATID, BuyerIBAN: inv.BuyerIBAN,
			DiscountPercent: inv.DiscountPercent, DiscountAmount: inv.DiscountAmount, DiscountDueDate: inv.DiscountDueDate}}
	r.confidence = certain(r.fields)
	for _, w := range inv.Warnings {
		r.warnings = append(r.warnings, w.Message)
		for _, name := range w.Fields {
			if _, ok := r.confidence[name]; ok {
				r.confidence[name] = 0
			}
		}
	}
	return r, true
}

// textReader reads what a document's pages say; XML has no pages to read.
type textReader struct{}

func (textReader) read(in input) (reading, bool) {
	if in.doc.Format == docread.FormatXML {
		return reading{}, false
	}
	pages := make([]string, len(in.doc.Pages))
	for i, p := range in.doc.Pages {
		pages[i] = p.Text
	}
	read := docfields.ReadPages(pages)
	r := reading{kind: read.Kind, language: document.CleanField(read.Language), fields: cleaned(read.Fields),
		confidence: map[string]float64{}, terms: db.PaymentTerms{DiscountPercent: read.Discount.Percent, DiscountDueDate: read.Discount.Until}}
	for _, w := range read.Warnings {
		r.warnings = append(r.warnings, w.Message)
	}
	for name := range r.fields.Values() {
		// A value the reader gave no confidence is as likely wrong as
		// right.
		p, ok := read.Confidence[name]
		if !ok {
			p = 0.5
		}
		r.confidence[name] = min(max(p, 0), 1)
	}
	return r, true
}

// cleaned is f with each value without format characters (see
// document.CleanField): every field read from a document, its text's or
// its XML's, passes here.
func cleaned(f document.Fields) document.Fields {
	for _, name := range document.FieldNames {
		v := f.Field(name)
		*v = document.CleanField(*v)
	}
	return f
}

// termsOf is what the store keeps of a document's buyer and discount, each
// value without format characters; nil when it says nothing of them.
func termsOf(t db.PaymentTerms) *db.PaymentTerms {
	for _, v := range []*string{&t.BuyerName, &t.BuyerVATID, &t.BuyerIBAN, &t.DiscountPercent, &t.DiscountAmount, &t.DiscountDueDate} {
		*v = document.CleanField(*v)
	}
	if t == (db.PaymentTerms{}) {
		return nil
	}
	return &t
}

// certain is a confidence of 1 in each value of f.
func certain(f document.Fields) map[string]float64 {
	c := map[string]float64{}
	for name := range f.Values() {
		c[name] = 1
	}
	return c
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

// parseInvoice reads data as an e-invoice; XML broken after its header
// still gives what it held.
func parseInvoice(data []byte) *einvoice.Invoice {
	inv, err := einvoice.Parse(data)
	if err != nil {
		return nil
	}
	return inv
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
