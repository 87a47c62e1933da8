package einvoice

import (
	"encoding/xml"
	"strings"

	"acctapi/document"
)

// term is what the text of one element is, for the reader.
type term int

const (
	termNone term = iota
	termProfile
	termNumber
	termTypeCode
	termIssueDate
	termDueDate
	termDueDateFallback // UBL PaymentMeans/PaymentDueDate, when there is no DueDate
	termCurrency
	termNet
	termTax
	termTotal
	termSellerName
	termSellerNameFallback // UBL PartyName/Name, when there is no RegistrationName
	termSellerTaxID        // CII: a VAT id only with schemeID VA
	termSellerCompanyID    // UBL PartyTaxScheme/CompanyID, a VAT id only beside TaxScheme/ID VAT
	termSellerTaxScheme    // UBL PartyTaxScheme/TaxScheme/ID
	termIBAN
	termLanguage
	termBuyerName
	termBuyerTaxID     // CII: a VAT id only with schemeID VA
	termBuyerCompanyID // UBL PartyTaxScheme/CompanyID of the customer
	termBuyerIBAN      // the account a direct debit draws on
	termDiscountPercent
	termDiscountAmount
	termDiscountDays // CII BasisPeriodMeasure, in days with unitCode DAY
	termDiscountDate // the discount's last day
	termPaymentNote  // free text that may hold XRechnung's #SKONTO# line
)

// dialect is one syntax's paths, relative to the root and written with
// local names.
type dialect struct {
	syntax string
	// namespaces are the prefixes of the namespace URIs whose elements the
	// paths may match.
	namespaces []string
	terms      map[string]term
	// taxGroup is the UBL element that pairs a tax id with its scheme.
	taxGroup string
	// isoDates: UBL writes xsd:date; CII writes DateTimeString with a format.
	isoDates bool
}

var (
	ciiNamespaces = []string{"urn:un:unece:uncefact:data:standard:", "urn:ferd:CrossIndustryDocument:"}
	ublNamespaces = []string{"urn:oasis:names:specification:ubl:schema:xsd:"}
)

// cii builds a CII dialect: ZUGFeRD 1 differs from CII D16B in the names of
// the containers, not of the terms.
func cii(context, document, transaction, agreement, settlement, summation string) *dialect {
	seller := transaction + "/" + agreement + "/SellerTradeParty/"
	buyer := transaction + "/" + agreement + "/BuyerTradeParty/"
	settle := transaction + "/" + settlement + "/"
	sum := settle + summation + "/"
	discount := settle + "SpecifiedTradePaymentTerms/ApplicableTradePaymentDiscountTerms/"
	return &dialect{
		syntax:     SyntaxCII,
		namespaces: ciiNamespaces,
		terms: map[string]term{
			context + "/GuidelineSpecifiedDocumentContextParameter/ID": termProfile,
			document + "/ID":                           termNumber,
			document + "/TypeCode":                     termTypeCode,
			document + "/IssueDateTime/DateTimeString": termIssueDate,
			document + "/LanguageID":                   termLanguage,
			seller + "Name":                            termSellerName,
			seller + "SpecifiedTaxRegistration/ID":     termSellerTaxID,
			settle + "InvoiceCurrencyCode":             termCurrency,
			settle + "SpecifiedTradeSettlementPaymentMeans/PayeePartyCreditorFinancialAccount/IBANID": termIBAN,
			settle + "SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString":                      termDueDate,
			settle + "SpecifiedTradePaymentTerms/Description":                                         termPaymentNote,
			settle + "SpecifiedTradeSettlementPaymentMeans/PayerPartyDebtorFinancialAccount/IBANID":   termBuyerIBAN,
			buyer + "Name":                            termBuyerName,
			buyer + "SpecifiedTaxRegistration/ID":     termBuyerTaxID,
			discount + "CalculationPercent":           termDiscountPercent,
			discount + "ActualDiscountAmount":         termDiscountAmount,
			discount + "BasisPeriodMeasure":           termDiscountDays,
			discount + "BasisDateTime/DateTimeString": termDiscountDate,
			sum + "TaxBasisTotalAmount":               termNet,
			sum + "TaxTotalAmount":                    termTax,
			sum + "GrandTotalAmount":                  termTotal,
		},
	}
}

