package docfields

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"acctapi/document"
)

type numCand struct {
	v     string
	score float64
	line  int
}

// pickNumber chooses the document number: the value after (or below) a
// number label of the document itself. Customer, order, tax and contract
// numbers have labels of their own, and a label's value ends where the
// next label begins.
func (a *analysis) pickNumber() string {
	if a.kind == document.Payslip || a.kind == document.TaxNotice || a.kind == document.Contract {
		return ""
	}
	var cands []numCand
	for i, ls := range a.labels {
		raw := a.d.lines[i].raw
		for k, l := range ls {
			var base float64
			switch l.role {
			case rDocNo:
				base = 3 * labelWeight(l.role, l.text)
			case rDocNoWeak:
				low := strings.ToLower(l.text)
				switch {
				case low == "nr" || low == "no" || low == "#" || low == "n°" || low == "nº" || low == "nummer" || low == "number":
					// A bare "Nr." numbers the document only when nothing
					// before it on the line says what it numbers.
					if k > 0 && l.start-ls[k-1].end < 4 {
						continue
					}
					base = 1.2
					if a.d.lines[i].page == 0 && i < 20 && a.titledBefore(raw[:l.start]) {
						// "Handelsrechnung (380) Nr. 5": the number the
						// page is headed by.
						base = 4
					}
				case low == "beleg":
					base = 1.5
				default:
					base = 2
				}
			default:
				continue
			}
			seg := raw[l.end:]
			for _, next := range ls[k+1:] {
				// A label glued inside a token ("00/M/00") ends nothing.
				if next.start == 0 || raw[next.start-1] == ' ' {
					seg = raw[l.end:next.start]
					break
				}
			}
			v, off := docNoAfter(seg)
			if l.role == rDocNoWeak && base == 2 && (off < 0 || strings.TrimSpace(seg[:max(off, 0)]) != "" && off > 4) {
				// A title needs its number right after it.
				continue
			}
			if v != "" && a.plausibleNumber(i, l.end+off, v) {
				cands = append(cands, numCand{v: v, score: base, line: i})
				continue
			}
			if strings.TrimSpace(seg) != "" && l.role == rDocNoWeak {
				continue
			}
			// Label over its value.
			if v, ok := a.numberBelow(i, l); ok {
				cands = append(cands, numCand{v: v, score: base * 0.9, line: i})
			} else if v, ok := a.numberAbove(i, l); ok && strings.Trim(seg, " :") == "" {
				cands = append(cands, numCand{v: v, score: base * 0.8, line: i})
			}
		}
	}
	if len(cands) == 0 {
		return ""
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	return cands[0].v
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
	for _, c := range T {
		if c.x.cents == 0 || a.kind == document.Receipt && (c.x.cents < 0 || years[c.x.cents]) {
			continue
		}
		if c.labled && (strings.Contains(strings.ToLower(a.labelOf(c)), "round") || reRoundedTotal.MatchString(a.d.lines[c.line].raw[:c.x.start])) {
			c.score += 1.5
		}
		out = append(out, c)
	}
	return out
}

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

// titledBefore says whether the text before a bare "Nr." is the page's
// title: a kind of invoice or credit note, with its type code perhaps.
func (a *analysis) titledBefore(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(strings.Fields(s)) > 4 {
		return false
	}
	if compoundInvoice(s) {
		return true
	}
	for _, h := range kindMatcher.find(s, fold(s)) {
		if k := kindWords[h.id]; k.titled && (k.kind == document.Invoice || k.kind == document.CreditNote) {
			return true
		}
	}
	return false
}

// plausibleNumber refuses values that are something else: a date, an
// amount, a VAT id, an IBAN, a phone number.
func (a *analysis) plausibleNumber(i, off int, v string) bool {
	for _, d := range a.dates[i] {
		if off >= d.start && off < d.end {
			return false
		}
	}
	for _, x := range a.amounts[i] {
		if off >= x.start && off < x.end {
			return false
		}
	}
	for _, x := range a.vats[i] {
		if off >= x.start && off < x.end {
			return false
		}
	}
	for _, x := range a.ibans[i] {
		if off >= x.start && off < x.end {
			return false
		}
	}
	return len(datesIn(v)) == 0
}

func (a *analysis) numberBelow(i int, l found) (string, bool) {
	for dn := i + 1; dn < len(a.d.lines) && dn <= i+2; dn++ {
		cur := a.d.lines[dn].raw
		if strings.TrimSpace(cur) == "" {
			continue
		}
		if len(a.labels[dn]) > 0 && a.labels[dn][0].start < 3 {
			return "", false
		}
		hc := cells(a.d.lines[i].raw)
		cc := cells(cur)
		ci := -1
		for k, c := range hc {
			if l.start >= c.start && l.start < c.end {
				ci = k
			}
		}
		var target cell
		switch {
		case len(hc) == len(cc) && ci >= 0:
			target = cc[ci]
		case len(hc) == 1 && len(cc) >= 1:
			target = cc[0]
		default:
			lc := column(a.d.lines[i].raw, l.start)
			bestD := 1 << 30
			for _, c := range cc {
				d := column(cur, c.start) - lc
				if d < 0 {
					d = -d
				}
				if d < bestD {
					bestD, target = d, c
				}
			}
			if bestD > 8 {
				return "", false
			}
		}
		v, off := docNoAfter(target.text)
		if v == "" || !a.plausibleNumber(dn, target.start+off, v) {
			return "", false
		}
		return v, true
	}
	return "", false
}

// numberAbove reads a number printed alone on the line above a label that
// ends its line, over or right of it ("F2022-028" above "AVOIR N° :"),
// as templates that right-align the number print it.
func (a *analysis) numberAbove(i int, l found) (string, bool) {
	if i == 0 || len(a.labels[i-1]) > 0 {
		return "", false
	}
	cs := cells(a.d.lines[i-1].raw)
	if len(cs) != 1 || cs[0].start < l.start {
		return "", false
	}
	v, off := docNoAfter(cs[0].text)
	if v == "" || off != 0 || len(v) != len(cs[0].text) || !a.plausibleNumber(i-1, cs[0].start, v) {
		return "", false
	}
	return v, true
}

type amtCand struct {
	role   role
	x      amountTok
	score  float64
	line   int
	labled bool
}

func amountFamily(r role) bool { return r.isAmount() }

var (
	rePayslipTotal = regexp.MustCompile(`(?i)auszahl|net\s*pay|take\s*home|net\s*salary|salaire\s*net|überweis|ueberweis|net\s*[àa]\s*payer|net\s*pay[ée]`)
	reNoticeTotal  = regexp.MustCompile(`(?i)nachzahlung|abschlusszahlung|zu\s*zahlen|zu\s*entrichten|amount\s*payable|tax\s*due|balance\s*payable|[àa]\s*payer|verbleib`)
)

// pickAmounts chooses net, tax and total together: each amount gets a
// role from its label, and the combination that scores best wins, where
// net + tax = total earns more than any label can. The currency is the
// one printed beside the total, else the one the page names most.
func (a *analysis) pickAmounts() (net, tax, total, cur string) {
	if a.kind == document.BankStatement {
		return "", "", "", a.pageCurrency()
	}
	var T, N, X []amtCand
	nlines := len(a.d.lines)
	var maxAbs int64
	for i, xs := range a.amounts {
		last := -1
		for k, x := range xs {
			if !x.percent {
				last = k
			}
		}
		for k, x := range xs {
			if x.percent {
				continue
			}
			if ab := abs(x.cents); ab > maxAbs {
				maxAbs = ab
			}
			l, direct := a.governing(i, x.start, amountFamily, a.amountsBetween)
			if l.role == rTax {
				l = a.taxWithinTotal(i, l)
			}
			if l.role == rTotal || l.role == rTotalLow || l.role == rGross && len(xs) > 1 && k < last {
				// A "Summe" row of a table with net and tax columns: the
				// column says what the sum is of.
				if h, d := a.above(i, x.start, amountFamily, a.amountsBetween); h.role == rNet || h.role == rTax || h.role == rGross {
					l, direct = h, d
				}
			}
			pos := 0.1 * float64(i) / float64(max(1, nlines))
			if x.currency != "" {
				pos += 0.1
			}
			lastBonus := 0.0
			if k == last {
				lastBonus = 0.3
			}
			switch a.kind {
			case document.Payslip:
				if l.role != rNone && rePayslipTotal.MatchString(l.canon) {
					T = append(T, amtCand{x: x, score: 3 * direct, line: i, labled: true})
				}
				continue
			case document.TaxNotice:
				if l.role != rNone && reNoticeTotal.MatchString(l.canon) {
					T = append(T, amtCand{x: x, score: 3 * direct, line: i, labled: true})
				}
				continue
			}
			w := labelWeight(l.role, l.text)
			switch l.role {
			case rGross:
				T = append(T, amtCand{role: rGross, x: x, score: 3*w*direct + pos + lastBonus, line: i, labled: true})
			case rDue2:
				T = append(T, amtCand{role: rDue2, x: x, score: 2.7*w*direct + pos + lastBonus, line: i, labled: true})
			case rTotal:
				T = append(T, amtCand{role: rTotal, x: x, score: 2.4*direct + pos + lastBonus, line: i, labled: true})
			case rTotalLow:
				T = append(T, amtCand{x: x, score: 1.4*direct + pos, line: i, labled: true})
			case rNet:
				N = append(N, amtCand{x: x, score: 2 * w * direct, line: i, labled: true})
			case rTax:
				X = append(X, amtCand{x: x, score: 2 * w * direct, line: i, labled: true})
			case rNone:
				T = append(T, amtCand{x: x, score: 0.3 + pos, line: i})
				N = append(N, amtCand{x: x, score: 0.1, line: i})
				X = append(X, amtCand{x: x, score: 0.1, line: i})
			}
		}
	}
	T = a.tillTotals(T)
	// The largest amount of an invoice or receipt is usually its total.
	for k := range T {
		if abs(T[k].x.cents) == maxAbs {
			T[k].score += 0.4
		}
	}
	// Of the labeled totals, the largest is the document's; the others
	// total a rate or a page.
	// An amount due ("Zahlbetrag", "Net à payer") differs from the total
	// by prepayments and open items: where a sum with tax is printed, the
	// total is the largest of those sums.
	sums := func(r role) bool { return r == rGross || r == rTotal }
	if !slices.ContainsFunc(T, func(c amtCand) bool { return sums(c.role) }) {
		sums = func(r role) bool { return r != 0 }
	}
	var maxLabeled int64
	for _, t := range T {
		if sums(t.role) && abs(t.x.cents) > maxLabeled {
			maxLabeled = abs(t.x.cents)
		}
	}
	for k := range T {
		if sums(T[k].role) && abs(T[k].x.cents) == maxLabeled {
			T[k].score += 0.6
		}
	}
	T, N, X = topAmounts(T, 14), topAmounts(N, 10), topAmounts(X, 10)
	// Two tax lines (19% and 7%) add up to the tax, their bases to the net.
	X, N = addPairs(X), addPairs(N)
	type combo struct {
		t, n, x *amtCand
		s       float64
		checked bool
	}
	var best combo
	best.s = -1
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
				if n != nil && n.x.cents == t.x.cents && (x == nil || x.x.cents != 0 || !n.labled || !x.labled || n.line == t.line ||
					!t.labled && abs(t.x.cents) != maxAbs) {
					// A net as large as the total only beside a labelled
					// zero tax (an exempt invoice), each on its own line,
					// the total labelled or the page's largest amount.
					continue
				}
				s := t.score
				checked := false
				if n != nil && x != nil {
					if !n.labled && !x.labled {
						// Two line items that add up to the total are
						// no net and tax.
						continue
					}
					if n.x.cents+x.x.cents == t.x.cents || abs(n.x.cents+x.x.cents-t.x.cents) == 1 && n.labled && x.labled {
						checked = true
						lab := 0
						for _, c := range []*amtCand{t, n, x} {
							if c.labled {
								lab++
							}
						}
						s += n.score + x.score + 0.8
						if n.x.cents != t.x.cents {
							// An exempt invoice's net and zero tax prove
							// less than a tax that adds up.
							s += 1.5 * float64(lab)
						}
					} else {
						continue
					}
				} else if n != nil {
					if !n.labled {
						continue
					}
					s += n.score * 0.3
				} else if x != nil {
					if !x.labled {
						continue
					}
					s += x.score * 0.3
				}
				if s > best.s {
					best = combo{t: t, n: n, x: x, s: s, checked: checked}
				}
			}
		}
	}
	if best.t != nil && (best.t.labled || best.checked || a.kind == document.Receipt || a.kind == document.Invoice || a.kind == document.CreditNote) {
		total = best.t.x.String()
		cur = best.t.x.currency
	}
	pickSide := func(c *amtCand, all []amtCand) string {
		if c != nil && (c.labled || best.checked) {
			return c.x.String()
		}
		// No check possible: the best labeled one.
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
	if a.kind != document.Payslip && a.kind != document.TaxNotice {
		net, tax = pickSide(best.n, N), pickSide(best.x, X)
	}
	if cur == "" {
		cur = a.pageCurrency()
	}
	return net, tax, total, cur
}

