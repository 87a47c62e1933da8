package docfields

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"

	"acctapi/document"
)

// Net, tax and total are read in three steps, each tested alone:
// amountCandidates gives every amount of the page the roles its label
// allows with a score from the weights below; the total's features
// (totalFeatures) raise or drop candidates by what the whole page says;
// chooseAmounts takes the best combination, where net + tax = total
// proves more than any label.

// amountWeights names every weight the amount readers use.
type amountWeights struct {
	Gross, Due, Total, TotalLow, Side float64 // a labelled amount, by its label's role
	Unlabelled, UnlabelledSide        float64 // an amount no label governs: total, net or tax
	PayslipTotal                      float64 // "Auszahlungsbetrag", a tax notice's "Nachzahlung"
	Position, Currency, LastOnLine    float64 // lower on the page; a currency beside it; the line's last amount
	Rounded, Contradicted             float64 // a rounded total above the sum it rounds; one its sum and adjustment contradict
	Unrounded                         float64 // a sum that an amount below it rounds
	Largest, LargestSum               float64 // the page's largest amount; the largest labelled sum
	Paid, PaidWrong                   float64 // equals what was tendered less the change; is the tendered or the change
	PaidExactly                       float64 // equals what was tendered with no change given
	Checked, CheckedLabel             float64 // net + tax = total; again for each labelled one of the three
	PairPenalty, SideUnchecked        float64 // two rates' lines added; a net or tax nothing checks
}

// weights are fitted to real documents: TestFitWeights searches them on
// the first halves of the real tiers and rewrites amountweights.json, which
// the reader embeds.
//
//go:embed amountweights.json
var weightsJSON []byte

var weights = embeddedWeights[amountWeights]("amountweights.json", weightsJSON)

// embeddedWeights decodes a weights file the package embeds; one that
// names a weight the reader lacks is a build's mistake.
func embeddedWeights[W any](name string, data []byte) W {
	var w W
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&w); err != nil {
		panic("docfields: " + name + ": " + err.Error())
	}
	return w
}

// amtCand is one amount taken for one role.
type amtCand struct {
	role   role
	x      amountTok
	score  float64
	line   int
	labled bool
	sum    bool  // the sum of a net and a tax read beside each other: their adding up proves nothing
	rounds int64 // the rounding adjustment a rounded total adds to its net and tax
}

// amountCands are the candidates for each role, and the page's largest
// amount.
type amountCands struct {
	total, net, tax []amtCand
	maxAbs          int64
}

func amountFamily(r role) bool { return r.isAmount() }

var (
	rePayslipTotal = regexp.MustCompile(`(?i)auszahl|net\s*pay|take\s*home|net\s*salary|salaire\s*net|überweis|ueberweis|net\s*[àa]\s*payer|net\s*pay[ée]`)
	reNoticeTotal  = regexp.MustCompile(`(?i)nachzahlung|abschlusszahlung|zu\s*zahlen|zu\s*entrichten|amount\s*payable|tax\s*due|balance\s*payable|[àa]\s*payer|verbleib`)
)

// pickAmounts chooses net, tax and total together. The currency is the
// one printed beside the total, else the one the page names most.
func (a *analysis) pickAmounts() (net, tax, total, cur string) {
	if a.kind == document.BankStatement {
		return "", "", "", a.pageCurrency()
	}
	c := a.amountCandidates()
	a.totalFeatures(&c)
	a.labelledNet, a.labelledTax = labelledAmounts(c.net), labelledAmounts(c.tax)
	best, other := chooseAmounts(&c)
	if best.t != nil {
		a.margins[document.TotalAmount] = margin{best: best.s, other: other}
	}
	if best.t != nil && (best.t.labled || best.checked || a.kind == document.Receipt || a.kind == document.Invoice || a.kind == document.CreditNote) {
		total = best.t.x.String()
		cur = best.t.x.currency
	}
	if a.kind != document.Payslip && a.kind != document.TaxNotice {
		net, tax = best.side(best.n, c.net), best.side(best.x, c.tax)
	}
	if cur == "" {
		cur = a.pageCurrency()
	}
	return net, tax, total, cur
}

// reNamed is a word before an amount.
var reNamed = regexp.MustCompile(`\pL{3,}`)

