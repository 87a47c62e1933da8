package bankstatement

import (
	"encoding/xml"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// camtTx is one TxDtls of a generated entry.
type genTx struct {
	amount     string // "" leaves the TxDtls without an amount
	name, iban string // the counterparty
	ustrd      []string
	strdRef    string
	e2e, ref   string
}

// genEntry is one Ntry of a generated statement.
type genEntry struct {
	amount, ind    string // "12.50", "DBIT"
	booking, value string
	ref, status    string
	txs            []genTx
}

// camtVersion writes a CAMT.053 document of version v ("02", "04", "08",
// "13") as the version's schema places the fields.
func camtDoc(v, opening, closing string, entries []genEntry) string {
	var b strings.Builder
	n := 0
	fmt.Sscan(v, &n)
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.%s" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<BkToCstmrStmt><GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-04-01T06:00:00</CreDtTm></GrpHdr>
<Stmt><Id>STMT-2026-03</Id><ElctrncSeqNb>3</ElctrncSeqNb><CreDtTm>2026-04-01T06:00:00</CreDtTm>
<FrToDt><FrDtTm>2026-03-01T00:00:00+01:00</FrDtTm><ToDtTm>2026-03-31T23:59:59+02:00</ToDtTm></FrToDt>
<Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy><Ownr><Nm>Bäckerei Schmidt GmbH</Nm></Ownr>
<Svcr><FinInstnId><%s>COBADEFFXXX</%[2]s></FinInstnId></Svcr></Acct>
`, v, map[bool]string{true: "BICFI", false: "BIC"}[n >= 7])
	bal := func(code, amt string) {
		ind := "CRDT"
		if strings.HasPrefix(amt, "-") {
			ind, amt = "DBIT", amt[1:]
		}
		fmt.Fprintf(&b, `<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>2026-03-01</Dt></Dt></Bal>
`, code, amt, ind)
	}
	if opening != "" {
		bal("PRCD", opening)
	}
	if closing != "" {
		bal("CLBD", closing)
	}
	for _, e := range entries {
		fmt.Fprintf(&b, `<Ntry><NtryRef>1</NtryRef><Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>`, e.amount, e.ind)
		status := e.status
		if status == "" {
			status = "BOOK"
		}
		if n >= 5 {
			fmt.Fprintf(&b, `<Sts><Cd>%s</Cd></Sts>`, status)
		} else {
			fmt.Fprintf(&b, `<Sts>%s</Sts>`, status)
		}
		fmt.Fprintf(&b, `<BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt>`, e.booking, e.value)
		if e.ref != "" {
			fmt.Fprintf(&b, `<AcctSvcrRef>%s</AcctSvcrRef>`, e.ref)
		}
		b.WriteString(`<BkTxCd><Domn><Cd>PMNT</Cd></Domn></BkTxCd><NtryDtls>`)
		for _, t := range e.txs {
			b.WriteString(`<TxDtls><Refs>`)
			if t.ref != "" {
				fmt.Fprintf(&b, `<AcctSvcrRef>%s</AcctSvcrRef>`, t.ref)
			}
			e2e := t.e2e
			if e2e == "" {
				e2e = "NOTPROVIDED"
			}
			fmt.Fprintf(&b, `<EndToEndId>%s</EndToEndId></Refs>`, e2e)
			if t.amount != "" {
				if n >= 4 {
					fmt.Fprintf(&b, `<Amt Ccy="EUR">%s</Amt><CdtDbtInd>%s</CdtDbtInd>`, t.amount, e.ind)
				} else {
					fmt.Fprintf(&b, `<AmtDtls><TxAmt><Amt Ccy="EUR">%s</Amt></TxAmt></AmtDtls>`, t.amount)
				}
			}
			party, acct := "Cdtr", "CdtrAcct"
			if e.ind == "CRDT" {
				party, acct = "Dbtr", "DbtrAcct"
			}
			b.WriteString(`<RltdPties>`)
			if t.name != "" {
				if n >= 8 {
					fmt.Fprintf(&b, `<%s><Pty><Nm>%s</Nm></Pty></%[1]s>`, party, esc(t.name))
				} else {
					fmt.Fprintf(&b, `<%s><Nm>%s</Nm></%[1]s>`, party, esc(t.name))
				}
			}
			if t.iban != "" {
				fmt.Fprintf(&b, `<%s><Id><IBAN>%s</IBAN></Id></%[1]s>`, acct, t.iban)
			}
			b.WriteString(`</RltdPties>`)
			if len(t.ustrd) > 0 || t.strdRef != "" {
				b.WriteString(`<RmtInf>`)
				for _, u := range t.ustrd {
					fmt.Fprintf(&b, `<Ustrd>%s</Ustrd>`, esc(u))
				}
				if t.strdRef != "" {
					fmt.Fprintf(&b, `<Strd><CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>%s</Ref></CdtrRefInf></Strd>`, t.strdRef)
				}
				b.WriteString(`</RmtInf>`)
			}
			b.WriteString(`</TxDtls>`)
		}
		b.WriteString("</NtryDtls></Ntry>\n")
	}
	b.WriteString("</Stmt></BkToCstmrStmt></Document>\n")
	return b.String()
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

var sampleEntries = []genEntry{
	{amount: "49.99", ind: "DBIT", booking: "2026-03-12", value: "2026-03-12", ref: "BANKREF-1",
		txs: []genTx{{name: "Amazon EU S.à r.l.", iban: "LU89751000135104200E", ustrd: []string{"Order 302-1234567", "  Amazon   Marketplace "}, e2e: "E2E-1"}}},
	{amount: "1000.00", ind: "CRDT", booking: "2026-03-15", value: "2026-03-16",
		txs: []genTx{{name: "Müller & Söhne KG", iban: "DE75 5121 0800 1245 1261 99", strdRef: "RF18539007547034"}}},
	{amount: "300.00", ind: "DBIT", booking: "2026-03-20", value: "2026-03-20", ref: "BATCH-1",
		txs: []genTx{
			{amount: "100.00", name: "Alpha GmbH", ustrd: []string{"RE-1"}, ref: "B1"},
			{amount: "200.00", name: "Beta AG", ustrd: []string{"RE-2"}, ref: "B2"},
		}},
}

func TestParseCAMTVersions(t *testing.T) {
	for _, v := range []string{"02", "04", "08", "13"} {
		t.Run(v, func(t *testing.T) {
			sts, err := Parse([]byte(camtDoc(v, "2000.00", "2650.01", sampleEntries)))
			if err != nil {
				t.Fatal(err)
			}
			if len(sts) != 1 {
				t.Fatalf("got %d statements, want 1", len(sts))
			}
			s := sts[0]
			if s.Format != FormatCAMT053 || s.ID != "STMT-2026-03" || s.Currency != "EUR" {
				t.Errorf("got format %q, id %q, currency %q", s.Format, s.ID, s.Currency)
			}
			wantAcct := Account{IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX", Currency: "EUR", OwnerName: "Bäckerei Schmidt GmbH"}
			if s.Account != wantAcct {
				t.Errorf("got account %+v, want %+v", s.Account, wantAcct)
			}
			if !s.From.Equal(day(2026, 3, 1)) || !s.To.Equal(day(2026, 3, 31)) {
				t.Errorf("got period %v to %v", s.From, s.To)
			}
			if s.Opening == nil || s.Opening.Amount.String() != "2000.00" || s.Closing == nil || s.Closing.Amount.String() != "2650.01" {
				t.Errorf("got balances %+v %+v", s.Opening, s.Closing)
			}
			if len(s.Entries) != 4 {
				t.Fatalf("got %d entries, want 4: %+v", len(s.Entries), s.Entries)
			}
			e := s.Entries[0]
			want := Entry{BookingDate: day(2026, 3, 12), ValueDate: day(2026, 3, 12), Amount: -4999000, Currency: "EUR",
				CounterpartyName: "Amazon EU S.à r.l.", CounterpartyIBAN: "LU89751000135104200E",
				RemittanceInfo: "Order 302-1234567 Amazon Marketplace", EndToEndID: "E2E-1", BankReference: "BANKREF-1"}
			if e != want {
				t.Errorf("entry 1:\ngot  %+v\nwant %+v", e, want)
			}
			e = s.Entries[1]
			if e.Amount.String() != "1000.00" || e.CounterpartyName != "Müller & Söhne KG" || e.CounterpartyIBAN != "DE75512108001245126199" ||
				e.RemittanceInfo != "RF18539007547034" || e.EndToEndID != "" || !e.ValueDate.Equal(day(2026, 3, 16)) {
				t.Errorf("entry 2: got %+v", e)
			}
			for i, w := range []struct{ amount, name, rem, ref string }{{"-100.00", "Alpha GmbH", "RE-1", "B1"}, {"-200.00", "Beta AG", "RE-2", "B2"}} {
				e := s.Entries[2+i]
				if e.Amount.String() != w.amount || e.CounterpartyName != w.name || e.RemittanceInfo != w.rem || e.BankReference != w.ref {
					t.Errorf("batch part %d: got %+v, want %+v", i, e, w)
				}
			}
		})
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "empty"},
		{"blank", " \n\t", "empty"},
		{"random", "\x00\x01\x02garbage\xff", "neither"},
		{"text", "hello world\nthis is not a statement", "neither"},
		{"other xml", `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`, "not a CAMT.053"},
		{"camt.052", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.08"/>`, "camt.052"},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "b">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>`, "DOCTYPE"},
		{"broken", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>`, "ends before"},
		{"crossed tags", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt></Document></BkToCstmrStmt>`, "closes no open element"},
		{"stray end tag", `</Document>`, "not well-formed"},
		{"camt.053 namespace on another prefix", `<a:Document xmlns:a="urn:x" xmlns:b="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"/>`, "not a CAMT.053"},
		{"no statement", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt/></Document>`, "no statement"},
		{"entity", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>&xxe;</BkToCstmrStmt></Document>`, "not well-formed"},
		{"deep", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">` + strings.Repeat("<a>", 100), "deep"},
		{"balances", camtDoc("08", "2000.00", "2650.00", sampleEntries), "do not add up: opening 2000.00 plus 4 entries totalling 650.01 is 2650.01, but the closing balance is 2650.00"},
		{"bad amount", camtDoc("08", "", "", []genEntry{{amount: "1,5", ind: "DBIT", booking: "2026-03-01", value: "2026-03-01"}}), "not an amount"},
		{"no indicator", camtDoc("08", "", "", []genEntry{{amount: "1.5", ind: "X", booking: "2026-03-01", value: "2026-03-01"}}), "neither credit nor debit"},
		{"bad date", camtDoc("08", "", "", []genEntry{{amount: "1.5", ind: "DBIT", booking: "2026-13-01", value: "2026-03-01"}}), "not a date"},
		{"mt940 bad 61", ":20:X\n:25:1/2\n:28C:1\n:60F:C260301EUR0,\n:61:2603XXC1,NTRFNONREF\n:62F:C260301EUR1,\n-", "value date"},
		{"mt940 bad balance", ":20:X\n:25:1/2\n:28C:1\n:60F:X260301EUR0,\n-", "balance :60F:"},
		{"mt940 balances", ":20:X\n:25:1/2\n:28C:1\n:60F:C260301EUR10,00\n:61:260302D1,50NTRFNONREF\n:62F:C260302EUR9,00\n-", "do not add up: opening 10.00 plus 1 entries totalling -1.50 is 8.50, but the closing balance is 9.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts, err := Parse([]byte(tc.data))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want an *Error", sts, err)
			}
			if !strings.Contains(e.Reason, tc.want) {
				t.Errorf("got reason %q, want it to hold %q", e.Reason, tc.want)
			}
		})
	}
}