var reTaxQualifier = regexp.MustCompile(`(?i)^[\s(]*(inc[l1i|]\.?|ink[l1i|]\.?|including|inc\.?|zzgl\.?|plus|exc[l1i|]\.?|exk[l1i|]\.?|excluding|hors|ohne|mit|with|without|vor|before|nach|after|einsch[l1i|]\.?|einschließlich)[\s.]*$`)

var reExcluding = regexp.MustCompile(`(?i)\b(ohne|exc[l1i|]|exk[l1i|]|excluding|without|hors|vor|before|netto|net)\b`)

// reStartsIncluding is a tax label that says the tax is in the sum
// before it: "Rechnungssumme Brutto (inkl. USt.)".
var reStartsIncluding = regexp.MustCompile(`(?i)^(inc[l1i|]|ink[l1i|]|including|einsch[l1i|])`)

var reEndsQualifier = regexp.MustCompile(`(?i)(inc[l1i|]|ink[l1i|]|including|inc|zzgl|plus|exc[l1i|]|exk[l1i|]|excluding|hors|ohne|mit|with|without|einsch[l1i|])\.?$`)

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
			within := strings.Trim(between, " .(") == "" && (reEndsQualifier.MatchString(p.text) || reStartsIncluding.MatchString(l.text))
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
				cs = append(cs, amtCand{x: amountTok{cents: cs[i].x.cents + cs[j].x.cents, currency: cs[i].x.currency}, score: (cs[i].score+cs[j].score)/2 - 0.5, line: cs[j].line, labled: true})
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

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