// amountCandidates gives each amount of the page the roles its label
// allows: a total, a net or a tax, or all three weakly when no label
// governs it. A payslip's and a tax notice's total is only the amount
// paid out or due.
func (a *analysis) amountCandidates() amountCands {
	var c amountCands
	var subtotals []amtCand
	nlines := len(a.d.lines)
	for i, xs := range a.amounts {
		if a.taxSummaryRow(i, &c) {
			continue
		}
		first, last := -1, -1
		for k, x := range xs {
			if !x.percent {
				last = k
				if first < 0 {
					first = k
				}
			}
		}
		for k, x := range xs {
			if x.percent {
				continue
			}
			c.maxAbs = max(c.maxAbs, abs(x.cents))
			l, direct := a.governing(i, x.start, amountFamily, a.amountsBetween)
			if l.role == rTax {
				l = a.taxWithinTotal(i, l)
			}
			if (l.role == rGross || l.role == rDue2 || l.role == rTotal) && a.headsColumn(i, l) {
				// "QTY  PRICE  TOTAL" over the items: each row's total,
				// not the page's.
				l, direct = found{}, 1
			}
			if l.role == rTotal || (l.role == rTotalLow || l.role == rGross) && len(xs) > 1 && k < last {
				// A "Summe" row of a table with net and tax columns: the
				// column says what the sum is of.
				if h, d := a.above(i, x.start, amountFamily, a.amountsBetween); h.role == rNet || h.role == rTax || h.role == rGross {
					l, direct = h, d
				}
			}
			pos := weights.Position * float64(i) / float64(max(1, nlines))
			if x.currency != "" {
				pos += weights.Currency
			}
			lastBonus := 0.0
			if k == last {
				lastBonus = weights.LastOnLine
			}
			labelled := func(r role, score float64) amtCand {
				return amtCand{role: r, x: x, score: score, line: i, labled: true}
			}
			switch a.kind {
			case document.Payslip, document.TaxNotice:
				re := rePayslipTotal
				if a.kind == document.TaxNotice {
					re = reNoticeTotal
				}
				if l.role != rNone && re.MatchString(l.canon) {
					c.total = append(c.total, labelled(rNone, weights.PayslipTotal*direct))
				}
				continue
			}
			w := labelWeight(l.role, l.text)
			switch l.role {
			case rGross:
				c.total = append(c.total, labelled(rGross, weights.Gross*w*direct+pos+lastBonus))
			case rDue2:
				c.total = append(c.total, labelled(rDue2, weights.Due*w*direct+pos+lastBonus))
			case rTotal:
				c.total = append(c.total, labelled(rTotal, weights.Total*direct+pos+lastBonus))
			case rTotalLow:
				c.total = append(c.total, labelled(rNone, weights.TotalLow*direct+pos))
			case rNet:
				c.net = append(c.net, labelled(rNone, weights.Side*w*direct))
				if a.hasRounding && i > a.roundingLine && i-a.roundingLine <= 2 {
					// "ROUNDING ADJ -0.02", "NET TOTAL 7.40": a till
					// rounds what is paid, and the sum after the rounding
					// is that.
					c.total = append(c.total, labelled(rTotal, weights.Total*direct+pos+lastBonus))
				} else if a.kind == document.Receipt {
					subtotals = append(subtotals, labelled(rNone, weights.Total*direct+pos+lastBonus))
				}
			case rTax:
				c.tax = append(c.tax, labelled(rNone, weights.Side*w*direct))
				if a.kind != document.Receipt {
					// A total whose label the reader does not know ("Due
					// payable: 571.04" under "VAT total: 75.04") falls to
					// the tax's label above it: as unlabelled, it is the
					// total only where a net and a tax add up to it. A till
					// slip's sums add up too often.
					c.total = append(c.total, amtCand{x: x, score: weights.Unlabelled + pos, line: i})
				}
			case rAmountOther:
				if roundingLabels[l.canon] && abs(x.cents) >= maxAdjustment && a.roundsAbove(i, x.cents) {
					// "Rounding RM 45.35" below "Total 45.34": too large
					// to adjust a total, it is the total rounded.
					c.total = append(c.total, labelled(rTotal, weights.Total*direct+pos+lastBonus))
				}
			case rNone:
				c.total = append(c.total, amtCand{x: x, score: weights.Unlabelled + pos, line: i})
				if k == last && k == first && reNamed.MatchString(a.d.lines[i].raw[:x.start]) {
					// A line that names its one amount ("Serv. Charge
					// (10%)") in words no label holds is a charge, not a
					// net or tax; a row of a summary table is read whole.
					continue
				}
				c.net = append(c.net, amtCand{x: x, score: weights.UnlabelledSide, line: i})
				c.tax = append(c.tax, amtCand{x: x, score: weights.UnlabelledSide, line: i})
			}
		}
	}
	if !slices.ContainsFunc(c.total, func(t amtCand) bool { return t.labled && (t.role == rTotal || t.role == rGross || t.role == rDue2) }) {
		// A till's subtotal is what is paid where no total is read
		// ("Subtotal 7.00", "Total incl GST 700" with its point lost).
		c.total = append(c.total, subtotals...)
	}
	return c
}

