package bankstatement

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// camtNamespace is the prefix of the namespaces of camt.053.001.02 to .13.
const camtNamespace = "urn:iso:std:iso:20022:tech:xsd:camt.053.001."

// maxText bounds the text kept for one element; no field read is longer.
const maxText = 4 << 10

// camtEntry is one Ntry as read, before it becomes entries.
type camtEntry struct {
	amount              Amount
	hasAmount           bool
	currency, indicator string
	status              string
	booking, value      time.Time
	bankRef, info       string
	txs                 []camtTx
}

// camtTx is one TxDtls.
type camtTx struct {
	amount              Amount
	hasAmount           bool
	currency, indicator string
	bankRef, endToEnd   string
	creditor, debtor    string
	// ultCreditor and ultDebtor name the parties on whose behalf they
	// paid or were paid, used where Cdtr or Dbtr has no name.
	ultCreditor, ultDebtor string
	creditorIBAN           string
	debtorIBAN             string
	remittance             []string
	info                   string
}

// camtBalance is one Bal as read.
type camtBalance struct {
	code      string
	amount    Amount
	hasAmount bool
	indicator string
	date      time.Time
}

// camtReader follows the token stream of one CAMT.053 document. The
// element names are kept as a path of local names; each of Stmt, Bal, Ntry
// and TxDtls marks where the paths relative to it begin.
type camtReader struct {
	path  []byte
	stack []int // len(path) before each open element

	stmt, bal, ntry, tx int // depth of the open element of that name, 0 if none

	text    []byte
	long    bool
	attrCcy string

	sts        []Statement
	st         *Statement
	opening    *Balance
	prcd       *Balance
	b          camtBalance
	e          camtEntry
	entryNo    int
	total      int
	maxEntries int
	// ccy is the statement's currency: its account's, else its first
	// balance's or entry's; ccyFrom says which.
	ccy, ccyFrom string
	// from and to are FrToDt as written: its date-times are placed in the
	// bank's day once the account is known.
	from, to string
}

func parseCAMT(data []byte, maxEntries int) ([]Statement, error) {
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return nil, refuse("the XML is in UTF-16, which is not read; statements are UTF-8")
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	d.CharsetReader = charsetReader
	r := camtReader{maxEntries: maxEntries}
	// RawToken leaves the names' prefixes as written and the pairing of
	// tags to us, and allocates far less than Token: the paths are of local
	// names, and only the root's namespace is looked at.
	for {
		tok, err := d.RawToken()
		if err != nil {
			return nil, r.broken(err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, refuse("the XML has a DOCTYPE or other declaration, which a statement never has")
		case xml.StartElement:
			if len(r.stack) == MaxDepth {
				return nil, refuse("the XML nests elements more than %d deep", MaxDepth)
			}
			if len(r.stack) == 0 {
				t.Name.Space = namespaceOf(t)
			}
			if err := r.start(t); err != nil {
				return nil, err
			}
		case xml.EndElement:
			if !r.closes(t.Name.Local) {
				return nil, refuse("the XML is not well-formed: </%s> closes no open element of that name", truncate(t.Name.Local, 40))
			}
			done, err := r.end()
			if err != nil {
				return nil, err
			}
			if done {
				if len(r.sts) == 0 {
					return nil, refuse("the CAMT.053 document holds no statement (Stmt)")
				}
				return r.sts, nil
			}
		case xml.CharData:
			if len(r.text)+len(t) > maxText {
				r.long = true
			} else {
				r.text = append(r.text, t...)
			}
		}
	}
}

// namespaceOf gives the namespace of the root element from its own
// declarations.
func namespaceOf(t xml.StartElement) string {
	for _, a := range t.Attr {
		if t.Name.Space == "" && a.Name.Space == "" && a.Name.Local == "xmlns" ||
			t.Name.Space != "" && a.Name.Space == "xmlns" && a.Name.Local == t.Name.Space {
			return a.Value
		}
	}
	return ""
}

// closes reports whether an end tag of local name closes the innermost open
// element.
func (r *camtReader) closes(local string) bool {
	n := len(r.stack)
	if n == 0 {
		return false
	}
	start := r.stack[n-1]
	if n > 1 {
		start++ // past the '/'
	}
	return string(r.path[start:]) == local
}

func (r *camtReader) broken(err error) error {
	var syntax *xml.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		if len(r.stack) == 0 {
			return refuse("the file holds no XML element")
		}
		return refuse("the XML ends before its root element is closed")
	case errors.As(err, &syntax):
		if syntax.Msg == "unexpected EOF" {
			return refuse("the XML ends before its root element is closed")
		}
		return refuse("the XML is not well-formed at line %d: %s", syntax.Line, syntax.Msg)
	}
	return refuse("the XML cannot be read: %v", err)
}

