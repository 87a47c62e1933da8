// Package docfields reads what a document's text says: its kind (invoice,
// credit note, receipt, bank statement, payslip, tax notice, contract or
// other), its language, and the fields a firm needs from it: number,
// issue and due dates, currency, net, tax and total amounts, and the
// issuer's name, VAT id and IBAN.
//
// The text may come from a PDF's text layer or from OCR, so reading
// order may be imperfect, columns interleaved or squeezed, and letters
// read as digits ("2O18") and back. The package takes text and returns
// values; it knows nothing of files, HTTP or SQL.
//
// # How it chooses
//
// Every line is read once for labels (German, English, French, Dutch,
// Italian and Spanish, matched on a folded spelling that survives OCR's
// confusions and lost spaces, and the marks OCR misreads beside them: "N?" or "N'" for "N°", a colon read
// as "!"), dates, amounts (a "§" that starts one is a 5), VAT ids and
// IBANs. A value takes its meaning from its label: the nearest one before
// it on its line, or the column header above it (across the rows of a
// table, or by order when OCR squeezed the columns), or, in text extracted
// without layout, its place in a run of values under a run of as many
// labels. Position only breaks ties: the first date of a page is often an
// order or birth date, so a delivery, order, birth, entry or due label
// keeps a date from being the issue date, and a reference ("zu Rechnung 5
// vom ...") keeps another document's date out.
//
// Each value's confidence (Result.Confidence) comes from what checks it:
// net + tax = total, an IBAN's mod-97, a VAT id's check digits. What
// cannot be right is said in Result.Warnings, in the words of package
// document that the e-invoice reader uses too: an IBAN that fails mod-97,
// a seller's VAT id not of its country's shape, a net and tax that do not
// add up to the total, an issue or due date under its label that is no day.
//
// Where a value can be checked, the reading that passes wins: net, tax and
// total are chosen together and net + tax = total outweighs any label;
// an IBAN that passes mod-97 wins (OCR's confusions, and a glyph read
// twice, are tried away by it; one that fails is kept only when labeled
// IBAN and none passes); VAT ids must have their country's shape, and
// check digits count where the country publishes them. A "Steuernummer" is never a VAT id, a customer,
// order or contract number never the document number, and the recipient's
// address window (after a sender line, a "Rechnungsempfänger" or "Bill
// to", or a "Herrn") never holds the issuer's name, VAT id or IBAN.
//
// The kind comes from the words heading the first page ("Rechnung",
// "Gutschrift", "Kontoauszug") weighed far above words in the body, and
// from the shape of a till receipt. A Gutschrift issued in the
// self-billing procedure is an invoice; one that corrects an invoice is a
// credit note.
//
// What each field means beyond an invoice: a receipt's date and total are
// its sale's; a bank statement is dated by its statement date or the end
// of its period, carries no total, and its IBAN is the account's; a
// payslip is dated by its date or the last day of its month, its total is
// the amount paid out, and it names no IBAN (the one printed is the
// employee's); a tax notice's total is what is to be paid.
//
// Input is bounded: at most 1 MiB of text, 6,000 lines and 2,000 bytes a
// line are read, of which the first 1,200 and the last 400 lines in
// detail; every pattern is a linear-time Go regexp or a fixed phrase
// search.
package docfields