// headsColumn says whether label l, governing an amount of line i, is a
// column's header above it with several amounts in the rows below, before
// the next line with an amount's label.
func (a *analysis) headsColumn(i int, l found) bool {
	if slices.ContainsFunc(a.labels[i], func(f found) bool { return f.start == l.start }) {
		// The amount's own line's label.
		return false
	}
	h := -1
	for up := i - 1; up >= 0 && up >= i-12; up-- {
		if slices.Contains(a.labels[up], l) {
			h = up
			break
		}
	}
	if h < 0 {
		return false
	}
	rows := 0
	for k := h + 1; k < len(a.d.lines) && k <= h+12; k++ {
		if slices.ContainsFunc(a.labels[k], func(f found) bool { return f.role != rItemHeader && f.role.isAmount() }) {
			break
		}
		if a.amountsBetween(k, 0, len(a.d.lines[k].raw)) {
			rows++
		}
	}
	return rows >= 2
}

// taxSummaryRow reads the total row of a receipt's tax summary ("Total
// 439.00 26.34" under "Amt(RM) Tax(RM)"): its amounts are the net and the
// tax, and their sum is a total.
func (a *analysis) taxSummaryRow(i int, c *amountCands) bool {
	xs := a.amounts[i]
	if a.kind != document.Receipt || len(xs) != 2 || xs[0].percent || xs[1].percent {
		return false
	}
	net, tax := xs[0], xs[1]
	l, direct := a.governing(i, net.start, amountFamily, a.amountsBetween)
	if l.role != rTotal || direct < 1 || tax.cents < 0 || tax.cents*3 > net.cents {
		return false
	}
	sum := net.cents + tax.cents
	if adj := a.rounding; a.hasRounding && adj != 0 && abs(adj) <= maxRounding {
		// The summary sums the items; the till rounds what is paid.
		sum += adj
	}
	c.maxAbs = max(c.maxAbs, sum)
	c.net = append(c.net, amtCand{x: net, score: weights.Side, line: i, labled: true})
	c.tax = append(c.tax, amtCand{x: tax, score: weights.Side, line: i, labled: true})
	c.total = append(c.total, amtCand{role: rTotal, x: amountTok{cents: sum, currency: net.currency},
		score: weights.Total, line: i, labled: true, sum: true})
	return true
}

// roundingAdjustment is the amount of the page's last rounding line
// ("Rounding Adj -0.02") and that line.
func (a *analysis) roundingAdjustment() (int64, int, bool) {
	adj, line, ok := int64(0), 0, false
	for i := range a.amounts {
		if x, has := a.labelledAmount(i, roundingLabels); has && abs(x) < maxAdjustment {
			adj, line, ok = x, i, true
		}
	}
	return adj, line, ok
}