func (r *camtReader) start(t xml.StartElement) error {
	depth := len(r.stack) + 1
	if depth == 1 {
		ns := t.Name.Space
		if t.Name.Local != "Document" || !strings.HasPrefix(ns, camtNamespace) {
			if i := strings.Index(ns, ":xsd:camt."); i >= 0 {
				return refuse("the XML is an ISO 20022 %s message, not a CAMT.053 bank statement", ns[i+5:])
			}
			return refuse("the XML's root element <%s> is not a CAMT.053 statement (Document in namespace %s*)", t.Name.Local, camtNamespace)
		}
	}
	r.stack = append(r.stack, len(r.path))
	if len(r.path) > 0 {
		r.path = append(r.path, '/')
	}
	r.path = append(r.path, t.Name.Local...)
	r.text, r.long = r.text[:0], false
	r.attrCcy = ""
	switch {
	case depth == 3 && string(r.path) == "Document/BkToCstmrStmt/Stmt":
		r.stmt = depth
		r.sts = append(r.sts, Statement{Format: FormatCAMT053})
		r.st = &r.sts[len(r.sts)-1]
		r.opening, r.prcd = nil, nil
		r.entryNo = 0
		r.ccy, r.ccyFrom, r.from, r.to = "", "", "", ""
	case r.stmt > 0 && depth == r.stmt+1 && t.Name.Local == "Bal":
		r.bal = depth
		r.b = camtBalance{}
	case r.stmt > 0 && depth == r.stmt+1 && t.Name.Local == "Ntry":
		r.ntry = depth
		r.e = camtEntry{}
		r.entryNo++
	case r.ntry > 0 && depth == r.ntry+2 && t.Name.Local == "TxDtls":
		r.tx = depth
		r.e.txs = append(r.e.txs, camtTx{})
	case t.Name.Local == "Amt":
		for _, a := range t.Attr {
			if a.Name.Local == "Ccy" {
				r.attrCcy = strings.ToUpper(strings.TrimSpace(a.Value))
			}
		}
	}
	return nil
}

// rel is the path of the open element below the element at depth base.
func (r *camtReader) rel(base int) string {
	if base >= len(r.stack) {
		return ""
	}
	return string(r.path[r.stack[base]+1:])
}

// end closes an element and reports whether it was the root.
func (r *camtReader) end() (bool, error) {
	depth := len(r.stack)
	if !r.long && len(r.text) > 0 {
		if err := r.leaf(depth); err != nil {
			return false, err
		}
	}
	r.text = r.text[:0]
	switch depth {
	case r.tx:
		r.tx = 0
	case r.ntry:
		r.ntry = 0
		if err := r.flushEntry(); err != nil {
			return false, err
		}
	case r.bal:
		r.bal = 0
		r.flushBalance()
	case r.stmt:
		r.stmt = 0
		if err := r.flushStatement(); err != nil {
			return false, err
		}
	}
	r.path = r.path[:r.stack[depth-1]]
	r.stack = r.stack[:depth-1]
	return depth == 1, nil
}

// leaf files the text of the element closing at depth.
func (r *camtReader) leaf(depth int) error {
	s := strings.TrimSpace(string(r.text))
	if s == "" {
		return nil
	}
	switch {
	case r.tx > 0:
		return r.txLeaf(r.rel(r.tx), s)
	case r.ntry > 0:
		return r.entryLeaf(r.rel(r.ntry), s)
	case r.bal > 0:
		return r.balanceLeaf(r.rel(r.bal), s)
	case r.stmt > 0:
		return r.statementLeaf(r.rel(r.stmt), s)
	}
	return nil
}

