package docfields

import (
	"regexp"
	"strings"

	"acctapi/document"
)

// Result is what a document's text says about it.
type Result struct {
	// Kind is one of document.Kinds, or "" when the text is too thin to
	// say.
	Kind string
	// Language is an ISO 639-1 code, or "" when unclear.
	Language string
	// Fields are the values read; amounts have two decimals ("1234.50",
	// "-12.00").
	Fields document.Fields
	// Confidence holds, for every field with a value (keyed by its
	// document field name), the probability in [0, 1] that it is right.
	Confidence map[string]float64
	// Evidence names, for the values whose confidence is calibrated on
	// real documents (dates, number, total), the class it was looked up
	// by: what the evaluation counts to calibrate it.
	Evidence map[string]string
	// Discount is the discount for early payment the text states.
	Discount Discount
	// Warnings say what the page states that cannot be right.
	Warnings []document.Warning
}

// Read reads a document's text. Form feeds separate pages.
func Read(text string) Result {
	return ReadPages(splitPages(text))
}

// ReadPages reads a document given page by page; the first page carries
// the header (title, letterhead, address window).
func ReadPages(pages []string) Result {
	a := analyze(newDoc(pages))
	return a.result()
}

// analysis holds what was found on each line, once.
type analysis struct {
	d       *doc
	labels  [][]found
	dates   [][]dateTok
	months  [][]dateTok
	amounts [][]amountTok
	vats    [][]vatTok
	ibans   [][]ibanTok
	kind    string
	lang    string
	mdy     bool
	recip   []bool // lines of the recipient's address
	// margins holds, for the values whose confidence is calibrated, the
	// winner's score and the best score of another value.
	margins map[string]margin
	// A till's payment and rounding line, found once: the kind and the
	// total both weigh them.
	paid         payment
	hasPaid      bool
	rounding     int64
	roundingLine int
	hasRounding  bool
	// The distinct amounts the page labels net and tax, which the
	// warnings check the total against when the reader left them out.
	labelledNet, labelledTax []int64
}

func analyze(d *doc) *analysis {
	n := len(d.lines)
	a := &analysis{d: d, labels: make([][]found, n), dates: make([][]dateTok, n), months: make([][]dateTok, n),
		amounts: make([][]amountTok, n), vats: make([][]vatTok, n), ibans: make([][]ibanTok, n), margins: map[string]margin{}}
	for i, l := range d.lines {
		if strings.TrimSpace(l.raw) == "" || i >= headLines && i < n-tailLines {
			// A long document says what it is at its start and sums up
			// at its end; the pages between are read for nothing.
			continue
		}
		a.labels[i] = labelsIn(l.raw)
		a.dates[i] = datesIn(l.fix)
		a.months[i] = monthsIn(l.fix, a.dates[i])
		a.amounts[i] = dropDates(amountsIn(l.fix), a.dates[i])
		a.vats[i] = vatsIn(l.raw)
		a.ibans[i] = ibansIn(l.raw)
	}
	a.paid, a.hasPaid = a.payment()
	a.rounding, a.roundingLine, a.hasRounding = a.roundingAdjustment()
	a.kind = kindOf(a)
	a.lang = languageOf(d)
	a.mdy = a.monthFirst()
	if a.mdy {
		for i := range a.dates {
			for k, t := range a.dates[i] {
				if t.ambiguous {
					a.dates[i][k].t, a.dates[i][k].swapped = t.swapped, t.t
				}
			}
		}
	}
	a.recip = a.recipientLines()
	return a
}

func dropDates(as []amountTok, ds []dateTok) []amountTok {
	out := as[:0]
	for _, x := range as {
		in := false
		for _, d := range ds {
			if x.start < d.end && d.start < x.end {
				in = true
			}
		}
		if !in {
			out = append(out, x)
		}
	}
	return out
}