var (
	ciiInvoice = cii("ExchangedDocumentContext", "ExchangedDocument", "SupplyChainTradeTransaction",
		"ApplicableHeaderTradeAgreement", "ApplicableHeaderTradeSettlement", "SpecifiedTradeSettlementHeaderMonetarySummation")
	zugferd1 = cii("SpecifiedExchangedDocumentContext", "HeaderExchangedDocument", "SpecifiedSupplyChainTradeTransaction",
		"ApplicableSupplyChainTradeAgreement", "ApplicableSupplyChainTradeSettlement", "SpecifiedTradeSettlementMonetarySummation")
	ubl = &dialect{
		syntax:     SyntaxUBL,
		namespaces: ublNamespaces,
		isoDates:   true,
		taxGroup:   "AccountingSupplierParty/Party/PartyTaxScheme",
		terms: map[string]term{
			"CustomizationID":      termProfile,
			"ID":                   termNumber,
			"InvoiceTypeCode":      termTypeCode,
			"CreditNoteTypeCode":   termTypeCode,
			"IssueDate":            termIssueDate,
			"DueDate":              termDueDate,
			"DocumentCurrencyCode": termCurrency,
			"AccountingSupplierParty/Party/PartyLegalEntity/RegistrationName": termSellerName,
			"AccountingSupplierParty/Party/PartyName/Name":                    termSellerNameFallback,
			"AccountingSupplierParty/Party/PartyTaxScheme/CompanyID":          termSellerCompanyID,
			"AccountingSupplierParty/Party/PartyTaxScheme/TaxScheme/ID":       termSellerTaxScheme,
			"PaymentMeans/PayeeFinancialAccount/ID":                           termIBAN,
			"PaymentMeans/PaymentDueDate":                                     termDueDateFallback,
			"PaymentMeans/PaymentMandate/PayerFinancialAccount/ID":            termBuyerIBAN,
			"PaymentTerms/Note":                                               termPaymentNote,
			"PaymentTerms/SettlementDiscountPercent":                          termDiscountPercent,
			"PaymentTerms/SettlementPeriod/EndDate":                           termDiscountDate,
			"AccountingCustomerParty/Party/PartyLegalEntity/RegistrationName": termBuyerName,
			"AccountingCustomerParty/Party/PartyTaxScheme/CompanyID":          termBuyerCompanyID,
			"TaxTotal/TaxAmount":                                              termTax,
			"LegalMonetaryTotal/TaxExclusiveAmount":                           termNet,
			"LegalMonetaryTotal/TaxInclusiveAmount":                           termTotal,
		},
	}
)

// root names the dialect of a root element, or nil when it is not an
// e-invoice; credit is set for a UBL CreditNote.
func root(name xml.Name) (d *dialect, credit bool) {
	ns := name.Space
	switch name.Local {
	case "CrossIndustryInvoice":
		if strings.HasPrefix(ns, "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:") {
			return ciiInvoice, false
		}
	case "CrossIndustryDocument":
		if ns == "urn:ferd:CrossIndustryDocument:invoice:1p0" {
			return zugferd1, false
		}
	case "Invoice":
		if ns == "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" {
			return ubl, false
		}
	case "CreditNote":
		if ns == "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2" {
			return ubl, true
		}
	}
	return nil, false
}

// level is one open element.
type level struct {
	pathLen int  // the length of reader.path before this element
	foreign bool // in no namespace of the dialect: nothing below it matches
}

// amount is one tax total, kept until the invoice currency is known.
type amount struct{ value, currency string }

// reader follows the token stream of one document.
type reader struct {
	inv        *Invoice
	dialect    *dialect
	creditRoot bool

	stack   []level
	foreign int    // open foreign elements
	path    []byte // local names from below the root, joined by '/'

	// capturing is the term whose text is being read, at depth capDepth.
	capturing term
	capDepth  int
	capAttr   string // the attribute the term needs: schemeID, currencyID or format
	capText   []byte
	capLong   bool

	taxes        []amount
	ibans        []string // the payee accounts, as written
	unread       map[term]string
	nameFallback string
	dueFallback  string
	discountDays string // the discount period, from the issue date
	companyID    string // of the open UBL PartyTaxScheme
	taxScheme    string
}

