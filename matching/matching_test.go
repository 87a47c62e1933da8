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
	for _, tc := range []struct {
		name  string
		txs   []Transaction
		docs  []Document
		taken map[string]bool
		want  []string // the matched FileID of each transaction
	}{
		{"number picks one of two", []Transaction{pay("t1", "ZN-502", supplierIBAN, "-450.00")}, []Document{a, b}, nil, []string{"b"}},
		{"two open invoices, payment naming neither", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00")}, []Document{a, b}, nil, []string{""}},
		{"one invoice, two payments", []Transaction{pay("t1", "", supplierIBAN, "-99.00"), pay("t2", "", supplierIBAN, "-99.00")}, []Document{c}, nil, []string{"", ""}},
		{"one invoice, two payments, one naming it", []Transaction{pay("t1", "ZN-503", "", "-99.00"), pay("t2", "", "", "-99.00")}, []Document{c}, nil, []string{"c", ""}},
		{"taken by another transaction", []Transaction{pay("t1", "ZN-503", supplierIBAN, "-99.00")}, []Document{c}, map[string]bool{"c": true}, []string{""}},
		{"a named document beats an IBAN's claim", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00"), pay("t2", "ZN-502", supplierIBAN, "-450.00")}, []Document{a, b}, nil, []string{"", "b"}},
		{"two payments naming one document", []Transaction{pay("t1", "ZN-503", "", "-99.00"), pay("t2", "ZN-503", "", "-99.00")}, []Document{c}, nil, []string{"", ""}},
		{"a payment naming another document", []Transaction{pay("t1", "ZN-502 Teilzahlung", supplierIBAN, "-99.00")}, []Document{b, c}, nil, []string{""}},
		{"an invoice confirmed elsewhere leaves the other open one", []Transaction{pay("t1", "Lieferung", supplierIBAN, "-450.00")}, []Document{a, b}, map[string]bool{"a": true}, []string{"b"}},
		{"a bank statement explains nothing", []Transaction{pay("t1", "ZN-503", supplierIBAN, "-99.00")}, []Document{func() Document { d := c; d.Kind = document.BankStatement; return d }()}, nil, []string{""}},
		{"amount alone", []Transaction{pay("t1", "", "", "-99.00")}, []Document{c}, nil, []string{""}},
		{"own account", []Transaction{func() Transaction { tx := pay("t1", "", supplierIBAN, "-99.00"); tx.OwnAccount = true; return tx }()}, []Document{c}, nil, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Decide(tc.txs, tc.docs, tc.taken)
			if len(res) != len(tc.txs) {
				t.Fatalf("got %d results, want %d", len(res), len(tc.txs))
			}
			for i, r := range res {
				if r.TransactionID != tc.txs[i].ID || r.Matched != tc.want[i] {
					t.Errorf("result %d: got %s matched %q, want %s matched %q", i, r.TransactionID, r.Matched, tc.txs[i].ID, tc.want[i])
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
		Decide(txs, docs, nil)
	}
}