var reUSMarks = regexp.MustCompile(`(\$\s?\d|\bUSD\b|\bsales tax\b|\b(?:AL|AK|AZ|CA|CO|CT|FL|GA|IL|MA|MI|MN|NJ|NY|NC|OH|OR|PA|TX|VA|WA|WI)\s+\d{5}(?:-\d{4})?\b|\bInc\.|\bLLC\b)`)

// reDayFirstMarks are what pages of day-first countries print: a VAT or
// GST, ringgit, euros, pounds. One outweighs a "$" OCR made of an "S".
var reDayFirstMarks = regexp.MustCompile(`(?i)(\bGST\b|\bVAT\b|\bMwSt|\bRM\s?\d|\bSdn\.?\s+Bhd\b|€|£|\bEUR\b|\bGBP\b)`)

// monthFirst decides how "05/03/2018" reads: day first unless a date of
// the page proves month first (a second part above 12) or the page looks
// American (dollars, a state and ZIP code) and nothing proves day first:
// neither a date nor a mark of a day-first country.
func (a *analysis) monthFirst() bool {
	dmy, mdy, ambiguous := false, false, false
	for _, ds := range a.dates {
		for _, d := range ds {
			if !d.slash {
				continue
			}
			if d.first > 12 && d.sec <= 12 {
				dmy = true
			}
			if d.sec > 12 && d.first <= 12 {
				mdy = true
			}
			if d.ambiguous {
				ambiguous = true
			}
		}
	}
	if dmy != mdy {
		return mdy
	}
	if dmy && mdy {
		return false
	}
	if a.lang != "en" && a.lang != "" || !ambiguous {
		return false
	}
	hits := 0
	for _, l := range a.d.lines {
		if reDayFirstMarks.MatchString(l.raw) {
			return false
		}
		hits += len(reUSMarks.FindAllStringIndex(l.raw, 3))
	}
	return hits >= 2
}

func (a *analysis) result() Result {
	r := Result{Kind: a.kind, Language: a.lang}
	if r.Kind == "" && len(a.d.lines) == 0 {
		return r
	}
	f := &r.Fields
	f.IssueDate, f.DueDate = a.pickDates()
	f.DocumentNumber = a.pickNumber()
	f.NetAmount, f.TaxAmount, f.TotalAmount, f.Currency = a.pickAmounts()
	f.IssuerVATID = a.pickVAT()
	f.IssuerIBAN = a.pickIBAN()
	f.IssuerName = a.pickIssuer()
	r.Confidence, r.Evidence = a.confidence(f)
	r.Discount = discountOf(a.d.lines, f.IssueDate)
	r.Warnings = a.warnings(*f)
	return r
}

// governing finds the label a value at [start,end) of line i belongs to:
// the nearest label before it on its line, or, when its line has none,
// the label above it in the same column (a header over its value). The
// second result is how directly it applies (1 beside, lower inherited).
func (a *analysis) governing(i, start int, family func(role) bool, valuesBetween func(i, from, to int) bool) (found, float64) {
	ls := a.labels[i]
	for k := len(ls) - 1; k >= 0; k-- {
		l := ls[k]
		if l.end > start || l.role == rItemHeader {
			// Item headers head columns, never a value beside them.
			continue
		}
		if !family(l.role) {
			break
		}
		rawGap := a.d.lines[i].raw[l.end:start]
		gap := strings.Trim(rawGap, " :.-=#")
		if strings.Contains(rawGap, "   ") && reProse.MatchString(gap) {
			// Words and a column gap between: the label is another
			// column's.
			break
		}
		weak := l.role == rIssueWeak || l.role == rDocNoWeak || l.role == rTotalLow
		if weak && len(gap) > 6 {
			break
		}
		if len(gap) > 60 {
			break
		}
		if valuesBetween(i, l.end, start) {
			return l, 0.8
		}
		return l, 1
	}
	if l, ok := a.blockLabel(i, family, valuesBetween); ok {
		return l, 0.85
	}
	return a.above(i, start, family, valuesBetween)
}