// start opens an element; on the root, it refuses what is not an e-invoice.
func (r *reader) start(t xml.StartElement) error {
	if r.dialect == nil {
		d, credit := root(t.Name)
		if d == nil {
			if t.Name.Space == "" {
				return refuse("the XML's root element <%s> is not an e-invoice (CrossIndustryInvoice, CrossIndustryDocument, Invoice or CreditNote in their namespaces)", t.Name.Local)
			}
			return refuse("the XML's root element <%s> in namespace %q is not an e-invoice (CrossIndustryInvoice, CrossIndustryDocument, Invoice or CreditNote in their namespaces)", t.Name.Local, t.Name.Space)
		}
		r.dialect, r.creditRoot = d, credit
		r.inv.Syntax = d.syntax
		r.stack = append(r.stack, level{})
		return nil
	}
	l := level{pathLen: len(r.path), foreign: !r.ours(t.Name.Space)}
	r.stack = append(r.stack, l)
	if l.foreign {
		r.foreign++
		return nil
	}
	if len(r.path) > 0 {
		r.path = append(r.path, '/')
	}
	r.path = append(r.path, t.Name.Local...)
	if r.foreign > 0 || r.capturing != termNone {
		return nil
	}
	if r.inTaxGroup() {
		r.companyID, r.taxScheme = "", ""
		return nil
	}
	tm := r.dialect.terms[string(r.path)]
	if tm == termNone {
		return nil
	}
	r.capturing, r.capDepth = tm, len(r.stack)
	r.capText, r.capLong = r.capText[:0], false
	r.capAttr = ""
	switch tm {
	case termSellerTaxID, termBuyerTaxID:
		r.capAttr = attr(t, "schemeID")
	case termDiscountDays:
		r.capAttr = attr(t, "unitCode")
	case termDiscountDate:
		r.capAttr = attr(t, "format")
	case termTax:
		r.capAttr = attr(t, "currencyID")
	case termIssueDate, termDueDate:
		r.capAttr = attr(t, "format")
	}
	return nil
}

// end closes an element and reports whether it was the root.
func (r *reader) end() bool {
	depth := len(r.stack)
	if r.capturing != termNone && depth == r.capDepth {
		r.apply(r.capturing, r.capAttr, r.capText, r.capLong)
		r.capturing = termNone
	}
	l := r.stack[depth-1]
	r.stack = r.stack[:depth-1]
	if l.foreign {
		r.foreign--
		return false
	}
	if r.foreign == 0 && r.inTaxGroup() && r.inv.IssuerVATID == "" && strings.EqualFold(r.taxScheme, "VAT") {
		r.inv.IssuerVATID = r.companyID
	}
	r.path = r.path[:l.pathLen]
	return depth == 1
}

// text gathers the text of the element being read; text inside a child of
// it is not its text.
func (r *reader) text(t xml.CharData) {
	if r.capturing == termNone || len(r.stack) != r.capDepth {
		return
	}
	if len(r.capText)+len(t) > maxText {
		r.capLong = true
		return
	}
	r.capText = append(r.capText, t...)
}

// inTaxGroup reports whether the open element pairs a UBL tax id with its
// scheme.
func (r *reader) inTaxGroup() bool {
	return r.dialect.taxGroup != "" && string(r.path) == r.dialect.taxGroup
}

