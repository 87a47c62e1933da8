package exports

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"acctapi/datev"
	"acctapi/db"
	"acctapi/docfields"
	"acctapi/document"
	"acctapi/matching"
)

// Document is a document the export books: its rows, and its file as the
// ZIP holds it.
type Document struct {
	File *db.File
	GUID string
	// Name is the file's name in the ZIP.
	Name   string
	Issued bool
	Rows   []datev.Row
	// Booking is what the document's reading shows of it: its first row's
	// account, tax key and text, and who decided them.
	Booking db.Booking
	// find is the index of its counterparty among the plan's finds.
	find int
	// fingerprint sums up what the document was booked from.
	fingerprint string
}

// Booked is an export's plan: the documents it books, those it skips and
// why, and those changed since an earlier export.
type Booked struct {
	Documents []*Document
	Skipped   []db.SkippedFile
	Changed   []string
	finds     []db.CounterpartyFind
	parties   []*db.Counterparty
}

// The reasons a document is skipped, as the export lists them.
const (
	reasonUnread   = "the document has not been read yet"
	reasonNoDate   = "the document states no date: correct its issue date"
	reasonNoTotal  = "the document states no total: correct its total amount"
	reasonNoNumber = "the document states no number: correct its document number"
	reasonRates    = "its net, tax and total fit no German VAT rate (19 % or 7 %): correct them, or choose its booking"
	reasonSupplier = "the document names no supplier: correct its issuer"
	reasonTooMany  = "over the 5,000 documents one DATEV archive holds: export a shorter period"
)

// collectiveCustomer is the counterparty of an issued document whose
// customer no matched payment names.
var collectiveCustomer = db.CounterpartyFind{Role: db.RoleCustomer, Name: "Diverse Kunden",
	NameKey: hashKey("collective customer")}

func hashKey(s string) string {
	sum := sha256.Sum256([]byte("acctapi counterparty\x00" + s))
	return hex.EncodeToString(sum[:16])
}

// Plan books each document of the batch, or skips it with its reason (the
// client's identity says which documents it issued itself): the
// rows by VAT rate, the accounts from a person's choice, the firm's lesson
// for the supplier, or the chart, and the tax keys of the chart.
func Plan(batch *db.ExportBatch, id matching.Identity, lessons map[string]db.BookingLesson) *Booked {
	b := &Booked{Skipped: []db.SkippedFile{}, Changed: []string{}}
	s := batch.Settings
	chart := datev.Charts[*s.Chart]
	for _, d := range batch.Documents {
		f := d.File
		sum := fingerprint(f)
		if n := len(f.Exports); n > 0 && f.Exports[n-1].Fingerprint != sum {
			b.Changed = append(b.Changed, f.ID)
		}
		doc, reason := book(f, d.Payments, batch, id, chart, lessons)
		if reason != "" {
			b.Skipped = append(b.Skipped, db.SkippedFile{FileID: f.ID, Reason: reason})
			continue
		}
		if len(b.Documents) == datev.MaxDocuments {
			b.Skipped = append(b.Skipped, db.SkippedFile{FileID: f.ID, Reason: reasonTooMany})
			continue
		}
		doc.find, doc.fingerprint = len(b.finds), sum
		b.finds = append(b.finds, counterpartyOf(f, d.Payments, doc.Issued))
		b.Documents = append(b.Documents, doc)
	}
	return b
}