// blockLabel pairs a run of label lines with the run of value lines that
// follows it, in order, as text extracted without layout gives them
// ("Nettobetrag / Steuerbetrag / Bruttosumme" then "473,00 / 56,87 /
// 529,87"). It answers only when both runs are equally long.
func (a *analysis) blockLabel(i int, family func(role) bool, valuesBetween func(i, from, to int) bool) (found, bool) {
	valueOnly := func(k int) bool {
		raw := strings.TrimSpace(a.d.lines[k].raw)
		return raw != "" && len(a.labels[k]) == 0 && len(a.valueStarts(k, family)) == 1 && len(raw) <= 24
	}
	labelOnly := func(k int) bool {
		raw := a.d.lines[k].raw
		ls := a.labels[k]
		if len(ls) == 0 || valuesBetween(k, 0, len(raw)) || len(a.amounts[k]) > 0 || len(a.dates[k]) > 0 {
			return false
		}
		lead := strings.TrimSpace(raw[:ls[0].start])
		rest := strings.TrimSpace(raw[ls[len(ls)-1].end:])
		return lead == "" && len(rest) <= 30
	}
	if !valueOnly(i) {
		return found{}, false
	}
	blank := func(k int) bool { return strings.TrimSpace(a.d.lines[k].raw) == "" }
	// The value run around line i.
	var vals []int
	k := i
	for k >= 0 && len(vals) < 12 && (valueOnly(k) || blank(k)) {
		if !blank(k) {
			vals = append([]int{k}, vals...)
		}
		k--
	}
	for k2 := i + 1; k2 < len(a.d.lines) && len(vals) < 24 && (valueOnly(k2) || blank(k2)); k2++ {
		if !blank(k2) {
			vals = append(vals, k2)
		}
	}
	// The label run just above it.
	var labs []int
	for k >= 0 && len(labs) < 24 && (labelOnly(k) || blank(k)) {
		if !blank(k) {
			labs = append([]int{k}, labs...)
		}
		k--
	}
	if len(vals) < 2 || len(labs) != len(vals) {
		return found{}, false
	}
	for n, v := range vals {
		if v == i {
			l := a.labels[labs[n]][0]
			if !family(l.role) {
				return found{}, false
			}
			return l, true
		}
	}
	return found{}, false
}

// above finds the column header over a value: the nearest line above
// with labels and no values, across the rows of a table.
func (a *analysis) above(i, start int, family func(role) bool, valuesBetween func(i, from, to int) bool) (found, float64) {
	for up, skipped, rows := i-1, 0, 0; up >= 0 && skipped < 2 && rows < 8; up-- {
		raw := a.d.lines[up].raw
		if strings.TrimSpace(raw) == "" {
			skipped++
			continue
		}
		if valuesBetween(up, 0, len(raw)) {
			// A row of the same table.
			rows++
			continue
		}
		if l, ok := a.aligned(up, i, start, family, valuesBetween); ok {
			return l, 0.9 - 0.02*float64(rows)
		}
		if len(a.labels[up]) == 0 && skipped < 2 {
			// Prose of another column, interleaved by the extraction.
			skipped++
			continue
		}
		break
	}
	return found{}, 0
}

