// Package document is the vocabulary every part that reads or stores
// documents shares: the kinds a document can be and the names of the fields
// read from it. The names are the API's, so that a field is called one thing
// from the reader to the answer's JSON.
package document

import "slices"

// The kinds a document can be. Other means the document is none of the
// others; a document whose kind is not known has none.
const (
	Invoice       = "invoice"
	CreditNote    = "credit_note"
	Receipt       = "receipt"
	BankStatement = "bank_statement"
	Payslip       = "payslip"
	TaxNotice     = "tax_notice"
	Contract      = "contract"
	Other         = "other"
)

// Kinds lists every kind, in the order the API documents them.
var Kinds = []string{Invoice, CreditNote, Receipt, BankStatement, Payslip, TaxNotice, Contract, Other}

// IsKind reports whether s is one of Kinds.
func IsKind(s string) bool { return slices.Contains(Kinds, s) }

// The fields read from a document. Dates are YYYY-MM-DD; amounts decimal
// strings with a dot; Currency is ISO 4217; the VAT id and the IBAN are
// upper-case without spaces.
const (
	DocumentNumber = "documentNumber"
	IssueDate      = "issueDate"
	DueDate        = "dueDate"
	Currency       = "currency"
	NetAmount      = "netAmount"
	TaxAmount      = "taxAmount"
	TotalAmount    = "totalAmount"
	IssuerName     = "issuerName"
	IssuerVATID    = "issuerVatId"
	IssuerIBAN     = "issuerIban"
)

// The types of value a field holds.
const (
	TypeText     = "text"     // a number or a name, as written
	TypeDate     = "date"     // YYYY-MM-DD
	TypeCurrency = "currency" // ISO 4217
	TypeAmount   = "amount"   // a decimal with a dot
	TypeID       = "id"       // a VAT id or an IBAN, upper-case without spaces
)

// FieldSpec is what a field holds: its type and the most characters its
// value has.
type FieldSpec struct {
	Name string
	Type string
	Max  int
}

// FieldSpecs are the ten fields, in the order the API shows them.
var FieldSpecs = []FieldSpec{
	{DocumentNumber, TypeText, 200}, {IssueDate, TypeDate, 10}, {DueDate, TypeDate, 10},
	{Currency, TypeCurrency, 3}, {NetAmount, TypeAmount, 30}, {TaxAmount, TypeAmount, 30},
	{TotalAmount, TypeAmount, 30}, {IssuerName, TypeText, 500}, {IssuerVATID, TypeID, 40},
	{IssuerIBAN, TypeID, 40},
}

// FieldNames lists the names of FieldSpecs, in their order.
var FieldNames = func() []string {
	names := make([]string, len(FieldSpecs))
	for i, f := range FieldSpecs {
		names[i] = f.Name
	}
	return names
}()

// IsField reports whether s is one of FieldNames.
func IsField(s string) bool { return slices.Contains(FieldNames, s) }

// SpecOf is the spec of the field named name; false when there is none.
func SpecOf(name string) (FieldSpec, bool) {
	i := slices.Index(FieldNames, name)
	if i < 0 {
		return FieldSpec{}, false
	}
	return FieldSpecs[i], true
}

// Fields are the values read from a document, one for each of FieldNames,
// "" where the document does not say it: what every reader returns (the
// text's, the e-invoice's, the bank statement's). Their JSON is the API's.
type Fields struct {
	DocumentNumber string `json:"documentNumber"`
	IssueDate      string `json:"issueDate"`
	DueDate        string `json:"dueDate"`
	Currency       string `json:"currency"`
	NetAmount      string `json:"netAmount"`
	TaxAmount      string `json:"taxAmount"`
	TotalAmount    string `json:"totalAmount"`
	IssuerName     string `json:"issuerName"`
	IssuerVATID    string `json:"issuerVatId"`
	IssuerIBAN     string `json:"issuerIban"`
}

// Field is the named field's value in f, to read or set; nil for a name
// that is not one of FieldNames.
func (f *Fields) Field(name string) *string {
	switch name {
	case DocumentNumber:
		return &f.DocumentNumber
	case IssueDate:
		return &f.IssueDate
	case DueDate:
		return &f.DueDate
	case Currency:
		return &f.Currency
	case NetAmount:
		return &f.NetAmount
	case TaxAmount:
		return &f.TaxAmount
	case TotalAmount:
		return &f.TotalAmount
	case IssuerName:
		return &f.IssuerName
	case IssuerVATID:
		return &f.IssuerVATID
	case IssuerIBAN:
		return &f.IssuerIBAN
	}
	return nil
}

// Values are the fields of f with a value, by name.
func (f Fields) Values() map[string]string {
	values := map[string]string{}
	for _, name := range FieldNames {
		if v := *f.Field(name); v != "" {
			values[name] = v
		}
	}
	return values
}
