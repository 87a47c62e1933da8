package matching

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"acctapi/bankstatement"
	"acctapi/document"
)

// yearSupplier is a supplier of the generated year.
type yearSupplier struct {
	supplier
	style   string               // "subscription", "regular" or "card"
	fixed   bankstatement.Amount // a subscription's monthly total
	numbers string               // the format of its document numbers
}

// yearTx is a transaction of the generated year with its truth.
type yearTx struct {
	Transaction
	truth, what string
}

var (
	nameWords  = []string{"Nord", "Süd", "Alpen", "Rhein", "Main", "Elb", "Havel", "Isar", "Donau", "Weser", "Spree", "Neckar", "Ruhr", "Saale", "Mosel"}
	nameTrades = []string{"Mühle", "Verpackung", "Logistik", "Energie", "Reinigung", "Druck", "Kaffee", "Molkerei", "Obsthof", "Technik", "Beratung", "Versand", "Büro", "Fleischerei", "Eier"}
	legal      = []string{"GmbH", "AG", "KG", "GmbH & Co. KG", "e.K.", "OHG", "UG (haftungsbeschränkt)"}
	formats    = []string{"RE-2026-%04d", "%06d", "INV/%05d", "R%d", "2026-%03d", "%s-%04d"}
)

func yearAmount(r *rand.Rand, lo, hi int) bankstatement.Amount {
	return bankstatement.Amount(int64(lo*100+r.IntN((hi-lo)*100)) * 1000)
}