// aligned picks the label of header line up that stands over the value
// at start on line i: by cell index when the two lines have as many
// cells as labels, else by column overlap.
func (a *analysis) aligned(up, i, start int, family func(role) bool, valuesBetween func(i, from, to int) bool) (found, bool) {
	ls := a.labels[up]
	if len(ls) == 0 || valuesBetween(up, 0, len(a.d.lines[up].raw)) {
		return found{}, false
	}
	items := 0
	for _, l := range ls {
		if l.role == rItemHeader {
			items++
		}
	}
	// A header of several lines: a line above may name the item columns.
	for h := up - 1; h >= 0 && h >= up-3 && len(a.labels[h]) > 0 && !valuesBetween(h, 0, len(a.d.lines[h].raw)); h-- {
		for _, l := range a.labels[h] {
			if l.role == rItemHeader {
				items++
			}
		}
	}
	hdr := a.d.lines[up].raw
	cur := a.d.lines[i].raw
	// Only labels that start a cell of the header count as column heads.
	// Each header cell is headed by its most telling label: "Montant
	// EUR HT" by "HT", not by "Montant".
	var heads []found
	hc := cells(hdr)
	for _, c := range hc {
		best := -1
		for k, l := range ls {
			if l.start >= c.start && l.start < c.end && (best < 0 || headRank(l.role) > headRank(ls[best].role)) {
				best = k
			}
		}
		if best >= 0 {
			heads = append(heads, ls[best])
		}
	}
	if len(heads) == 0 {
		return found{}, false
	}
	pick := func(l found) (found, bool) {
		if !family(l.role) || (items >= 2 && l.role != rItemHeader && !l.role.isDate()) {
			return found{}, false
		}
		return l, true
	}
	cc := cells(cur)
	if len(heads) == 1 && len(hc) == 1 && len(a.valueStarts(i, family)) <= 1 {
		return pick(heads[0])
	}
	if len(cc) == len(hc) && len(hc) == len(heads) {
		for k, c := range cc {
			if start >= c.start && start < c.end {
				return pick(heads[k])
			}
		}
	}
	// Squeezed columns (OCR keeps one space between them): as many
	// values, or words, as labels pair up in order.
	if len(ls) > 1 && (len(cc) == 1 || len(hc) == 1) {
		if vs := a.valueStarts(i, family); len(vs) == len(ls) {
			for k, v := range vs {
				if v == start {
					return pick(ls[k])
				}
			}
		}
		if ws := wordStarts(cur); len(ws) == len(ls) {
			for k := len(ws) - 1; k >= 0; k-- {
				if ws[k] <= start {
					return pick(ls[k])
				}
			}
		}
	}
	// Column overlap, allowing for a few columns of drift.
	vc := column(cur, start)
	best, bestDist := -1, 1<<30
	for k, l := range heads {
		lc0, lc1 := column(hdr, l.start), column(hdr, l.end)
		dist := 0
		switch {
		case vc < lc0-3:
			dist = lc0 - vc
		case vc > lc1+12:
			dist = vc - lc1
		}
		if k+1 < len(heads) && vc >= column(hdr, heads[k+1].start)-1 {
			continue
		}
		if dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best >= 0 && bestDist <= 8 {
		return pick(heads[best])
	}
	return found{}, false
}

func headRank(r role) int {
	switch r {
	case rNet, rTax, rGross, rDue2:
		return 3
	case rTotal, rTotalLow, rIssueWeak:
		return 1
	case rItemHeader:
		return 0
	}
	return 2
}

// valueStarts lists where the values of a family start on line i.
func (a *analysis) valueStarts(i int, family func(role) bool) []int {
	var out []int
	if family(rIssue) {
		for _, d := range a.dates[i] {
			out = append(out, d.start)
		}
		return out
	}
	if family(rGross) {
		for _, x := range a.amounts[i] {
			if !x.percent {
				out = append(out, x.start)
			}
		}
	}
	return out
}

func wordStarts(s string) []int {
	var out []int
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && (i == 0 || s[i-1] == ' ') {
			out = append(out, i)
		}
	}
	return out
}

func (a *analysis) datesBetween(i, from, to int) bool {
	for _, d := range a.dates[i] {
		if d.start >= from && d.end <= to {
			return true
		}
	}
	return false
}

func (a *analysis) amountsBetween(i, from, to int) bool {
	for _, x := range a.amounts[i] {
		if x.start >= from && x.end <= to && !x.percent {
			return true
		}
	}
	return false
}

func dateFamily(r role) bool { return r.isDate() }

var reReference = regexp.MustCompile(`(?i)(\bzu[rm]?|\bauf|\bsur|\bto|\bfor|\bbezüglich|\bbetreffend|\bgemäß|\bre:|\bref\.?|\bihre[rn]?|\byour|\bvotre|\bstorno|\bcorrection of|\bkorrektur)\s*$`)