// totalFeatures weighs each total candidate by what the page says beyond
// its label: a receipt's rounding and payment, the page's largest amount,
// the largest of the labelled sums.
func (a *analysis) totalFeatures(c *amountCands) {
	c.total = a.tillTotals(c.total)
	a.paidTotals(c)
	// The largest amount of an invoice or receipt is usually its total.
	for k := range c.total {
		if abs(c.total[k].x.cents) == c.maxAbs {
			c.total[k].score += weights.Largest
		}
	}
	// Of the labeled totals, the largest is the document's; the others
	// total a rate or a page. An amount due ("Zahlbetrag", "Net à payer")
	// differs from the total by prepayments and open items: where a sum
	// with tax is printed, the total is the largest of those sums.
	sums := func(r role) bool { return r == rGross || r == rTotal }
	if !slices.ContainsFunc(c.total, func(t amtCand) bool { return sums(t.role) }) {
		sums = func(r role) bool { return r != rNone }
	}
	var maxLabeled int64
	for _, t := range c.total {
		if sums(t.role) && abs(t.x.cents) > maxLabeled {
			maxLabeled = abs(t.x.cents)
		}
	}
	for k := range c.total {
		if sums(c.total[k].role) && abs(c.total[k].x.cents) == maxLabeled {
			c.total[k].score += weights.LargestSum
		}
	}
}

// reRoundedTotal finds "TOTAL  ROUNDED" where a wide space split the label
// in two ("TOTAL" and a word no label holds).
var reRoundedTotal = regexp.MustCompile(`(?i)\btotal\s+rounded\b|\brounded\s+total\b`)

// tillTotals puts a rounded total above the sum it rounds (cash is paid
// to the rounded figure), and drops what is never a total: zero ("Relief
// GST 0.00"), and on a receipt a negative amount or a year of its dates
// read as an amount.
func (a *analysis) tillTotals(T []amtCand) []amtCand {
	years := map[int64]bool{}
	for _, ds := range a.dates {
		for _, d := range ds {
			years[int64(d.t.Year())*100] = true
		}
	}
	out := T[:0]
	var rounded []bool
	for _, c := range T {
		if c.x.cents == 0 || a.kind == document.Receipt && (c.x.cents < 0 || years[c.x.cents]) {
			continue
		}
		r := c.labled && (strings.Contains(strings.ToLower(a.labelOf(c)), "round") || reRoundedTotal.MatchString(a.d.lines[c.line].raw[:c.x.start]) ||
			a.afterRounding(c))
		if r {
			c.score += weights.Rounded
		}
		out = append(out, c)
		rounded = append(rounded, r)
	}
	a.roundedBelow(out, rounded)
	a.checkRounding(out, rounded)
	return out
}

// afterRounding says whether c is a receipt's sum just below its rounding
// line ("Rounding Adj 0.03", "TOTAL: RM 57.80"): what the till rounded.
func (a *analysis) afterRounding(c amtCand) bool {
	return a.kind == document.Receipt && a.hasRounding && (c.role == rTotal || c.role == rGross || c.role == rDue2) &&
		c.line > a.roundingLine && c.line-a.roundingLine <= 3
}

// roundedBelow finds a rounded total its label does not name ("Total
// (incl. GST) 23.26", "Rounding Adj -0.01", "TOTAL 23.25"): an amount
// below a labelled sum that is the sum plus the page's adjustment. It, and
// a rounded total a few cents off the sum above it ("Total 45.34",
// "Rounding RM 45.35"), is as good a total as the sum's label makes it;
// the sum it rounds is not what was paid.
func (a *analysis) roundedBelow(T []amtCand, rounded []bool) {
	adj := a.rounding
	known := a.hasRounding && adj != 0 && abs(adj) <= maxRounding
	for k := range T {
		for j := range T {
			if !T[j].labled || T[j].role != rTotal && T[j].role != rGross || T[j].line >= T[k].line {
				continue
			}
			switch d := T[k].x.cents - T[j].x.cents; {
			case !rounded[k] && known && d == adj:
				// Its net and tax are the sum's.
				T[k].score = max(T[k].score, T[j].score) + weights.Rounded
				T[k].labled, T[k].role, T[k].rounds = true, T[j].role, adj
			case rounded[k] && !rounded[j] && d != 0 && abs(d) <= maxRounding:
				T[k].score = max(T[k].score, T[j].score+weights.Rounded)
				if known && d == adj {
					T[k].rounds = adj
				}
			default:
				continue
			}
			T[j].score += weights.Unrounded
			rounded[k] = true
			break
		}
	}
}

