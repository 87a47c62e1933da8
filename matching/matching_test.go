package matching

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"acctapi/bankstatement"
	"acctapi/document"
)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func amt(tb testing.TB, s string) bankstatement.Amount {
	tb.Helper()
	a, err := bankstatement.ParseAmount(s)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func TestNumberFound(t *testing.T) {
	for _, tc := range []struct {
		remittance, number string
		want               bool
	}{
		{"Rechnung RE-12 vom 3.3.", "RE-12", true},
		{"Rechnung RE-123", "RE-12", false},
		{"re 12, danke", "RE-12", true},
		{"RE12", "RE-12", true},
		{"SVWZ+INV/2026/0042 Danke", "INV-2026-0042", true},
		{"Invoice 2026-0042", "INV-2026-0042", false},
		{"KD 4711 RG 20260042", "20260042", true},
		{"KD 4711 RG 202600421", "20260042", false},
		{"12 Stück", "12", false},
		{"Rechnung Nr. 1/2026", "1-2026", true},
	} {
		if got := numberFound(tokens(tc.remittance), strings.Join(tokens(tc.number), "")); got != tc.want {
			t.Errorf("numberFound(%q, %q) = %v, want %v", tc.remittance, tc.number, got, tc.want)
		}
	}
}

func TestSimilarity(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Amazon EU S.à r.l.", "AMAZON EU SARL", true},
		{"Müller Bürobedarf GmbH & Co. KG", "MUELLER BUEROBEDARF", true},
		{"Deutsche Telekom AG", "Telekom Deutschland GmbH", true},
		{"Stadtwerke München", "Vodafone GmbH", false},
		{"", "Vodafone GmbH", false},
	} {
		got := similarity(nameTokens(tc.a), nameTokens(tc.b)) >= NameThreshold
		if got != tc.want {
			t.Errorf("similar(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCandidates(t *testing.T) {
	inv := Document{FileID: "f1", Kind: document.Invoice, Number: "RE-2026-017", Currency: "EUR", IssuerName: "Müller GmbH",
		IssuerIBAN: "DE75512108001245126199", Date: day(2026, 3, 1), DueDate: day(2026, 3, 15), Total: amt(t, "119.00")}
	credit := Document{FileID: "f2", Kind: document.CreditNote, Number: "GS-5", Currency: "EUR", Date: day(2026, 3, 2), Total: amt(t, "119.00")}
	old := inv
	old.FileID, old.Date, old.DueDate = "f3", day(2025, 10, 1), time.Time{}
	usd := inv
	usd.FileID, usd.Currency = "f4", "USD"
	docs := []Document{inv, credit, old, usd}

	for _, tc := range []struct {
		name string
		tx   Transaction
		want []Candidate
	}{
		{"number", Transaction{BookingDate: day(2026, 3, 14), Amount: amt(t, "-119.00"), Currency: "EUR", RemittanceInfo: "SVWZ+RE 2026 017"},
			[]Candidate{{FileID: "f1", Score: 0.7, Reasons: []string{"amount", "documentNumber", "date"}, Certain: true}}},
		{"iban and name", Transaction{BookingDate: day(2026, 3, 30), Amount: amt(t, "-119.00"), Currency: "EUR", CounterpartyName: "MUELLER GMBH", CounterpartyIBAN: "DE75 5121 0800 1245 1261 99"},
			[]Candidate{{FileID: "f1", Score: 0.6, Reasons: []string{"amount", "iban", "name"}, Certain: true}}},
		{"nothing but the amount", Transaction{BookingDate: day(2026, 3, 30), Amount: amt(t, "-119.00"), Currency: "EUR"},
			[]Candidate{{FileID: "f1", Score: 0.3, Reasons: []string{"amount"}}}},
		{"credit note is money in", Transaction{BookingDate: day(2026, 3, 20), Amount: amt(t, "119.00"), Currency: "EUR", RemittanceInfo: "Gutschrift GS-5"},
			[]Candidate{{FileID: "f2", Score: 0.7, Reasons: []string{"amount", "documentNumber", "date"}, Certain: true}}},
		{"before the document", Transaction{BookingDate: day(2026, 2, 27), Amount: amt(t, "-119.00"), Currency: "EUR"}, nil},
		{"other amount", Transaction{BookingDate: day(2026, 3, 14), Amount: amt(t, "-119.01"), Currency: "EUR", RemittanceInfo: "RE-2026-017"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Candidates(tc.tx, docs)
			if !slices.EqualFunc(got, tc.want, func(a, b Candidate) bool {
				return a.FileID == b.FileID && a.Score == b.Score && a.Certain == b.Certain && slices.Equal(a.Reasons, b.Reasons)
			}) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	supplierIBAN := "DE75512108001245126199"
	a := Document{FileID: "a", Kind: document.Invoice, Number: "ZN-501", Currency: "EUR", IssuerIBAN: supplierIBAN, Date: day(2026, 3, 2), Total: amt(t, "450.00")}
	b := Document{FileID: "b", Kind: document.Invoice, Number: "ZN-502", Currency: "EUR", IssuerIBAN: supplierIBAN, Date: day(2026, 3, 9), Total: amt(t, "450.00")}
	c := Document{FileID: "c", Kind: document.Invoice, Number: "ZN-503", Currency: "EUR", IssuerIBAN: supplierIBAN, Date: day(2026, 3, 9), Total: amt(t, "99.00")}
	pay := func(id, remittance, iban, amount string) Transaction {
		return Transaction{ID: id, BookingDate: day(2026, 3, 20), Amount: amt(t, amount), Currency: "EUR", RemittanceInfo: remittance, CounterpartyIBAN: iban}
	}
	paid := func(d Document, amount string) Document { d.Paid = amt(t, amount); return d }
	skonto := a
	skonto.FileID, skonto.Number, skonto.Discount, skonto.DiscountUntil = "s", "ZN-600", amt(t, "9.00"), day(2026, 3, 18)
	issued := Document{FileID: "i", Kind: document.Invoice, Direction: Issued, Number: "AR-2026-12", Currency: "EUR", IssuerIBAN: "DE02100100100000111222",
		BuyerName: "Café Sonne", Date: day(2026, 3, 10), Total: amt(t, "230.00")}
	credit := Document{FileID: "g", Kind: document.CreditNote, Number: "GS-7", Currency: "EUR", IssuerIBAN: supplierIBAN, Date: day(2026, 3, 5), Total: amt(t, "99.00")}
	issuedCredit := issued
	issuedCredit.FileID, issuedCredit.Kind, issuedCredit.Number, issuedCredit.Total = "ic", document.CreditNote, "GS-AR-3", amt(t, "30.00")
	for _, tc := range []struct {
		name string
		txs  []Transaction
		docs []Document
		want []string // the matched FileIDs of each transaction, joined by "+"
	}{
		{"number picks one of two", []Transaction{pay("t1", "ZN-502", supplierIBAN, "-450.00")}, []Document{a, b}, []string{"b"}},
		{"two open invoices, payment naming neither", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00")}, []Document{a, b}, []string{""}},
		{"one invoice, two payments", []Transaction{pay("t1", "", supplierIBAN, "-99.00"), pay("t2", "", supplierIBAN, "-99.00")}, []Document{c}, []string{"", ""}},
		{"one invoice, two payments, one naming it", []Transaction{pay("t1", "ZN-503", "", "-99.00"), pay("t2", "", "", "-99.00")}, []Document{c}, []string{"c", ""}},
		{"taken by another transaction", []Transaction{pay("t1", "ZN-503", supplierIBAN, "-99.00")}, []Document{paid(c, "99.00")}, []string{""}},
		{"a named document beats an IBAN's claim", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00"), pay("t2", "ZN-502", supplierIBAN, "-450.00")}, []Document{a, b}, []string{"", "b"}},
		{"two payments naming one document on one day", []Transaction{pay("t1", "ZN-503", "", "-99.00"), pay("t2", "ZN-503", "", "-99.00")}, []Document{c}, []string{"", ""}},
		{"a document paid twice: the earlier payment pays it", []Transaction{
			func() Transaction {
				tx := pay("t1", "ZN-503", "", "-99.00")
				tx.BookingDate = day(2026, 3, 25)
				return tx
			}(),
			pay("t2", "ZN-503", "", "-99.00")}, []Document{c}, []string{"", "c"}},
		{"a part payment of the document it names, not the IBAN's", []Transaction{pay("t1", "ZN-502 Teilzahlung", supplierIBAN, "-99.00")}, []Document{b, c}, []string{"b"}},
		{"less than the total, naming it, not saying it is a part", []Transaction{pay("t1", "ZN-502", supplierIBAN, "-99.00")}, []Document{b}, []string{""}},
		{"instalments that sum to the total", []Transaction{pay("t1", "ZN-502", "", "-150.00"), pay("t2", "ZN-502", "", "-300.00")}, []Document{b}, []string{"b", "b"}},
		{"instalments over the total", []Transaction{pay("t1", "ZN-502 Rate 1", "", "-300.00"), pay("t2", "ZN-502 Rate 2", "", "-300.00")}, []Document{b}, []string{"", ""}},
		{"the last instalment", []Transaction{pay("t1", "", supplierIBAN, "-150.00")}, []Document{paid(b, "300.00")}, []string{"b"}},
		{"discount in time", []Transaction{pay("t1", "ZN-600", "", "-441.00")}, []Document{skonto}, []string{"s"}},
		{"discount too late", []Transaction{func() Transaction {
			tx := pay("t1", "ZN-600", "", "-441.00")
			tx.BookingDate = day(2026, 3, 30)
			return tx
		}()}, []Document{skonto}, []string{""}},
		{"combined", []Transaction{pay("t1", "ZN-501, ZN-503", "", "-549.00")}, []Document{a, b, c}, []string{"a+c"}},
		{"combined with a discount", []Transaction{pay("t1", "ZN-600 ZN-503", "", "-540.00")}, []Document{skonto, c}, []string{"c+s"}},
		{"combined, the sum wrong", []Transaction{pay("t1", "ZN-501 ZN-503", supplierIBAN, "-548.00")}, []Document{a, c}, []string{""}},
		{"an invoice less a credit note", []Transaction{pay("t1", "ZN-501 abzgl. GS-7", "", "-351.00")}, []Document{a, credit}, []string{"a+g"}},
		{"a credit note alone is no combined payment", []Transaction{pay("t1", "GS-7 GS-8", "", "-198.00")}, []Document{credit, func() Document { d := credit; d.FileID, d.Number = "g8", "GS-8"; return d }()}, []string{""}},
		{"combined, one paid already", []Transaction{pay("t1", "ZN-501 ZN-503", "", "-549.00")}, []Document{a, paid(c, "99.00")}, []string{""}},
		{"an issued invoice explains money in", []Transaction{pay("t1", "AR-2026-12", "", "230.00")}, []Document{issued}, []string{"i"}},
		{"an issued invoice explains no money out", []Transaction{pay("t1", "AR-2026-12", "", "-230.00")}, []Document{issued}, []string{""}},
		{"its own IBAN makes no issued invoice certain", []Transaction{pay("t1", "", "DE02100100100000111222", "230.00")}, []Document{issued}, []string{""}},
		{"an issued credit note explains money out", []Transaction{pay("t1", "GS-AR-3", "", "-30.00")}, []Document{issuedCredit}, []string{"ic"}},
		{"an invoice confirmed elsewhere leaves the other open one", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00")}, []Document{paid(a, "450.00"), b}, []string{"b"}},
		{"a bank statement explains nothing", []Transaction{pay("t1", "ZN-503", supplierIBAN, "-99.00")}, []Document{func() Document { d := c; d.Kind = document.BankStatement; return d }()}, []string{""}},
		{"amount alone", []Transaction{pay("t1", "", "", "-99.00")}, []Document{c}, []string{""}},
		{"own account", []Transaction{func() Transaction { tx := pay("t1", "", supplierIBAN, "-99.00"); tx.OwnAccount = true; return tx }()}, []Document{c}, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Decide(tc.txs, tc.docs)
			if len(res) != len(tc.txs) {
				t.Fatalf("got %d results, want %d", len(res), len(tc.txs))
			}
			for i, r := range res {
				if got := strings.Join(r.Matched, "+"); r.TransactionID != tc.txs[i].ID || got != tc.want[i] {
					t.Errorf("result %d: got %s matched %q, want %s matched %q", i, r.TransactionID, got, tc.txs[i].ID, tc.want[i])
				}
			}
		})
	}
}

func TestCandidatesAtMostFive(t *testing.T) {
	var docs []Document
	for i := range 8 {
		docs = append(docs, Document{FileID: fmt.Sprintf("f%d", i), Kind: document.Receipt, Currency: "EUR", Date: day(2026, 3, 1+i), Total: amt(t, "10.00")})
	}
	got := Candidates(Transaction{BookingDate: day(2026, 3, 20), Amount: amt(t, "-10.00"), Currency: "EUR"}, docs)
	if len(got) != MaxCandidates {
		t.Fatalf("got %d candidates, want %d", len(got), MaxCandidates)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Errorf("candidate %d scores %v, over %v before it", i, got[i].Score, got[i-1].Score)
		}
	}
}

// BenchmarkDecide matches a year of a busy client: 10,000 transactions
// against 5,000 documents.
func BenchmarkDecide(b *testing.B) {
	var docs []Document
	for i := range 5000 {
		docs = append(docs, Document{FileID: fmt.Sprintf("f%d", i), Kind: document.Invoice, Number: fmt.Sprintf("RE-2026-%05d", i),
			Currency: "EUR", IssuerName: fmt.Sprintf("Lieferant %d GmbH", i%200), IssuerIBAN: fmt.Sprintf("DE%020d", i%200),
			Date: day(2026, 1, 1).AddDate(0, 0, i%330), Total: bankstatement.Amount(100_000 * (10 + i%997))})
	}
	var txs []Transaction
	for i := range 10_000 {
		txs = append(txs, Transaction{ID: fmt.Sprint(i), BookingDate: day(2026, 1, 15).AddDate(0, 0, i%330), Amount: -bankstatement.Amount(100_000 * (10 + i%997)),
			Currency: "EUR", CounterpartyName: fmt.Sprintf("LIEFERANT %d", i%200), RemittanceInfo: fmt.Sprintf("Rechnung RE-2026-%05d", i%5000)})
	}
	b.ReportAllocs()
	for b.Loop() {
		Decide(txs, docs)
	}
}

func TestSettle(t *testing.T) {
	inv := Document{FileID: "a", Kind: document.Invoice, Total: amt(t, "450.00"), Date: day(2026, 3, 1), Discount: amt(t, "9.00"), DiscountUntil: day(2026, 3, 14)}
	other := Document{FileID: "b", Kind: document.Invoice, Total: amt(t, "99.00"), Date: day(2026, 3, 1)}
	credit := Document{FileID: "c", Kind: document.CreditNote, Total: amt(t, "99.00"), Date: day(2026, 3, 1)}
	pay := func(id string, d time.Time, amount string, files ...string) Payment {
		return Payment{Transaction: Transaction{ID: id, BookingDate: d, Amount: amt(t, amount)}, FileIDs: files}
	}
	for _, tc := range []struct {
		name     string
		payments []Payment
		want     map[string]string // state and open amount of a, b and c
	}{
		{"nothing", nil, map[string]string{"a": "open 450.00", "b": "open 99.00"}},
		{"in full", []Payment{pay("t1", day(2026, 3, 20), "-450.00", "a")}, map[string]string{"a": "paid 0.00", "b": "open 99.00"}},
		{"discount in time", []Payment{pay("t1", day(2026, 3, 14), "-441.00", "a")}, map[string]string{"a": "paid 0.00", "b": "open 99.00"}},
		{"discount too late is a part", []Payment{pay("t1", day(2026, 3, 20), "-441.00", "a")}, map[string]string{"a": "partial 9.00", "b": "open 99.00"}},
		{"instalments", []Payment{pay("t2", day(2026, 4, 1), "-150.00", "a"), pay("t1", day(2026, 3, 20), "-200.00", "a")}, map[string]string{"a": "partial 100.00", "b": "open 99.00"}},
		{"instalments to the cent", []Payment{pay("t1", day(2026, 3, 20), "-225.00", "a"), pay("t2", day(2026, 4, 1), "-224.99", "a")}, map[string]string{"a": "paid 0.00", "b": "open 99.00"}},
		{"combined", []Payment{pay("t1", day(2026, 3, 20), "-549.00", "a", "b")}, map[string]string{"a": "paid 0.00", "b": "paid 0.00"}},
		{"combined, discounted", []Payment{pay("t1", day(2026, 3, 10), "-540.00", "a", "b")}, map[string]string{"a": "paid 0.00", "b": "paid 0.00"}},
		{"combined, short", []Payment{pay("t1", day(2026, 3, 20), "-500.00", "a", "b")}, map[string]string{"a": "paid 0.00", "b": "partial 49.00"}},
		{"an invoice less a credit note", []Payment{pay("t1", day(2026, 3, 20), "-351.00", "a", "c")}, map[string]string{"a": "paid 0.00", "b": "open 99.00", "c": "paid 0.00"}},
		{"an invoice less a credit note, short", []Payment{pay("t1", day(2026, 3, 20), "-300.00", "a", "c")}, map[string]string{"a": "partial 51.00", "b": "open 99.00", "c": "paid 0.00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paid := Settle([]Document{inv, other, credit}, tc.payments)
			for _, d := range []Document{inv, other, credit} {
				state, open := State(d, paid[d.FileID])
				want := tc.want[d.FileID]
				if want == "" {
					want = "open 99.00"
				}
				if got := state + " " + open.String(); got != want {
					t.Errorf("%s: got %s, want %s", d.FileID, got, want)
				}
			}
		})
	}
	if state, _ := State(Document{Kind: document.BankStatement, Total: amt(t, "10.00")}, 0); state != "" {
		t.Errorf("a statement's state is %q, want none", state)
	}
}

func TestDirectionOf(t *testing.T) {
	id := Identity{VATIDs: []string{"DE 123 456 789"}, IBANs: []string{"DE02100100100000111222"}, Names: []string{"Bäckerei Schmidt GmbH"}}
	for _, tc := range []struct {
		name string
		doc  Document
		want string
	}{
		{"its VAT id", Document{IssuerVATID: "DE123456789", IssuerName: "Schmidt"}, Issued},
		{"another's VAT id beats its name", Document{IssuerVATID: "DE999999999", IssuerName: "Baeckerei Schmidt"}, Received},
		{"the buyer's VAT id is its own", Document{BuyerVATID: "DE123456789", IssuerName: "Baeckerei Schmidt"}, Received},
		{"its name", Document{IssuerName: "BAECKEREI SCHMIDT"}, Issued},
		{"a name with one of its words", Document{IssuerName: "Schmidt Transporte GmbH"}, Received},
		{"its IBAN, no issuer named", Document{IssuerIBAN: "DE02 1001 0010 0000 1112 22"}, Issued},
		{"its IBAN on a supplier's direct-debit notice", Document{IssuerName: "Stadtwerke München", IssuerIBAN: "DE02100100100000111222"}, Received},
		{"nothing known", Document{IssuerName: "Müller Mehl GmbH"}, Received},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DirectionOf(tc.doc, id); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