func TestParseTooManyEntries(t *testing.T) {
	for name, data := range map[string][]byte{"camt": []byte(camtDoc("08", "", "", sampleEntries)), "mt940": []byte(mt940Sample)} {
		_, err := parse(data, 3)
		var e *Error
		if !errors.As(err, &e) || e.Reason != "the file has more than 3 entries" {
			t.Errorf("%s: got %v, want a refusal over 3 entries", name, err)
		}
		if _, err := parse(data, 4); err != nil {
			t.Errorf("%s: got %v under the limit", name, err)
		}
	}
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse(make([]byte, MaxSize+1))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "over the") {
		t.Fatalf("got %v, want a refusal over the size", err)
	}
}

func TestAmount(t *testing.T) {
	for _, tc := range []struct{ in, ccy, want string }{
		{"1234.5", "EUR", "1234.50"},
		{"-49.99", "EUR", "-49.99"},
		{"0.00", "EUR", "0.00"},
		{"0", "EUR", "0.00"},
		{"+7", "EUR", "7.00"},
		{"1500", "JPY", "1500"},
		{"1500.5", "JPY", "1500.5"},
		{"12.3", "KWD", "12.300"},
		{"0.12345", "EUR", "0.12345"},
		{"1.100000", "EUR", "1.10"},
		{"9999999999999.99999", "EUR", "9999999999999.99999"},
	} {
		a, err := ParseAmount(tc.in)
		if err != nil {
			t.Errorf("ParseAmount(%q): %v", tc.in, err)
			continue
		}
		if got := a.Format(tc.ccy); got != tc.want {
			t.Errorf("ParseAmount(%q).Format(%q) = %q, want %q", tc.in, tc.ccy, got, tc.want)
		}
	}
	for _, in := range []string{"", "-", ".5", "1.", "1,5", "1.000.00", "1e5", "0.123456", "12345678901234", " 1", "--1", "1 000"} {
		if a, err := ParseAmount(in); err == nil {
			t.Errorf("ParseAmount(%q) = %v, want an error", in, a)
		}
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		data string
		want Format
		ok   bool
	}{
		{camtDoc("02", "", "", nil), FormatCAMT053, true},
		{mt940Sample, FormatMT940, true},
		{"", "", false},
		{`<Invoice/>`, "", false},
		{"%PDF-1.7", "", false},
	} {
		f, ok := Sniff([]byte(tc.data))
		if f != tc.want || ok != tc.ok {
			t.Errorf("Sniff(%.30q) = %q, %v; want %q, %v", tc.data, f, ok, tc.want, tc.ok)
		}
	}
}

