// Package einvoice reads the header of an e-invoice (EN 16931) from its XML:
// the number, dates, currency, totals and the seller that acctapi records
// for a stored file. It owns the XML only: finding the XML inside a PDF/A-3
// is the PDF reader's job, and storing what was read is the database's.
//
// # Syntaxes
//
// The root element names the syntax, and its namespace must be the
// standard's own; anything else is not an e-invoice:
//
//   - CrossIndustryInvoice (urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:*):
//     ZUGFeRD 2, Factur-X and XRechnung in CII, every profile from MINIMUM
//     and BASIC-WL to EXTENDED.
//   - CrossIndustryDocument (urn:ferd:CrossIndustryDocument:invoice:1p0):
//     ZUGFeRD 1, whose paths differ (HeaderExchangedDocument,
//     ApplicableSupplyChainTradeSettlement, ...).
//   - Invoice and CreditNote (urn:oasis:names:specification:ubl:schema:xsd:*-2):
//     UBL 2.1, as XRechnung and PEPPOL BIS use it.
//
// Elements are matched on their local name inside the path of their parents,
// and only in the namespaces of the syntax (urn:un:unece:uncefact:data:standard:*
// and the ZUGFeRD 1 namespace for CII, urn:oasis:names:specification:ubl:schema:xsd:*
// for UBL), so that any prefix works (rsm/ram/udt, a default namespace,
// ns0/ns1) while an element of another vocabulary never passes for one of ours.
//
// # Terms read
//
//	term    Invoice field  CII (under the root)                                              UBL
//	-       Profile        ExchangedDocumentContext/GuidelineSpecifiedDocumentContextParameter/ID  CustomizationID
//	BT-1    DocumentNumber ExchangedDocument/ID                                              ID
//	BT-2    IssueDate      ExchangedDocument/IssueDateTime/DateTimeString                    IssueDate
//	BT-3    TypeCode       ExchangedDocument/TypeCode                                        InvoiceTypeCode, CreditNoteTypeCode
//	BT-5    Currency       …/ApplicableHeaderTradeSettlement/InvoiceCurrencyCode              DocumentCurrencyCode
//	BT-9    DueDate        …/SpecifiedTradePaymentTerms/DueDateDateTime/DateTimeString        DueDate, else PaymentMeans/PaymentDueDate
//	BT-27   IssuerName     …/SellerTradeParty/Name                                           AccountingSupplierParty/Party/PartyLegalEntity/RegistrationName, else PartyName/Name
//	BT-31   IssuerVATID    …/SellerTradeParty/SpecifiedTaxRegistration/ID[@schemeID='VA']    …/Party/PartyTaxScheme[TaxScheme/ID='VAT']/CompanyID
//	BT-84   IssuerIBAN     …/SpecifiedTradeSettlementPaymentMeans/PayeePartyCreditorFinancialAccount/IBANID  PaymentMeans/PayeeFinancialAccount/ID
//	BT-109  NetAmount      …/SpecifiedTradeSettlementHeaderMonetarySummation/TaxBasisTotalAmount  LegalMonetaryTotal/TaxExclusiveAmount
//	BT-110  TaxAmount      …/SpecifiedTradeSettlementHeaderMonetarySummation/TaxTotalAmount  TaxTotal/TaxAmount
//	BT-112  TotalAmount    …/SpecifiedTradeSettlementHeaderMonetarySummation/GrandTotalAmount  LegalMonetaryTotal/TaxInclusiveAmount
//	-       Language       ExchangedDocument/LanguageID                                      (none in UBL)
//
// In CII "…" is SupplyChainTradeTransaction/ApplicableHeaderTradeAgreement for
// the seller and SupplyChainTradeTransaction/ApplicableHeaderTradeSettlement
// for the rest. ZUGFeRD 1 reads the same terms at its own paths:
// SpecifiedExchangedDocumentContext, HeaderExchangedDocument,
// SpecifiedSupplyChainTradeTransaction/ApplicableSupplyChainTradeAgreement and
// …/ApplicableSupplyChainTradeSettlement, whose summation is
// SpecifiedTradeSettlementMonetarySummation.
//
// # Values
//
// An invoice is reported as it is written, and what cannot be right is
// flagged, never corrected or guessed at. A value of a typed term that is
// not of its type is dropped, since it cannot be shown as one, and a
// Warning says what was written: dates must be real days (CII format 102,
// YYYYMMDD; the month (610) and week (616) formats name no day; UBL's ISO
// dates may carry a zone), amounts decimals (a leading '+' and surrounding
// spaces are removed, the decimals kept as written), a currency three
// letters. Identifiers are kept as written, spaces removed and upper-cased,
// and flagged by a Warning when they cannot be right: a VAT id not of its
// country's shape, an account that is no IBAN or whose mod-97 check digits
// fail. BT-84 is the first account stated that is a valid IBAN, else the
// first stated. Net, tax and total that do not add up (BT-109 + BT-110 =
// BT-112, exactly) are flagged too. A type code must be 1 to 3 digits and a
// language an ISO 639-1 code. The first occurrence of a term wins, except
// the tax total, which is the one in the invoice currency when the document
// gives two (BT-110 and BT-111).
//
// # Broken documents
//
// XML that breaks before the root element, or whose root is not an e-invoice,
// is refused with an *Error. XML that breaks after the root was recognised is
// read for what it held up to the break: Parse returns those fields with
// Partial set and the Reason, so a truncated upload still gives its header.
//
// # Limits
//
// Parse takes at most MaxSize bytes (20 MiB, far above any real invoice
// header; an invoice with its attachments embedded in base64 rarely reaches
// a few MiB), elements nested at most MaxDepth deep and at most MaxTokens
// XML tokens; a document over any of them is refused. A DOCTYPE is refused
// (an e-invoice never has one), so no DTD, internal or external entity is
// ever read; only XML's five named entities and character references are
// expanded. Nothing after the end of the root element is read. The text of one element is kept up to 4 KiB.
// Documents are UTF-8 (with or without a byte order mark), US-ASCII or
// ISO-8859-1; UTF-16 and other encodings are refused. Memory stays a small
// multiple of the input.
//
// # Attachments
//
// IsEInvoiceAttachment names the standard names of the XML embedded in a
// PDF/A-3. A caller should still try Parse on any other .xml attachment:
// generators do not all use the standard names, and Parse refuses a document
// that is not an e-invoice at its root element, before reading further.
package einvoice