var reCurrencyWord = regexp.MustCompile(`(EUR|USD|GBP|CHF|SEK|NOK|DKK|PLN|CZK|JPY|CAD|AUD|HUF)\b|€|\$|£|\bEuro\b`)

// pageCurrency is the currency the page names most, beside amounts first.
// reSectionAfter is what follows a section sign: a number of one or two
// digits, perhaps a letter, then words or the line's end, no amount.
var reSectionAfter = regexp.MustCompile(`^\s?\d{1,2}[a-z]?(\s+\p{L}|\s*$)`)

func (a *analysis) pageCurrency() string {
	count := map[string]int{}
	for i, xs := range a.amounts {
		for _, x := range xs {
			if x.currency != "" {
				count[x.currency] += 2
			}
		}
		raw := a.d.lines[i].raw
		for _, m := range reCurrencyWord.FindAllStringIndex(raw, 10) {
			if raw[m[0]] == '$' && reSectionAfter.MatchString(raw[m[1]:]) {
				// "$ 3 Vergütung": a contract's "§ 3" as OCR reads it.
				continue
			}
			count[currencyWords[raw[m[0]:m[1]]]]++
		}
	}
	best, n := "", 0
	for _, c := range []string{"EUR", "USD", "GBP", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "JPY", "CAD", "AUD", "HUF"} {
		if count[c] > n {
			best, n = c, count[c]
		}
	}
	return best
}