func (r *camtReader) statementLeaf(p, s string) error {
	st := r.st
	var err error
	switch p {
	case "Id":
		st.ID = s
	case "FrToDt/FrDtTm":
		r.from = s
	case "FrToDt/ToDtTm":
		r.to = s
	case "Acct/Id/IBAN":
		st.Account.IBAN = compact(s)
	case "Acct/Id/Othr/Id":
		// Some banks give the IBAN as another kind of id.
		if iban := validIBAN(s); iban != "" {
			st.Account.IBAN = iban
		} else {
			st.Account.Number = s
		}
	case "Acct/Ccy":
		st.Account.Currency = strings.ToUpper(s)
		r.ccy, r.ccyFrom = st.Account.Currency, "its account (Acct/Ccy)"
	case "Acct/Ownr/Nm":
		st.Account.OwnerName = clean(s, MaxName)
	case "Acct/Svcr/FinInstnId/BIC", "Acct/Svcr/FinInstnId/BICFI":
		st.Account.BIC = compact(s)
	}
	return err
}

func (r *camtReader) balanceLeaf(p, s string) error {
	var err error
	switch p {
	case "Tp/CdOrPrtry/Cd":
		r.b.code = strings.ToUpper(s)
	case "Amt":
		r.b.amount, err = r.amount(s, "a balance")
		r.b.hasAmount = err == nil
		if err == nil {
			err = r.currency(r.attrCcy, "a balance")
		}
	case "CdtDbtInd":
		r.b.indicator = s
	case "Dt/Dt", "Dt/DtTm":
		r.b.date, err = r.date(s, "a balance's date")
	}
	return err
}

func (r *camtReader) entryLeaf(p, s string) error {
	e := &r.e
	var err error
	switch p {
	case "Amt":
		e.amount, err = r.amount(s, "entry %d")
		e.hasAmount, e.currency = err == nil, r.attrCcy
		if err == nil {
			err = r.currency(r.attrCcy, "entry %d")
		}
	case "CdtDbtInd":
		e.indicator = s
	case "Sts", "Sts/Cd":
		e.status = strings.ToUpper(s)
	case "BookgDt/Dt", "BookgDt/DtTm":
		e.booking, err = r.date(s, "the booking date of entry %d")
	case "ValDt/Dt", "ValDt/DtTm":
		e.value, err = r.date(s, "the value date of entry %d")
	case "AcctSvcrRef":
		e.bankRef = s
	case "AddtlNtryInf":
		e.info = s
	}
	return err
}

func (r *camtReader) txLeaf(p, s string) error {
	t := &r.e.txs[len(r.e.txs)-1]
	var err error
	switch p {
	case "Amt", "AmtDtls/TxAmt/Amt":
		if !t.hasAmount {
			t.amount, err = r.amount(s, "a transaction of entry %d")
			t.hasAmount, t.currency = err == nil, r.attrCcy
		}
	case "CdtDbtInd":
		t.indicator = s
	case "Refs/AcctSvcrRef":
		t.bankRef = s
	case "Refs/EndToEndId":
		if !strings.EqualFold(s, "NOTPROVIDED") {
			t.endToEnd = s
		}
	case "RltdPties/Cdtr/Nm", "RltdPties/Cdtr/Pty/Nm":
		t.creditor = s
	case "RltdPties/Dbtr/Nm", "RltdPties/Dbtr/Pty/Nm":
		t.debtor = s
	case "RltdPties/UltmtCdtr/Nm", "RltdPties/UltmtCdtr/Pty/Nm":
		t.ultCreditor = s
	case "RltdPties/UltmtDbtr/Nm", "RltdPties/UltmtDbtr/Pty/Nm":
		t.ultDebtor = s
	case "RltdPties/CdtrAcct/Id/IBAN":
		t.creditorIBAN = s
	case "RltdPties/DbtrAcct/Id/IBAN":
		t.debtorIBAN = s
	case "RmtInf/Ustrd", "RmtInf/Strd/CdtrRefInf/Ref":
		if len(t.remittance) < 16 {
			t.remittance = append(t.remittance, s)
		}
	case "AddtlTxInf":
		t.info = s
	}
	return err
}

// amount reads a CAMT amount; what names it in the refusal, with the
// entry's number in place of a %d.
func (r *camtReader) amount(s, what string) (Amount, error) {
	a, ok := parseDecimal(s, '.')
	if !ok || a < 0 {
		return 0, refuse("the amount of %s in statement %q is not an amount: %q", r.name(what), r.st.ID, truncate(s, 40))
	}
	return a, nil
}