// checkRounding holds a rounded total to the sum and the adjustment
// printed above it: where the sum plus the adjustment is another figure
// ("Total 9.00", "Rounding Adj 0.00", "Rounded Total 9.60" misread), the
// two lines that agree outvote the one that does not.
func (a *analysis) checkRounding(T []amtCand, rounded []bool) {
	adj, ok := a.rounding, a.hasRounding
	if !ok {
		return
	}
	for k := range T {
		if !rounded[k] {
			continue
		}
		var sums []int
		agrees := false
		for j := range T {
			if rounded[j] || !T[j].labled || T[j].role != rTotal && T[j].role != rGross {
				continue
			}
			sums = append(sums, j)
			agrees = agrees || T[j].x.cents+adj == T[k].x.cents
		}
		if agrees || len(sums) == 0 {
			continue
		}
		T[k].score += weights.Contradicted
		for _, j := range sums {
			for m := range T {
				if T[m].x.cents == T[j].x.cents+adj && !rounded[m] {
					T[m].score += weights.Rounded
				}
			}
		}
	}
}

var roundingLabels = map[string]bool{"rounding": true, "rounding adj": true, "rounding adjustment": true,
	"round adj": true, "round off": true, "adjustment": true}

// paidTotals reads a till's payment: what was tendered less the change
// is the total. The change is never the total, nor is the tendered
// amount when change was given, nor an amount larger than what was
// tendered ("371.00" for 31.00 paid with 101.00); a candidate equal to
// the difference is. The difference itself is the total where OCR
// garbled the total's line (no candidate equals it and no labelled sum
// is read) and where the sums read differ from it by a till's rounding
// (46.54 summed, 46.55 paid), unless the tendered line's label was not
// read and no sum plus the rounding line's adjustment makes the payment.
func (a *analysis) paidTotals(c *amountCands) {
	p, ok := a.paid, a.hasPaid
	if !ok {
		return
	}
	paid := p.tendered - p.change
	// Tendered with no change, the amount was counted out to the total:
	// where a printed sum differs from it in one misread digit ("63.50",
	// "CASH 63.60", "Change 0.00"), the payment is the better witness
	// unless a net and tax check the sum.
	exactly := 0.0
	if p.change == 0 && slices.ContainsFunc(c.total, func(t amtCand) bool {
		return t.labled && (t.role == rGross || t.role == rTotal || t.role == rDue2) && oneDigitApart(t.x.cents, paid)
	}) {
		exactly = weights.PaidExactly
	}
	seen, otherSum, rounds := false, false, false
	for k := range c.total {
		t := &c.total[k]
		sum := t.labled && (t.role == rGross || t.role == rTotal || t.role == rDue2)
		rounds = rounds || sum && a.hasRounding && a.rounding != 0 && t.x.cents+a.rounding == paid
		switch {
		case t.line == p.changeLine && t.x.cents == p.change && p.change != 0,
			t.line == p.tenderedLine && t.x.cents == p.tendered && p.change != 0:
			t.score += weights.PaidWrong
		case t.x.cents == paid:
			t.score += weights.Paid + exactly
			seen = true
		case t.x.cents > p.tendered:
			t.score += weights.PaidWrong
		case sum && abs(t.x.cents-paid) > maxRounding:
			otherSum = true
		}
	}
	// A sum and the rounding line that add up to the payment vouch for
	// a tendered line whose label was not read.
	if !seen && !otherSum && (!p.guessed || rounds) && paid > 0 {
		c.total = append(c.total, amtCand{role: rTotal, x: amountTok{cents: paid}, score: weights.Total + weights.Paid,
			line: p.changeLine, labled: true})
	}
}

// oneDigitApart says whether a and b, both positive, differ in exactly
// one digit of the same count of digits, as a misread digit makes them.
func oneDigitApart(a, b int64) bool {
	if a <= 0 || b <= 0 {
		return false
	}
	differ := 0
	for ; a > 0 || b > 0; a, b = a/10, b/10 {
		if a == 0 || b == 0 {
			return false
		}
		if a%10 != b%10 {
			differ++
		}
	}
	return differ == 1
}

// roundsAbove says whether an amount above line i is within half a unit
// of v, as a total is of its rounding.
func (a *analysis) roundsAbove(i int, v int64) bool {
	for up := range i {
		for _, x := range a.amounts[up] {
			if !x.percent && x.cents != v && abs(x.cents-v) < maxAdjustment/2 {
				return true
			}
		}
	}
	return false
}