// generateYear makes the suppliers, their documents and the transactions of a
// year, from a seed.
func generateYear(seed uint64) ([]Document, []yearTx) {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var sups []yearSupplier
	for i := range 36 {
		name := fmt.Sprintf("%s%s %s", nameWords[i%len(nameWords)], strings.ToLower(nameTrades[(i*7)%len(nameTrades)]), legal[i%len(legal)])
		bank := strings.ToUpper(umlauts.Replace(strings.TrimSuffix(strings.TrimSuffix(name, " GmbH & Co. KG"), " e.K.")))
		s := yearSupplier{supplier: supplier{name, bank[:min(len(bank), 27)], iban("DE", fmt.Sprintf("%08d%010d", 10000000+i*1013, 4000000+i*7919))},
			numbers: formats[i%len(formats)]}
		switch {
		case i < 8:
			s.style, s.fixed = "subscription", yearAmount(r, 15, 400)
		case i < 28:
			s.style = "regular"
		default:
			s.style, s.iban = "card", ""
		}
		sups = append(sups, s)
	}
	var docs []Document
	var txs []yearTx
	seq := 0
	number := func(s yearSupplier) string {
		seq++
		if strings.HasPrefix(s.numbers, "%s") {
			return fmt.Sprintf(s.numbers, strings.ToUpper(s.name[:2]), seq)
		}
		return fmt.Sprintf(s.numbers, seq)
	}
	addDoc := func(s yearSupplier, kind string, date time.Time, due time.Time, total bankstatement.Amount) Document {
		d := Document{FileID: fmt.Sprintf("d%04d", len(docs)+1), Kind: kind, Number: number(s), Currency: "EUR",
			IssuerName: s.name, IssuerIBAN: s.iban, Date: date, DueDate: due, Total: total}
		docs = append(docs, d)
		return d
	}
	addTx := func(date time.Time, amount bankstatement.Amount, s supplier, rem, truth, what string, own bool) {
		txs = append(txs, yearTx{Transaction: Transaction{ID: fmt.Sprintf("t%04d", len(txs)+1), BookingDate: date, Amount: amount,
			Currency: "EUR", CounterpartyName: s.bankName, CounterpartyIBAN: s.iban, RemittanceInfo: rem, OwnAccount: own}, truth: truth, what: what})
	}
	// mention writes a document number the ways payers do.
	mention := func(n string) string {
		switch r.IntN(4) {
		case 0:
			return n
		case 1:
			return "Rechnung " + strings.ToLower(n) + " vom Monat"
		case 2:
			return "Rg.Nr. " + strings.NewReplacer("-", "", "/", "").Replace(n) + " Danke"
		}
		return "SVWZ+" + strings.ReplaceAll(n, "-", " ") + " KD 4711"
	}
	stranger := supplier{"", "Erika Musterfrau", iban("DE", "500105175407324931")}
	own := supplier{"", "Baeckerei Schmidt GmbH", iban("DE", "120300000000202051")}
	for m := time.January; m <= time.December; m++ {
		first := time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC)
		var month []Document
		for _, s := range sups {
			switch s.style {
			case "subscription":
				d := addDoc(s, document.Invoice, first, first.AddDate(0, 0, 14), s.fixed)
				rem := "Kundennr 88" + fmt.Sprint(len(s.name)) + " Abrechnung " + m.String()
				what := "subscription, IBAN only"
				if r.IntN(10) < 7 {
					rem, what = mention(d.Number), "subscription, number"
				}
				addTx(d.DueDate.AddDate(0, 0, r.IntN(5)-2), -d.Total, s.supplier, rem, d.FileID, what, false)
			case "regular":
				for range 1 + r.IntN(3) {
					date := first.AddDate(0, 0, r.IntN(28))
					total := yearAmount(r, 20, 5000)
					if r.IntN(10) == 0 {
						total = bankstatement.Amount([]int64{50, 100, 250, 500}[r.IntN(4)] * bankstatement.AmountScale)
					}
					d := addDoc(s, document.Invoice, date, date.AddDate(0, 0, 14), total)
					month = append(month, d)
					paid := date.AddDate(0, 0, 5+r.IntN(35))
					switch p := r.IntN(20); {
					case p < 12:
						addTx(paid, -total, s.supplier, mention(d.Number), d.FileID, "regular, number", false)
					case p < 17:
						addTx(paid, -total, s.supplier, "Danke fuer die Lieferung", d.FileID, "regular, IBAN only", false)
					case p < 18:
						addTx(paid, -total/2, s.supplier, mention(d.Number)+" Teilzahlung", d.FileID, "partial payment", false)
					}
				}
				if r.IntN(20) == 0 {
					date := first.AddDate(0, 0, r.IntN(28))
					d := addDoc(s, document.CreditNote, date, time.Time{}, yearAmount(r, 10, 300))
					addTx(date.AddDate(0, 0, 3+r.IntN(20)), d.Total, s.supplier, "Gutschrift "+d.Number, d.FileID, "credit note", false)
				}
			case "card":
				for range 2 + r.IntN(3) {
					date := first.AddDate(0, 0, r.IntN(28))
					d := addDoc(s, document.Receipt, date, time.Time{}, yearAmount(r, 5, 300))
					addTx(date.AddDate(0, 0, r.IntN(3)), -d.Total, s.supplier, "KARTENZAHLUNG "+s.bankName+" "+date.Format("02.01."), d.FileID, "card, naming nothing", false)
				}
			}
		}
		// The traps: fees, an own transfer, strangers whose amounts are
		// some document's.
		end := first.AddDate(0, 1, -1)
		addTx(end, -yearAmount(r, 1, 30), supplier{}, "Entgelt Kontofuehrung "+m.String(), "", "fee", false)
		addTx(end, -yearAmount(r, 1, 30), supplier{}, "Entgelt Kartenzahlungen", "", "fee", false)
		addTx(first.AddDate(0, 0, 20), -bankstatement.Amount([]int64{500, 1000, 2000}[r.IntN(3)]*bankstatement.AmountScale), own, "Umbuchung", "", "own transfer", true)
		if len(month) > 0 {
			for range 2 {
				d := month[r.IntN(len(month))]
				addTx(d.Date.AddDate(0, 0, r.IntN(30)), -d.Total, stranger, "Auslage "+m.String(), "", "stranger", false)
			}
		}
	}
	return docs, txs
}