// TestCAMTOtherID reads an IBAN given as another kind of account id, and
// keeps an id that is not an IBAN as the account's number.
// TestCAMTPrefixed reads a document whose elements carry a namespace
// prefix, as some generators write them.
func TestCAMTPrefixed(t *testing.T) {
	doc := camtDoc("04", "2000.00", "2650.01", sampleEntries)
	doc = strings.Replace(doc, `<Document xmlns="`, `<ns2:Document xmlns:ns2="`, 1)
	doc = regexp.MustCompile(`<(/?)([A-Z])`).ReplaceAllString(doc, "<${1}ns2:$2")
	sts, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 1 || len(sts[0].Entries) != 4 || sts[0].Account.IBAN != "DE89370400440532013000" {
		t.Errorf("got %+v", sts)
	}
}

func TestCAMTOtherID(t *testing.T) {
	for _, tc := range []struct{ id, iban, number string }{
		{"DE89370400440532013000", "DE89370400440532013000", ""},
		{"0532013000", "", "0532013000"},
	} {
		doc := strings.Replace(camtDoc("04", "", "", nil), "<IBAN>DE89370400440532013000</IBAN>", "<Othr><Id>"+tc.id+"</Id></Othr>", 1)
		sts, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if a := sts[0].Account; a.IBAN != tc.iban || a.Number != tc.number {
			t.Errorf("Othr/Id %q: got IBAN %q, number %q; want %q, %q", tc.id, a.IBAN, a.Number, tc.iban, tc.number)
		}
	}
}