// maxAdjustment bounds, in cents, what a rounding line adjusts by: less
// than a whole unit, even where tills round to whole kronor.
const maxAdjustment = 100

// maxRounding is the most, in cents, a till rounds a total by (to five
// cents, as in Malaysia, Switzerland or Sweden's öre days).
const maxRounding = 2

// labelOf is the text of the label on a candidate's line before it.
func (a *analysis) labelOf(c amtCand) string {
	var text string
	for _, l := range a.labels[c.line] {
		if l.end <= c.x.start {
			text = l.canon
		}
	}
	return text
}

// amountChoice is a total with the net and tax that go with it, if any.
type amountChoice struct {
	t, n, x *amtCand
	s       float64
	checked bool // n + x = t
}

// chooseAmounts takes the best-scoring combination of a total and, where
// they are read, a net and a tax below it; net + tax = total earns more
// than any label can. other is the best score of a combination with
// another total.
func chooseAmounts(c *amountCands) (best amountChoice, other float64) {
	T, N, X := topAmounts(c.total, 14), topAmounts(c.net, 10), topAmounts(c.tax, 10)
	// Two tax lines (19% and 7%) add up to the tax, their bases to the net.
	X, N = addPairs(X), addPairs(N)
	c.total, c.net, c.tax = T, N, X
	best = amountChoice{s: -1}
	byTotal := map[int64]float64{}
	for ti := range T {
		t := &T[ti]
		for ni := -1; ni < len(N); ni++ {
			var n *amtCand
			if ni >= 0 {
				n = &N[ni]
				if n.x == t.x && n.line == t.line || abs(n.x.cents) > abs(t.x.cents) {
					continue
				}
			}
			for xi := -1; xi < len(X); xi++ {
				var x *amtCand
				if xi >= 0 {
					x = &X[xi]
					if x.x == t.x && x.line == t.line || abs(x.x.cents) >= abs(t.x.cents) {
						continue
					}
				}
				s, checked, ok := combine(t, n, x, c.maxAbs)
				if !ok {
					continue
				}
				if v, seen := byTotal[t.x.cents]; !seen || s > v {
					byTotal[t.x.cents] = s
				}
				if s > best.s {
					best = amountChoice{t: t, n: n, x: x, s: s, checked: checked}
				}
			}
		}
	}
	if best.t != nil {
		for v, s := range byTotal {
			if v != best.t.x.cents {
				other = max(other, s)
			}
		}
	}
	return best, other
}

// combine scores a total with a net and a tax (either may be nil), and
// says whether they add up; ok is false for a combination that cannot be.
func combine(t, n, x *amtCand, maxAbs int64) (s float64, checked, ok bool) {
	if n != nil && n.x.cents == t.x.cents && (x == nil || x.x.cents != 0 || !n.labled || !x.labled || n.line == t.line ||
		!t.labled && abs(t.x.cents) != maxAbs) {
		// A net as large as the total only beside a labelled zero tax (an
		// exempt invoice), each on its own line, the total labelled or
		// the page's largest amount.
		return 0, false, false
	}
	s = t.score
	switch {
	case n != nil && x != nil:
		if !n.labled && !x.labled {
			// Two line items that add up to the total are no net and tax.
			return 0, false, false
		}
		if d := n.x.cents + x.x.cents + t.rounds - t.x.cents; d != 0 && !(abs(d) == 1 && n.labled && x.labled) {
			return 0, false, false
		}
		if t.sum {
			return s + weights.SideUnchecked*(n.score+x.score), true, true
		}
		lab := 0
		for _, c := range []*amtCand{t, n, x} {
			if c.labled {
				lab++
			}
		}
		s += n.score + x.score + weights.Checked
		if n.x.cents != t.x.cents {
			// An exempt invoice's net and zero tax prove less than a tax
			// that adds up.
			s += weights.CheckedLabel * float64(lab)
		}
		return s, true, true
	case n != nil:
		if !n.labled {
			return 0, false, false
		}
		s += n.score * weights.SideUnchecked
	case x != nil:
		if !x.labled {
			return 0, false, false
		}
		s += x.score * weights.SideUnchecked
	}
	return s, false, true
}

