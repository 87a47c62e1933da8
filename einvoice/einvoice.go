package einvoice

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"acctapi/document"
)

// The limits of one document; see the package documentation.
const (
	// MaxSize is the largest document Parse reads, in bytes.
	MaxSize = 20 << 20
	// MaxDepth is how deep elements may nest; real invoices stay below 20.
	MaxDepth = 100
	// MaxTokens is how many XML tokens (tags, text runs, comments) Parse
	// reads before it gives up.
	MaxTokens = 4 << 20
	// maxText bounds the text kept for one element: no header term is
	// longer, and a longer one is not the term.
	maxText = 4 << 10
)

// The values of Invoice.Syntax.
const (
	SyntaxCII = "CII"
	SyntaxUBL = "UBL"
)

// Invoice holds the EN 16931 header terms acctapi records. An empty field
// means the document does not say it, or says something that is no value of
// the term's type (then a Warning says what). Identifiers are as written.
type Invoice struct {
	Syntax   string // SyntaxCII (ZUGFeRD 1 and 2, Factur-X, XRechnung CII) or SyntaxUBL
	Profile  string // the guideline id: CII GuidelineSpecifiedDocumentContextParameter/ID, UBL CustomizationID
	TypeCode string // BT-3, the UNTDID 1001 code: 380 invoice, 381 credit note, 384 corrected, 389 self-billed...
	Kind     string // document.Invoice or document.CreditNote, from the root and the type code

	// Fields are the header terms by the fields of package document:
	// DocumentNumber BT-1, IssueDate BT-2 and DueDate BT-9 (YYYY-MM-DD),
	// Currency BT-5 (ISO 4217), NetAmount BT-109 (the total without VAT),
	// TaxAmount BT-110 (the VAT total in the invoice's currency),
	// TotalAmount BT-112, and the seller's IssuerName BT-27, IssuerVATID
	// BT-31 and IssuerIBAN BT-84 (the first valid IBAN, else the first
	// stated), the two as written, upper-case, without spaces. Amounts are
	// decimal strings with a dot and the document's decimals ("1234.50").
	document.Fields
	Language string // the document's ISO 639-1 language, when it names one

	BuyerName  string // BT-44
	BuyerVATID string // BT-48 as written, upper-case, no spaces
	BuyerIBAN  string // BT-91, the account a direct debit draws on

	// The discount for early payment (Skonto): DiscountPercent of the
	// total, or DiscountAmount, when paid by DiscountDueDate (YYYY-MM-DD).
	// CII states it in ApplicableTradePaymentDiscountTerms, UBL in
	// PaymentTerms (SettlementDiscountPercent, SettlementPeriod), and an
	// XRechnung in the payment terms' text as "#SKONTO#TAGE=14#PROZENT=2.00#";
	// a period in days runs from the issue date. DiscountDueDate is "" when
	// no discount is stated.
	DiscountPercent string
	DiscountAmount  string
	DiscountDueDate string

	// Warnings say what the invoice states that cannot be right: an IBAN
	// whose check digits fail, a VAT id of the wrong shape, net and tax that
	// do not add up to the total, a date or amount that is none.
	Warnings []Warning

	// Partial is set when the XML broke after the root element was
	// recognised: the fields are those read before the break, and Reason
	// says what broke.
	Partial bool
	Reason  string
}

// Warning is what an invoice states that cannot be right, in the words
// every reader shares.
type Warning = document.Warning

// Error is why a document was refused: it is not XML, not an e-invoice, or
// over a limit. Reason is plain English, fit to show a person.
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "einvoice: " + e.Reason }