// TestCAMTEntries reads the entries that are not one Ntry with one TxDtls.
func TestCAMTEntries(t *testing.T) {
	tx := func(amount, name, rem string) genTx { return genTx{amount: amount, name: name, ustrd: []string{rem}} }
	for _, tc := range []struct {
		name    string
		entries []genEntry
		want    []string // amount, counterparty, remittance and bank reference of each entry
	}{
		{"pending left out", []genEntry{
			{amount: "5.00", ind: "DBIT", booking: "2026-03-02", value: "2026-03-02", status: "PDNG", txs: []genTx{tx("", "A", "pending")}},
			{amount: "7.00", ind: "CRDT", booking: "2026-03-02", value: "2026-03-02", txs: []genTx{tx("", "B", "booked")}},
		}, []string{"7.00 B booked "}},
		{"details that do not add up stay one entry", []genEntry{
			{amount: "300.00", ind: "DBIT", booking: "2026-03-02", value: "2026-03-02", txs: []genTx{tx("100.00", "A", "RE-1"), tx("150.00", "B", "RE-2")}},
		}, []string{"-300.00 A RE-1 RE-2 "}},
		{"batch parts without references", []genEntry{
			{amount: "300.00", ind: "DBIT", booking: "2026-03-02", value: "2026-03-02", ref: "BATCH-9", txs: []genTx{tx("100.00", "A", "RE-1"), tx("200.00", "B", "RE-2")}},
		}, []string{"-100.00 A RE-1 BATCH-9/1", "-200.00 B RE-2 BATCH-9/2"}},
		{"details without amounts stay one entry", []genEntry{
			{amount: "300.00", ind: "DBIT", booking: "2026-03-02", value: "2026-03-02", txs: []genTx{tx("", "A", "RE-1"), tx("", "B", "RE-2")}},
		}, []string{"-300.00 A RE-1 RE-2 "}},
		{"no details", []genEntry{{amount: "1.00", ind: "CRDT", booking: "2026-03-02", value: "2026-03-03"}}, []string{"1.00   "}},
	} {
		for _, v := range []string{"02", "13"} {
			t.Run(tc.name+" "+v, func(t *testing.T) {
				sts, err := Parse([]byte(camtDoc(v, "", "", tc.entries)))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, e := range sts[0].Entries {
					got = append(got, e.Amount.String()+" "+e.CounterpartyName+" "+e.RemittanceInfo+" "+e.BankReference)
				}
				if strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			})
		}
	}
}

func TestCAMTEncodings(t *testing.T) {
	for _, tc := range []struct{ label, name string }{{"ISO-8859-1", "M\xfcller"}, {"windows-1252", "M\xfcller \x80"}, {"ISO-8859-15", "M\xfcller \xa4"}} {
		doc := strings.Replace(camtDoc("08", "", "", nil), `encoding="UTF-8"`, `encoding="`+tc.label+`"`, 1)
		doc = strings.Replace(doc, "<Nm>Bäckerei Schmidt GmbH</Nm>", "<Nm>"+tc.name+"</Nm>", 1)
		sts, err := Parse([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		want := map[string]string{"ISO-8859-1": "Müller", "windows-1252": "Müller €", "ISO-8859-15": "Müller €"}[tc.label]
		if got := sts[0].Account.OwnerName; got != want {
			t.Errorf("%s: got %q, want %q", tc.label, got, want)
		}
	}
	_, err := Parse([]byte(strings.Replace(camtDoc("08", "", "", nil), `encoding="UTF-8"`, `encoding="EBCDIC"`, 1)))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "EBCDIC") {
		t.Errorf("got %v, want a refusal naming the encoding", err)
	}
}