// currency checks that an amount's currency is the statement's: one
// currency in all its balances and entries, and its account's. what is as
// for amount.
func (r *camtReader) currency(ccy, what string) error {
	switch {
	case ccy == "":
		return nil
	case r.ccy == "":
		r.ccy, r.ccyFrom = ccy, r.name(what)
	case ccy != r.ccy:
		return refuse("statement %q mixes currencies: %s is in %s, but %s is in %s", r.st.ID, r.name(what), ccy, r.ccyFrom, r.ccy)
	}
	return nil
}

// date reads a CAMT date or date-time as the bank's day: the day written,
// and for a time in UTC ("Z") the day it is where the account is kept
// (bankDay); what is as for amount.
func (r *camtReader) date(s, what string) (time.Time, error) {
	if len(s) >= 10 {
		if t, err := time.Parse(time.DateOnly, s[:10]); err == nil && (len(s) == 10 || s[10] == 'T' || s[10] == '+' || s[10] == 'Z' || s[10] == '-') {
			if utc, err := time.Parse(time.RFC3339Nano, s); err == nil && strings.HasSuffix(s, "Z") {
				return bankDay(utc, r.st.Account.IBAN), nil
			}
			return t, nil
		}
	}
	return time.Time{}, refuse("%s in statement %q is not a date: %q", r.name(what), r.st.ID, truncate(s, 40))
}

func (r *camtReader) name(what string) string {
	if strings.Contains(what, "%d") {
		return fmt.Sprintf(what, r.entryNo)
	}
	return what
}

// signed gives an amount the sign of its credit/debit indicator.
func signed(a Amount, indicator string) (Amount, bool) {
	switch indicator {
	case "CRDT":
		return a, true
	case "DBIT":
		return -a, true
	}
	return 0, false
}

func (r *camtReader) flushBalance() {
	b := r.b
	v, ok := signed(b.amount, b.indicator)
	if !b.hasAmount || !ok {
		return
	}
	bal := &Balance{Amount: v, Date: b.date}
	switch b.code {
	case "OPBD":
		r.opening = bal
	case "PRCD":
		r.prcd = bal
	case "CLBD":
		r.st.Closing = bal
	default:
		return
	}
}

// flushEntry turns the Ntry just read into entries: one per TxDtls when
// there are several whose amounts add up to the Ntry's, else one.
func (r *camtReader) flushEntry() error {
	e := &r.e
	if e.status != "" && e.status != "BOOK" {
		// Pending and informational entries are not booked: the balances
		// leave them out.
		return nil
	}
	if !e.hasAmount {
		return refuse("entry %d of statement %q has no amount", r.entryNo, r.st.ID)
	}
	total, ok := signed(e.amount, e.indicator)
	if !ok {
		return refuse("entry %d of statement %q says neither credit nor debit (CdtDbtInd)", r.entryNo, r.st.ID)
	}
	if e.currency == "" {
		e.currency = r.ccy
	}
	if r.split(total) {
		for k, t := range e.txs {
			// The parts of a batch are told apart by the bank's reference:
			// a part without its own takes the batch's with its position,
			// the same on every import of the file.
			if t.bankRef == "" && e.bankRef != "" {
				t.bankRef = fmt.Sprintf("%s/%d", e.bankRef, k+1)
			}
			if err := r.add(r.entry(t.amount, t.currency, []camtTx{t})); err != nil {
				return err
			}
		}
		return nil
	}
	return r.add(r.entry(total, e.currency, e.txs))
}

// split signs each TxDtls amount and reports whether the Ntry should be
// split: several TxDtls, each with an amount, adding up to the Ntry's.
func (r *camtReader) split(total Amount) bool {
	txs := r.e.txs
	if len(txs) < 2 {
		return false
	}
	sum := Amount(0)
	for i := range txs {
		t := &txs[i]
		ind := t.indicator
		if ind == "" {
			ind = r.e.indicator
		}
		v, ok := signed(t.amount, ind)
		if !t.hasAmount || !ok || (t.currency != "" && r.e.currency != "" && t.currency != r.e.currency) {
			return false
		}
		t.amount = v
		if t.currency == "" {
			t.currency = r.e.currency
		}
		if sum, ok = sum.add(v); !ok {
			return false
		}
	}
	return sum == total
}

