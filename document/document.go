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

// FieldNames lists the ten fields in the order the API shows them.
var FieldNames = []string{DocumentNumber, IssueDate, DueDate, Currency, NetAmount, TaxAmount, TotalAmount,
	IssuerName, IssuerVATID, IssuerIBAN}

// IsField reports whether s is one of FieldNames.
func IsField(s string) bool { return slices.Contains(FieldNames, s) }