// side is the net or tax to report: the chosen one when it is labelled or
// adds up, else, with nothing to check it, the best labelled one below
// the total.
func (best amountChoice) side(c *amtCand, all []amtCand) string {
	if c != nil && (c.labled || best.checked) {
		return c.x.String()
	}
	var b *amtCand
	for k := range all {
		if all[k].labled && (b == nil || all[k].score > b.score) && (best.t == nil || abs(all[k].x.cents) < abs(best.t.x.cents)) {
			b = &all[k]
		}
	}
	if b != nil {
		return b.x.String()
	}
	return ""
}

// reTaxQualifier is what stands between a total's label and its tax's:
// "(incl.", "Incl. of", "RM Inclusive of" (a currency may come first), and
// the "Inel.", "Ins]" and "Inc]" OCR makes of "Incl".
var reTaxQualifier = regexp.MustCompile(`(?i)^[\s(]*(?:(?:rm|myr|eur|usd|gbp|chf|sgd|€|\$|£)\s+)?(in[ceks][l1i|\]]\.?|including|inclusive|inc\.?|zzgl\.?|plus|exc[l1i|\]]\.?|exk[l1i|\]]\.?|excluding|exclusive|hors|ohne|mit|with|without|vor|before|nach|after|einsch[l1i|\]]\.?|einschließlich)(?:\s+of)?[\s.]*$`)

var reExcluding = regexp.MustCompile(`(?i)\b(ohne|exc[l1i|\]]|exk[l1i|\]]|excluding|exclusive|without|hors|vor|before|netto|net)\b`)

// reStartsIncluding is a tax label that says the tax is in the sum
// before it: "Rechnungssumme Brutto (inkl. USt.)".
var reStartsIncluding = regexp.MustCompile(`(?i)^(in[ceks][l1i|\]]|including|einsch[l1i|\]])`)

var reEndsQualifier = regexp.MustCompile(`(?i)(in[ceks][l1i|\]]|including|inclusive|exclusive|inc|zzgl|plus|exc[l1i|\]]|exk[l1i|\]]|excluding|hors|ohne|mit|with|without|einsch[l1i|\]])\.?$`)

// reOnlyOf is the gap of "Total Sales (Inclusive of GST)" once its
// label took the qualifier: nothing, or "of".
var reOnlyOf = regexp.MustCompile(`(?i)^[\s.(]*(?:of[\s.]*)?$`)

// taxWithinTotal reads "Total (incl. VAT)" and "Summe inkl. MwSt." as the
// total they are, not as the tax their last word names.
func (a *analysis) taxWithinTotal(i int, l found) found {
	ls := a.labels[i]
	for k := len(ls) - 1; k >= 0; k-- {
		p := ls[k]
		if p.end > l.start {
			continue
		}
		switch p.role {
		case rGross, rTotal, rDue2, rNet, rTotalLow:
			between := a.d.lines[i].raw[p.end:l.start]
			within := reOnlyOf.MatchString(between) && (reEndsQualifier.MatchString(p.text) || reStartsIncluding.MatchString(l.text))
			if reTaxQualifier.MatchString(between) || within {
				r := p.role
				if reExcluding.MatchString(between + " " + p.text) {
					// "Rechnungssumme ohne USt.", "Total excl. VAT": the net.
					r = rNet
				}
				return found{role: r, start: p.start, end: l.end, text: a.d.lines[i].raw[p.start:l.end], canon: p.canon}
			}
		}
		break
	}
	return l
}

func addPairs(cs []amtCand) []amtCand {
	n := len(cs)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			// Rows of one rate table: adjacent lines, same sign.
			d := cs[i].line - cs[j].line
			if cs[i].labled && cs[j].labled && d != 0 && d >= -3 && d <= 3 && cs[i].x.currency == cs[j].x.currency && (cs[i].x.cents < 0) == (cs[j].x.cents < 0) {
				cs = append(cs, amtCand{x: amountTok{cents: cs[i].x.cents + cs[j].x.cents, currency: cs[i].x.currency}, score: (cs[i].score+cs[j].score)/2 - weights.PairPenalty, line: cs[j].line, labled: true})
			}
		}
	}
	return cs
}

func topAmounts(cs []amtCand, n int) []amtCand {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].score > cs[j].score })
	if len(cs) > n {
		cs = cs[:n]
	}
	return cs
}