// book plans one document's rows; a reason when it cannot be booked.
func book(f *db.File, payments []db.ExportPayment, batch *db.ExportBatch, id matching.Identity, chart datev.Chart,
	lessons map[string]db.BookingLesson) (*Document, string) {
	if f.Analysis.Fields == nil {
		return nil, reasonUnread
	}
	fields := f.Analysis.Fields.Values
	if f.DocumentDateSource == nil {
		return nil, reasonNoDate
	}
	total, ok := cents(fields[document.TotalAmount])
	if !ok || total == 0 {
		return nil, reasonNoTotal
	}
	number := strings.TrimSpace(fields[document.DocumentNumber])
	if datev.Number(number) == "" {
		return nil, reasonNoNumber
	}
	if c := fields[document.Currency]; c != "" && c != "EUR" {
		return nil, fmt.Sprintf("the document is in %s: a foreign currency is exported once exchange rates are supported", c)
	}
	issued := directionOf(f, fields, id) == matching.Issued
	party := counterpartyOf(f, payments, issued)
	if !issued && len(party.Keys()) == 0 {
		return nil, reasonSupplier
	}
	// A credit note books the other way round, whether it states its
	// amounts positive or negative; an invoice with a negative total too.
	credit := *f.Kind == document.CreditNote || total < 0
	total = abs(total)
	net, netOK := cents(fields[document.NetAmount])
	tax, taxOK := cents(fields[document.TaxAmount])
	if taxOK && !netOK {
		// A till receipt states its tax and total, seldom its net.
		net, netOK = abs(total)-abs(tax), true
	}
	parts, ok := datev.Split(abs(net), abs(tax), total, netOK && taxOK)
	user := f.Booking
	if user != nil && user.Source != db.BookingUser {
		user = nil
	}
	if !ok {
		if user == nil {
			return nil, reasonRates
		}
		parts = []datev.Part{{Rate: 0, Gross: total}}
	}
	length := batch.Settings.AccountLength
	lesson, learned := db.BookingLesson{}, false
	if !issued {
		for _, k := range party.Keys() {
			if lesson, learned = lessons[k]; learned {
				break
			}
		}
	}
	text := strings.TrimSpace(party.Name + " " + number)
	d := &Document{File: f, GUID: datev.GUID(f.ID), Name: archiveName(datev.GUID(f.ID), f.Name), Issued: issued}
	for i, p := range parts {
		row := datev.Row{Amount: p.Gross, Credit: credit != issued, Date: f.DocumentDate, Number: number, Text: text, GUID: d.GUID}
		source := db.BookingRule
		var taxKey *string
		switch {
		case user != nil && user.Account != nil:
			row.Account, taxKey, source = datev.Account(*user.Account, length), user.TaxKey, db.BookingUser
			if user.Text != nil {
				row.Text = *user.Text
			}
		case learned:
			row.Account, source = datev.Account(lesson.Account, length), db.BookingLearned
			// A key of 19 % or 7 % follows this document's rate; another
			// (reverse charge, say) is the supplier's and carries over.
			if lesson.TaxKey != nil && !datev.RateKey(*lesson.TaxKey) {
				taxKey = lesson.TaxKey
			}
		default:
			row.Account = datev.Account(chart.DefaultAccount(issued, value(batch.Settings.DefaultExpenseAccount),
				value(batch.Settings.DefaultRevenueAccount)), length)
		}
		row.TaxKey = chart.TaxKey(p.Rate, issued, row.Account)
		if taxKey != nil && len(parts) == 1 && !chart.Automatic(row.Account) {
			row.TaxKey = *taxKey
		}
		d.Rows = append(d.Rows, row)
		if i == 0 {
			d.Booking = db.Booking{Account: &row.Account, TaxKey: &row.TaxKey, Text: &row.Text, Source: source}
		}
	}
	return d, ""
}

// counterpartyOf is who the document is with: the supplier that issued a
// received document (else the payee of its payment); for an issued one
// the payer of its payment, else the collective customer.
func counterpartyOf(f *db.File, payments []db.ExportPayment, issued bool) db.CounterpartyFind {
	fields := f.Analysis.Fields.Values
	if !issued {
		if f := find(db.RoleSupplier, fields[document.IssuerName], fields[document.IssuerVATID], fields[document.IssuerIBAN]); len(f.Keys()) > 0 {
			return f
		}
	}
	role := db.RoleSupplier
	if issued {
		role = db.RoleCustomer
	}
	for _, p := range payments {
		if f := find(role, value(p.Name), "", value(p.IBAN)); len(f.Keys()) > 0 {
			return f
		}
	}
	if issued {
		return collectiveCustomer
	}
	return db.CounterpartyFind{Role: db.RoleSupplier}
}

