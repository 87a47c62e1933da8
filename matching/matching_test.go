package matching

import (
	"slices"
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
		if got := numberFound(tokens(tc.remittance), tc.number); got != tc.want {
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