func refuse(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// attachmentNames are the names the standards give the XML in a PDF/A-3.
var attachmentNames = []string{
	"factur-x.xml",        // Factur-X, ZUGFeRD 2.1 and later
	"zugferd-invoice.xml", // ZUGFeRD 2.0, and ZUGFeRD 1.0's ZUGFeRD-invoice.xml
	"xrechnung.xml",       // XRechnung in a ZUGFeRD PDF
}

// IsEInvoiceAttachment reports whether name (a file name, or a path with
// '/' or '\' separators) is a standard name of e-invoice XML embedded in a
// PDF: factur-x.xml, zugferd-invoice.xml, ZUGFeRD-invoice.xml or
// xrechnung.xml, in any case. Other .xml attachments may hold an e-invoice
// too (IsXMLAttachment): try Parse on them after these, since it refuses a document that is
// not one at its root element.
func IsEInvoiceAttachment(name string) bool {
	base := strings.TrimSpace(path.Base(strings.ReplaceAll(name, `\`, "/")))
	for _, n := range attachmentNames {
		if strings.EqualFold(base, n) {
			return true
		}
	}
	return false
}

// IsXMLAttachment reports whether a file embedded in a PDF may be XML and
// so hold an e-invoice under a name no standard gives it: its name ends in
// .xml in any case, its declared type is XML, or its bytes open with an XML
// declaration.
func IsXMLAttachment(name, mimeType string, data []byte) bool {
	if strings.EqualFold(path.Ext(strings.TrimSpace(name)), ".xml") {
		return true
	}
	if t := strings.ToLower(mimeType); t == "text/xml" || t == "application/xml" || strings.HasSuffix(t, "+xml") {
		return true
	}
	data = bytes.TrimLeft(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}), " \t\r\n")
	return bytes.HasPrefix(data, []byte("<?xml"))
}

// Parse reads the header of the e-invoice in data. It returns an *Error when
// data is not XML, not an e-invoice, or over a limit. XML that breaks after
// the root element was recognised gives the fields read before the break,
// with Partial and Reason set.
func Parse(data []byte) (*Invoice, error) {
	return parse(data, MaxTokens)
}

// parse is Parse with a token limit that tests can lower.
func parse(data []byte, maxTokens int) (*Invoice, error) {
	if len(data) > MaxSize {
		return nil, refuse("the file is %d bytes, over the %d bytes an e-invoice may have", len(data), MaxSize)
	}
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return nil, refuse("the XML is in UTF-16, which is not read; e-invoices are UTF-8")
	}
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})

	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = charsetReader

	r := reader{inv: &Invoice{}}
	for tokens := 0; ; tokens++ {
		if tokens == maxTokens {
			return nil, refuse("the XML has more than %d tokens", maxTokens)
		}
		tok, err := d.Token()
		if err != nil {
			return r.broken(err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, refuse("the XML has a DOCTYPE or other declaration, which an e-invoice never has")
		case xml.StartElement:
			if len(r.stack) == MaxDepth {
				return nil, refuse("the XML nests elements more than %d deep", MaxDepth)
			}
			if err := r.start(t); err != nil {
				return nil, err
			}
		case xml.EndElement:
			if r.end() {
				r.finish()
				return r.inv, nil
			}
		case xml.CharData:
			r.text(t)
		}
	}
}

// broken decides what a decoding error means: a refusal before the root
// element was recognised, a partial read after.
func (r *reader) broken(err error) (*Invoice, error) {
	var syntax *xml.SyntaxError
	isSyntax := errors.As(err, &syntax)
	cut := isSyntax && syntax.Msg == "unexpected EOF"
	if r.dialect == nil {
		switch {
		case errors.Is(err, io.EOF):
			return nil, refuse("the file holds no XML element")
		case cut:
			return nil, refuse("the XML ends before its root element")
		case isSyntax:
			return nil, refuse("the XML is not well-formed at line %d: %s", syntax.Line, syntax.Msg)
		}
		return nil, refuse("the XML cannot be read: %v", err)
	}
	r.finish()
	r.inv.Partial = true
	switch {
	case errors.Is(err, io.EOF) || cut:
		r.inv.Reason = "the XML ends before its root element is closed"
	case isSyntax:
		r.inv.Reason = fmt.Sprintf("the XML is not well-formed at line %d: %s", syntax.Line, syntax.Msg)
	default:
		r.inv.Reason = "the XML cannot be read: " + err.Error()
	}
	return r.inv, nil
}

// charsetReader lets the decoder read the single-byte encodings that old
// generators declare; Go reads UTF-8 itself.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		// The input is bounded by MaxSize, and the decoder reads it all.
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+len(b)/8)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("the encoding %q is not read; e-invoices are UTF-8", label)
}