// pickVAT chooses the issuer's VAT id: labeled as a VAT id, outside the
// recipient's address and not labeled as the customer's, with valid check
// digits where the country has them.
func (a *analysis) pickVAT() string {
	type c struct {
		id    string
		score float64
	}
	var cs []c
	recipIDs := map[string]bool{}
	n := len(a.d.lines)
	for i, vs := range a.vats {
		for _, v := range vs {
			l, _ := a.governing(i, v.start, func(r role) bool { return r == rVATID || r == rVATIDRecipient || r == rTaxNo }, func(int, int, int) bool { return false })
			s := 1.0
			switch l.role {
			case rVATID:
				s += 2
			case rVATIDRecipient:
				recipIDs[v.id] = true
				continue
			}
			if a.recip[i] {
				recipIDs[v.id] = true
				continue
			}
			if reRecipientVATCtx.MatchString(a.d.lines[i].raw[:v.start]) {
				recipIDs[v.id] = true
				continue
			}
			if v.checked {
				s += 0.5
			} else {
				s -= 1
			}
			if i > n*3/4 || i < 12 {
				s += 0.3
			}
			cs = append(cs, c{v.id, s})
		}
	}
	var best c
	first := true
	for _, x := range cs {
		if recipIDs[x.id] {
			continue
		}
		if first && x.score >= 3 {
			// The first labelled id with valid check digits is the
			// letterhead's: a buyer's block or a template's footer
			// (whose id may be another's) comes later.
			x.score += vatFirstLabelled
			first = false
		}
		if x.score > best.score {
			best = x
		}
	}
	return best.id
}