// yearFigures counts what the rules did with generated years.
type yearFigures struct {
	matched, right, certain, certainMatched, traps int
	byCase                                         map[string][3]int // transactions, certain, matched right
}

// evaluateYear decides a generated year in one batch, or month by month
// with what the payments matched before settled, as monthly imports would.
func evaluateYear(t *testing.T, seed uint64, monthly bool, f *yearFigures) {
	docs, txs := generateYear(seed)
	ix := newIndex(docs)
	var payments []Payment
	results := map[string]Result{}
	for m := time.January; m <= time.December+1; m++ {
		var batch []Transaction
		for _, tx := range txs {
			if !monthly && m == time.January || monthly && tx.BookingDate.Month() == m%13 && (m <= time.December || tx.BookingDate.Year() > 2026) {
				batch = append(batch, tx.Transaction)
			}
		}
		paid := Settle(docs, payments)
		for i := range docs {
			docs[i].Paid = paid[docs[i].FileID]
		}
		for i, r := range Decide(batch, docs) {
			results[r.TransactionID] = r
			if len(r.Matched) > 0 {
				payments = append(payments, Payment{Transaction: batch[i], FileIDs: r.Matched})
			}
		}
	}
	for _, tx := range txs {
		res, ok := results[tx.ID]
		if !ok {
			t.Fatalf("seed %d: %s was not decided", seed, tx.ID)
		}
		matched := strings.Join(res.Matched, "+")
		c := f.byCase[tx.what]
		c[0]++
		isCertain := false
		for _, cand := range candidates(newTx(tx.Transaction), ix) {
			if cand.Certain && cand.FileID == tx.truth {
				isCertain = true
			}
		}
		if isCertain {
			f.certain++
			c[1]++
		}
		if matched != "" {
			f.matched++
			switch {
			case matched == tx.truth:
				f.right++
				c[2]++
				if isCertain {
					f.certainMatched++
				}
			case tx.truth == "":
				f.traps++
				t.Errorf("seed %d: %s (%s) matched %s", seed, tx.ID, tx.what, matched)
			default:
				t.Errorf("seed %d: %s (%s) matched %s, truth %s", seed, tx.ID, tx.what, matched, tx.truth)
			}
		}
		f.byCase[tx.what] = c
	}
}

// TestEvaluationYear runs the rules over generated years of a client with
// 36 suppliers (subscriptions debited monthly, regular suppliers, card
// merchants) and monthly traps, five seeds, decided in one batch and month
// by month; run with -v for the figures by case.
func TestEvaluationYear(t *testing.T) {
	for _, monthly := range []bool{false, true} {
		mode := "one batch"
		if monthly {
			mode = "month by month"
		}
		f := yearFigures{byCase: map[string][3]int{}}
		for seed := range uint64(5) {
			evaluateYear(t, seed, monthly, &f)
		}
		t.Logf("%s, 5 years:", mode)
		for _, k := range []string{"subscription, number", "subscription, IBAN only", "regular, number", "regular, IBAN only", "credit note",
			"card, naming nothing", "partial payment", "fee", "own transfer", "stranger"} {
			c := f.byCase[k]
			t.Logf("  %-24s %5d transactions, %5d certain, %5d matched right", k, c[0], c[1], c[2])
		}
		precision := float64(f.right) / float64(max(f.matched, 1))
		recall := float64(f.certainMatched) / float64(max(f.certain, 1))
		t.Logf("  automatic matches %d, right %d (precision %.2f%%); certain %d, matched %d (recall %.1f%%); traps matched %d",
			f.matched, f.right, 100*precision, f.certain, f.certainMatched, 100*recall, f.traps)
		if precision < 0.99 {
			t.Errorf("%s: precision %.4f, want at least 0.99", mode, precision)
		}
		if recall < 0.80 {
			t.Errorf("%s: recall %.3f, want at least 0.80", mode, recall)
		}
	}
}