// entry builds one entry of the open Ntry from the TxDtls that explain it.
func (r *camtReader) entry(amount Amount, currency string, txs []camtTx) Entry {
	e := &r.e
	out := Entry{
		BookingDate:   e.booking,
		ValueDate:     e.value,
		Amount:        amount,
		Currency:      currency,
		BankReference: e.bankRef,
	}
	var rem []string
	for i, t := range txs {
		if i == 0 {
			if t.bankRef != "" {
				out.BankReference = t.bankRef
			}
			out.EndToEndID = t.endToEnd
			name := cmp.Or(clean(t.debtor, MaxName), clean(t.ultDebtor, MaxName))
			out.CounterpartyIBAN = t.debtorIBAN
			if amount < 0 {
				name = cmp.Or(clean(t.creditor, MaxName), clean(t.ultCreditor, MaxName))
				out.CounterpartyIBAN = t.creditorIBAN
			}
			out.CounterpartyName = name
		}
		rem = append(rem, t.remittance...)
		if len(t.remittance) == 0 && t.info != "" {
			rem = append(rem, t.info)
		}
	}
	if len(rem) == 0 && e.info != "" {
		rem = append(rem, e.info)
	}
	out.RemittanceInfo = clean(strings.Join(rem, " "), MaxRemittance)
	out.CounterpartyIBAN = validIBAN(out.CounterpartyIBAN)
	if out.ValueDate.IsZero() {
		out.ValueDate = out.BookingDate
	}
	if out.BookingDate.IsZero() {
		out.BookingDate = out.ValueDate
	}
	return out
}

func (r *camtReader) add(e Entry) error {
	r.total++
	if r.total > r.maxEntries {
		return refuse("the file has more than %d entries", r.maxEntries)
	}
	if e.BookingDate.IsZero() {
		return refuse("entry %d of statement %q has no booking date", r.entryNo, r.st.ID)
	}
	r.st.Entries = append(r.st.Entries, e)
	return nil
}

func (r *camtReader) flushStatement() error {
	st := r.st
	if st.Account.IBAN == "" && st.Account.Number == "" {
		return refuse("statement %q names no account (Acct/Id)", st.ID)
	}
	if r.ccy == "" {
		return refuse("statement %q states no currency: neither its account (Acct/Ccy) nor its amounts (Ccy) name one", st.ID)
	}
	var err error
	if r.from != "" {
		if st.From, err = r.date(r.from, "the statement's start (FrToDt/FrDtTm)"); err != nil {
			return err
		}
	}
	if r.to != "" {
		if st.To, err = r.date(r.to, "the statement's end (FrToDt/ToDtTm)"); err != nil {
			return err
		}
	}
	st.Opening = r.opening
	if st.Opening == nil {
		st.Opening = r.prcd
	}
	st.Currency, st.Account.Currency = r.ccy, r.ccy
	for i := range st.Entries {
		if st.Entries[i].Currency == "" {
			st.Entries[i].Currency = st.Currency
		}
	}
	st.fillPeriod()
	if st.From.IsZero() {
		return refuse("statement %q states no period: no FrToDt, no balance date and no entry", st.ID)
	}
	return nil
}

// fillPeriod takes the period a statement does not state from its
// balances' dates, else from its entries' booking dates.
func (s *Statement) fillPeriod() {
	if s.From.IsZero() && s.Opening != nil {
		s.From = s.Opening.Date
	}
	if s.To.IsZero() && s.Closing != nil {
		s.To = s.Closing.Date
	}
	var first, last time.Time
	for _, e := range s.Entries {
		if first.IsZero() || e.BookingDate.Before(first) {
			first = e.BookingDate
		}
		if e.BookingDate.After(last) {
			last = e.BookingDate
		}
	}
	if s.From.IsZero() {
		s.From = first
	}
	if s.To.IsZero() {
		s.To = last
	}
	// A statement of one balance covers the day of that balance.
	if s.To.IsZero() || s.To.Before(s.From) {
		s.To = s.From
	}
	if s.From.IsZero() {
		s.From = s.To
	}
}

// charsetReader lets the decoder read the single-byte encodings that old
// generators declare; Go reads UTF-8 itself.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return input, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1":
		return charmap.ISO8859_1.NewDecoder().Reader(input), nil
	case "iso-8859-15", "iso8859-15", "latin-9", "latin9":
		return charmap.ISO8859_15.NewDecoder().Reader(input), nil
	case "windows-1252", "cp1252":
		return charmap.Windows1252.NewDecoder().Reader(input), nil
	}
	return nil, fmt.Errorf("the encoding %q is not read; statements are UTF-8", label)
}

// latin1 decodes ISO 8859-1 into UTF-8.
func latin1(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return out
}