// vatFirstLabelled outweighs the footer's place (0.3) but not a label
// (2) nor valid check digits (1.5).
const vatFirstLabelled = 0.5

var reRecipientVATCtx = regexp.MustCompile(`(?i)(ihre|your|kunde|customer|client|buyer|käufer|leistungsempf|empfänger|recipient|acheteur|destinataire)[^:]{0,30}:?\s*$`)

var reRecipientIBANCtx = regexp.MustCompile(`(?i)(ihr(e|em)?\s+(konto|iban|bankverbindung)|your\s+(account|iban|bank)|von\s+ihrem|debit|lastschrift|abbuchung|abgebucht|einzieh|eingezogen|prélev|prelev|mandat|zahlungspflichtig|debited)`)

// pickIBAN chooses the issuer's IBAN (for a bank statement, the account's);
// an IBAN the issuer will debit, or the employee's on a payslip, is not it.
func (a *analysis) pickIBAN() string {
	if a.kind == document.Payslip {
		return ""
	}
	fallback := ""
	for i, is := range a.ibans {
		for _, x := range is {
			if x.invalid {
				if fallback == "" && !a.recip[i] {
					fallback = x.iban
				}
				continue
			}
			if a.kind != document.BankStatement {
				ctx := a.d.lines[i].raw[:x.start]
				if i > 0 && len(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.ToUpper(ctx)), "IBAN"))) <= 1 {
					ctx = a.d.lines[i-1].raw + " " + ctx
				}
				if a.recip[i] || reRecipientIBANCtx.MatchString(ctx) {
					continue
				}
			}
			return x.iban
		}
	}
	return fallback
}