// find is a counterparty by its name, VAT id and IBAN, each keyed as the
// field corrections key a supplier; one known only by its VAT id or IBAN
// is named by it.
func find(role, name, vatID, iban string) db.CounterpartyFind {
	key := func(field, v string) string {
		if keys := docfields.SupplierKeys(map[string]string{field: v}); len(keys) > 0 {
			return keys[0]
		}
		return ""
	}
	f := db.CounterpartyFind{Role: role, Name: strings.TrimSpace(name), VATID: vatID, IBAN: iban,
		VATKey: key(document.IssuerVATID, vatID), NameKey: key(document.IssuerName, name), IBANKey: key(document.IssuerIBAN, iban)}
	if f.Name == "" {
		f.Name = cmp.Or(vatID, iban)
	}
	return f
}

// directionOf is the banking worker's decision where it has made one, else
// the same rule on the document's reading: received or issued.
func directionOf(f *db.File, fields map[string]string, id matching.Identity) string {
	if d := f.Payment.Direction; d != nil {
		return *d
	}
	return matching.DirectionOf(matching.Document{IssuerName: fields[document.IssuerName],
		IssuerVATID: fields[document.IssuerVATID], IssuerIBAN: fields[document.IssuerIBAN]}, id)
}

// Finds are the counterparties of the booked documents, in order, for the
// store to find or create and give accounts.
func (b *Booked) Finds() []db.CounterpartyFind { return b.finds }

// Settle fills each row's contra account with its counterparty's account
// as the store resolved them.
func (b *Booked) Settle(parties []*db.Counterparty, length int) {
	b.parties = parties
	for _, d := range b.Documents {
		contra := strconv.FormatInt(*parties[d.find].Account, 10)
		for i := range d.Rows {
			d.Rows[i].ContraAccount = contra
		}
		d.Booking.ContraAccount = &contra
	}
}

// Result is what the store records of the plan; the ZIP's size and hash
// are the caller's to add.
func (b *Booked) Result() db.ExportResult {
	r := db.ExportResult{DocumentCount: len(b.Documents), Skipped: b.Skipped, ChangedSinceExport: b.Changed}
	for _, d := range b.Documents {
		r.RowCount += len(d.Rows)
		r.Bookings = append(r.Bookings, db.FileBooking{FileID: d.File.ID, CounterpartyID: &b.parties[d.find].ID,
			Fingerprint: d.fingerprint, Booking: d.Booking})
	}
	return r
}

// fingerprint sums up what a document is booked from: its kind, date and
// fields and a person's booking, so that a correction made at any time
// after an export shows, and nothing else does.
func fingerprint(f *db.File) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", value(f.Kind), f.DocumentDate.Format(time.DateOnly))
	if f.Analysis.Fields != nil {
		for _, name := range document.FieldNames {
			fmt.Fprintf(h, "%s=%s\x00", name, f.Analysis.Fields.Values[name])
		}
	}
	if b := f.Booking; b != nil && b.Source == db.BookingUser {
		fmt.Fprintf(h, "%s\x00%s\x00%s", value(b.Account), value(b.TaxKey), value(b.Text))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// cents reads a decimal amount ("-12.5") in cents, rounded half away from
// zero; false when s is none.
func cents(s string) (int64, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok || s == "" {
		return 0, false
	}
	r.Mul(r, big.NewRat(100, 1))
	n, _ := new(big.Float).SetRat(r).Int64()
	rest := new(big.Rat).Sub(r, new(big.Rat).SetInt64(n))
	switch {
	case rest.Cmp(big.NewRat(1, 2)) >= 0:
		n++
	case rest.Cmp(big.NewRat(-1, 2)) <= 0:
		n--
	}
	return n, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func value(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
