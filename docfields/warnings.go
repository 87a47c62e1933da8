package docfields

import (
	"cmp"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"acctapi/document"
)

// warnings says what the page states that cannot be right, in the words
// every reader shares (package document): an IBAN whose check digits
// fail, a seller's VAT id not of its country's shape, a net and a tax that
// do not add up to the total, an issue or due date that is no day.
func (a *analysis) warnings(f document.Fields) []document.Warning {
	var out []document.Warning
	if f.IssuerIBAN != "" && !ibanValid(f.IssuerIBAN) {
		out = append(out, document.IBANCheckFails(f.IssuerIBAN))
	}
	if id := cmp.Or(f.IssuerVATID, a.labelledVATID()); id != "" && !vatShaped(id) {
		out = append(out, document.VATIDMisshapen(id))
	}
	if net, tax, ok := a.sidesOf(f); ok && !addsUp(net, tax, f.TotalAmount) {
		out = append(out, document.SumsDiffer(net, tax, f.TotalAmount))
	}
	return append(out, a.dateWarnings(f)...)
}

// vatShaped says whether a VAT id as the reader gives it has its
// country's shape.
func vatShaped(id string) bool {
	if strings.HasPrefix(id, "CHE") {
		return vatFormats["CH"].MatchString("E" + id[3:])
	}
	f := vatFormats[id[:min(2, len(id))]]
	return f != nil && f.MatchString(id[2:])
}

// reVATAfterLabel is what follows a VAT id's label: a country's prefix and
// a digit, however short ("USt-IdNr.: DE12345").
var reVATAfterLabel = regexp.MustCompile(`^[\s:.]*((?:CHE|[A-Z]{2})[\s.-]?\d[\d\s.-]*)`)

// labelledVATID is the id printed after a label of the seller's VAT id
// that the reader did not take for one, spaces and dots removed, or "".
func (a *analysis) labelledVATID() string {
	for i, ls := range a.labels {
		if a.recip[i] {
			continue
		}
		raw := a.d.lines[i].raw
		for _, l := range ls {
			if l.role != rVATID || l.end > len(raw) {
				continue
			}
			after := raw[l.end:]
			m := reVATAfterLabel.FindStringSubmatchIndex(after)
			if m == nil || m[1] < len(after) && isLetter(after[m[1]]) {
				// Letters among the digits: a misreading, not an id.
				continue
			}
			id := strings.NewReplacer(" ", "", ".", "", "-", "").Replace(after[m[2]:m[3]])
			if _, known := vatFormats[id[:2]]; known || strings.HasPrefix(id, "CHE") {
				return id
			}
		}
	}
	return ""
}

// sidesOf are the net and the tax a total is checked against: those read,
// else, on an invoice or a credit note whose net or tax was left out, the
// one amount the page labels net and the one it labels tax.
func (a *analysis) sidesOf(f document.Fields) (net, tax string, ok bool) {
	if f.TotalAmount == "" {
		return "", "", false
	}
	if f.NetAmount != "" && f.TaxAmount != "" {
		return f.NetAmount, f.TaxAmount, true
	}
	if a.kind != document.Invoice && a.kind != document.CreditNote || len(a.labelledNet) != 1 || len(a.labelledTax) != 1 {
		return "", "", false
	}
	return formatCents(a.labelledNet[0]), formatCents(a.labelledTax[0]), true
}

// labelledAmounts are the distinct amounts of the candidates a label named.
func labelledAmounts(cs []amtCand) []int64 {
	var out []int64
	for _, c := range cs {
		if c.labled && !slices.Contains(out, c.x.cents) {
			out = append(out, c.x.cents)
		}
	}
	return out
}

// addsUp reports whether net + tax = total, exactly.
func addsUp(net, tax, total string) bool {
	n, okN := new(big.Rat).SetString(net)
	t, okT := new(big.Rat).SetString(tax)
	g, okG := new(big.Rat).SetString(total)
	return !okN || !okT || !okG || n.Add(n, t).Cmp(g) == 0
}

// reDayLike is a numeric date as printed, day or month first.
var reDayLike = regexp.MustCompile(`(?:^|[^\d.,/-])((\d{1,2})([./-])(\d{1,2})[./-](\d{4}))(?:$|[^\d])`)

// dateWarnings warn of an issue or due date, under its label, that is no
// day ("31.02.2026") where the reader read none.
func (a *analysis) dateWarnings(f document.Fields) []document.Warning {
	var out []document.Warning
	for i, l := range a.d.lines {
		if len(a.labels[i]) == 0 && (i == 0 || len(a.labels[i-1]) == 0) {
			continue
		}
		for _, m := range reDayLike.FindAllStringSubmatchIndex(l.fix, 5) {
			if a.datesBetween(i, m[2], m[3]) || !noDay(l.fix[m[4]:m[5]], l.fix[m[8]:m[9]], l.fix[m[10]:m[11]]) {
				continue
			}
			label, _ := a.governing(i, m[2], dateFamily, a.datesBetween)
			text := l.fix[m[2]:m[3]]
			switch {
			case (label.role == rIssue || label.role == rIssueWeak) && f.IssueDate == "":
				out = append(out, document.NotAValue(document.IssueDate, "issue date", text, "a day"))
			case label.role == rDue && f.DueDate == "":
				out = append(out, document.NotAValue(document.DueDate, "due date", text, "a day"))
			}
		}
	}
	return out
}

// noDay says whether a date printed as a, b and year y has the parts of a
// day (a month of 1 to 12, a day of 1 to 31, a year a document may have)
// yet names none, either way round: 31.02., 04/31.
func noDay(as, bs, ys string) bool {
	a, _ := strconv.Atoi(as)
	b, _ := strconv.Atoi(bs)
	y, _ := strconv.Atoi(ys)
	if !validYear(y) || a < 1 || b < 1 || min(a, b) > 12 || max(a, b) > 31 {
		return false
	}
	_, dayFirst := mkDate(y, b, a)
	_, monthFirst := mkDate(y, a, b)
	return !dayFirst && !monthFirst
}