// ours reports whether an element in namespace ns may be one of the
// dialect's.
func (r *reader) ours(ns string) bool {
	for _, p := range r.dialect.namespaces {
		if strings.HasPrefix(ns, p) {
			return true
		}
	}
	return false
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// apply keeps the first valid value of a term.
func (r *reader) apply(tm term, attr string, raw []byte, long bool) {
	if long {
		return
	}
	s := string(raw)
	inv := r.inv
	set := func(field *string, v string) {
		if *field == "" {
			*field = v
		}
		if v == "" && strings.TrimSpace(s) != "" {
			r.noteUnread(tm, s)
		}
	}
	switch tm {
	case termProfile:
		set(&inv.Profile, strings.TrimSpace(s))
	case termNumber:
		set(&inv.DocumentNumber, strings.TrimSpace(s))
	case termTypeCode:
		set(&inv.TypeCode, typeCode(s))
	case termIssueDate:
		set(&inv.IssueDate, r.date(s, attr))
	case termDueDate:
		set(&inv.DueDate, r.date(s, attr))
	case termDueDateFallback:
		set(&r.dueFallback, r.date(s, attr))
	case termCurrency:
		set(&inv.Currency, currency(s))
	case termNet:
		set(&inv.NetAmount, decimal(s))
	case termTotal:
		set(&inv.TotalAmount, decimal(s))
	case termTax:
		if v := decimal(s); v != "" && len(r.taxes) < 8 {
			r.taxes = append(r.taxes, amount{v, strings.ToUpper(attr)})
		} else if v == "" {
			r.noteUnread(tm, s)
		}
	case termSellerName:
		set(&inv.IssuerName, name(s))
	case termSellerNameFallback:
		set(&r.nameFallback, name(s))
	case termSellerTaxID:
		if strings.EqualFold(attr, "VA") {
			set(&inv.IssuerVATID, written(s))
		}
	case termSellerCompanyID:
		set(&r.companyID, written(s))
	case termSellerTaxScheme:
		set(&r.taxScheme, strings.TrimSpace(s))
	case termIBAN:
		if v := written(s); v != "" && len(r.ibans) < 8 {
			r.ibans = append(r.ibans, v)
		}
	case termLanguage:
		set(&inv.Language, language(s))
	case termBuyerName:
		set(&inv.BuyerName, name(s))
	case termBuyerTaxID:
		if strings.EqualFold(attr, "VA") {
			set(&inv.BuyerVATID, written(s))
		}
	case termBuyerCompanyID:
		set(&inv.BuyerVATID, written(s))
	case termBuyerIBAN:
		set(&inv.BuyerIBAN, written(s))
	case termDiscountPercent:
		set(&inv.DiscountPercent, percent(s))
	case termDiscountAmount:
		set(&inv.DiscountAmount, decimal(s))
	case termDiscountDays:
		if attr == "" || strings.EqualFold(attr, "DAY") {
			set(&r.discountDays, days(s))
		}
	case termDiscountDate:
		set(&inv.DiscountDueDate, r.date(s, attr))
	case termPaymentNote:
		if d, p, ok := skontoLine(s); ok && r.discountDays == "" && inv.DiscountPercent == "" {
			r.discountDays, inv.DiscountPercent = d, p
		}
	}
}

func (r *reader) date(s, format string) string {
	if r.dialect.isoDates {
		return isoDate(s)
	}
	return ciiDate(s, format)
}

// finish settles what depends on the whole document: the fallbacks, the
// tax total in the invoice currency, the kind.
func (r *reader) finish() {
	inv := r.inv
	if inv.IssuerName == "" {
		inv.IssuerName = r.nameFallback
	}
	if inv.DueDate == "" {
		inv.DueDate = r.dueFallback
	}
	inv.TaxAmount = pickTax(r.taxes, inv.Currency)
	inv.Kind = kind(inv.TypeCode, r.creditRoot)
	inv.IssuerIBAN = r.payeeAccount()
	if inv.DiscountDueDate == "" {
		inv.DiscountDueDate = daysAfter(inv.IssueDate, r.discountDays)
	}
	if inv.DiscountPercent == "" && inv.DiscountAmount == "" {
		inv.DiscountDueDate = ""
	}
	inv.Warnings = r.warnings()
}

// noteUnread keeps the first text of a term that was no value of its type,
// for the warning.
func (r *reader) noteUnread(tm term, s string) {
	if r.unread == nil {
		r.unread = map[term]string{}
	}
	if _, ok := r.unread[tm]; !ok {
		r.unread[tm] = strings.TrimSpace(s)
	}
}

// payeeAccount is BT-84: the first account stated that is a valid IBAN, else
// the first stated.
func (r *reader) payeeAccount() string {
	for _, a := range r.ibans {
		if ibanShaped(a) && ibanChecks(a) {
			return a
		}
	}
	if len(r.ibans) > 0 {
		return r.ibans[0]
	}
	return ""
}

// pickTax chooses BT-110 among the tax totals: the one in the invoice
// currency; a lone total whose currency is not said; nothing when two
// totals leave it open.
func pickTax(taxes []amount, currency string) string {
	for _, t := range taxes {
		if currency != "" && t.currency == currency {
			return t.value
		}
	}
	if len(taxes) == 1 && (taxes[0].currency == "" || currency == "") {
		return taxes[0].value
	}
	return ""
}

// creditCodes are the UNTDID 1001 codes EN 16931 lists as credit notes.
var creditCodes = map[string]bool{
	"81": true, "83": true, "261": true, "262": true, "296": true, "308": true,
	"381": true, "396": true, "420": true, "458": true, "532": true,
}

// kind says whether the document is a credit note: a UBL CreditNote always
// is; otherwise its type code says, and a document without one is an
// invoice, as its root names it.
func kind(code string, creditRoot bool) string {
	if creditRoot || creditCodes[code] {
		return document.CreditNote
	}
	return document.Invoice
}
