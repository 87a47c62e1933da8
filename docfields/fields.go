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
	m := margin{best: cands[0].score}
	for _, c := range cands[1:] {
		if c.v != cands[0].v {
			m.other = c.score
			break
		}
	}
	a.margins[document.DocumentNumber] = m
	return cands[0].v
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
			if v.misshapen && (l.role != rVATID || a.inIBAN(i, v.start, v.end)) {
				// Digits a label does not name, or an IBAN's.
				continue
			}
			switch {
			case v.checked:
				s += 0.5
			case v.misshapen:
				// Printed under a VAT label, as written: a wrong id is
				// reported with a low confidence, never a well-shaped one
				// passed over for it.
				s -= 2.5
			default:
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

// inIBAN says whether the span start..end of line i overlaps an IBAN.
func (a *analysis) inIBAN(i, start, end int) bool {
	return slices.ContainsFunc(a.ibans[i], func(x ibanTok) bool { return start < x.end && x.start < end })
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