// reProse is a word of running text (not "19 %", "EUR" or "(S)").
var reProse = regexp.MustCompile(`\p{Ll}{3,}`)

var (
	reDueLine      = regexp.MustCompile(`(?i)(zahlbar|zahlung|zahlen|payable|payment|pay\b|fällig|faellig|\bdue\b|échéance|régler|à payer|a payer|überweisen|ueberweisen|paiement)`)
	reDueBefore    = regexp.MustCompile(`(?i)(\bbis|\bby|\buntil|\bbefore|avant le|au plus tard le|\bam|\bon|\bzum)\s*(?:zum\s*)?$`)
	reDiscountLine = regexp.MustCompile(`(?i)(skonto|discount|escompte|rabatt)`)
)

var reClockNext = regexp.MustCompile(`^\s{0,4}(?:[01]?\d|2[0-3])[:.][0-5]\d\b`)

var rePlaceDate = regexp.MustCompile(`(?i)[\pL][\pL .\-/()]{1,40},\s*(?:den|am|le|the|im)?\s*$`)
var rePeriodJoin = regexp.MustCompile(`(?i)^\s*(?:-|bis|to|au|until|through|thru|\.\.)\s*(?:zum|le)?\s*$`)

// labelEndingAbove is the date label that ends the line above line i,
// when a value opens line i at start.
func (a *analysis) labelEndingAbove(i, start int) (found, bool) {
	if i == 0 || strings.TrimSpace(a.d.lines[i].raw[:min(start, len(a.d.lines[i].raw))]) != "" {
		return found{}, false
	}
	ls := a.labels[i-1]
	if len(ls) == 0 || len(a.dates[i-1]) > 0 {
		return found{}, false
	}
	p := ls[len(ls)-1]
	if (p.role == rIssue || p.role == rIssueWeak) && strings.TrimRight(a.d.lines[i-1].raw[p.end:], " :") == "" {
		return p, true
	}
	return found{}, false
}

var reLabelJoin = regexp.MustCompile(`(?i)^\s*(/|&|\+|und|and|et|=)\s*$`)

// jointLabel returns the label joined to l by a slash or "und" before it.
func (a *analysis) jointLabel(i int, l found) found {
	for _, p := range a.labels[i] {
		if p.end <= l.start && reLabelJoin.MatchString(a.d.lines[i].raw[p.end:l.start]) {
			return p
		}
	}
	return found{}
}

// weakDateRole reads "vom", "du", "Datum" by what precedes it on the
// line: "Lieferschein Nr. 5 vom" dates the delivery note, "Rechnung Nr. 5
// vom" the invoice.
func (a *analysis) weakDateRole(i int, l found) role {
	switch strings.ToLower(l.text) {
	case "vom", "von", "du", "am", "den", "le":
	default:
		return rIssueWeak
	}
	ls := a.labels[i]
	if len(ls) > 0 && ls[0].role == rOtherDate && strings.Contains(ls[0].canon, "version") {
		// "Stylesheet-Version:   2.6 vom 10.11.2025": the version's date.
		return rOtherDate
	}
	for k := len(ls) - 1; k >= 0; k-- {
		p := ls[k]
		if p.end > l.start {
			continue
		}
		if l.start-p.end > 30 {
			break
		}
		switch p.role {
		case rOrderNo, rOrder:
			return rOrder
		case rDelivery:
			return rDelivery
		case rCustomerNo, rTaxNo, rOtherDate, rBirth:
			return rOtherDate
		case rDue:
			return rDue
		case rDocNo, rDocNoWeak, rIssue:
			// "Gutschrift zu Rechnung 5 vom": another document's date.
			if reReference.MatchString(a.d.lines[i].raw[:p.start]) {
				return rOtherDate
			}
			return rIssue
		}
		break
	}
	return rIssueWeak
}
