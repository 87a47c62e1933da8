package docfields

import (
	_ "embed"
	"sort"
	"time"

	"acctapi/document"
)

// The issue and due dates are read in three steps, each tested alone, as
// the amounts are: dateCandidates gives every date of the page the role
// its label allows and scores it by the features below, each a function
// with a weight of its own in dateWeights; chooseDate takes the best of
// each role. A date's label decides its role; unlabelled dates at the top
// of the first page, and those after a place ("Berlin, 5. März 2018"),
// stand in for the issue date when no label names one. Delivery, order,
// birth and other labelled dates never do. Statements and payslips are
// dated by the end of their period.

// dateWeights names every weight the date reader uses.
type dateWeights struct {
	Issue, IssueOfNumber, IssueWeak float64 // labelled an issue date; "Rechnung Nr. 5 vom"; "Datum", "vom"
	Unlabelled, Top, Place          float64 // no label; on the first page's top; after a place ("Berlin, den")
	TillClock                       float64 // a receipt's date with its time of day
	DueInLine                       float64 // "zahlbar bis 04.04.2018"
	Period, PeriodEnd               float64 // a statement's or payslip's period; its end
	StatementLatest, StatementMonth float64 // a statement's latest date; less for its month alone
	Month, MonthLabelled            float64 // a month without a day; one labelled a period or date
}

// dateW are fitted as the amount weights are (TestFitWeights), and
// embedded from dateweights.json.
//
//go:embed dateweights.json
var dateWeightsJSON []byte

var dateW = embeddedWeights[dateWeights]("dateweights.json", dateWeightsJSON)

type dateCand struct {
	t     time.Time
	score float64
	line  int
}

// dateSite is one date of the page with the label that governs it.
type dateSite struct {
	d      dateTok
	line   int
	l      found   // the governing label
	r      role    // the role the label gives the date
	direct float64 // the label's weight by how directly it governs
	// The date opens or closes a period ("01.02.2018 - 28.02.2018").
	periodStart, periodEnd bool
}

// pickDates chooses the issue and due dates; a due date before the issue
// date is none.
func (a *analysis) pickDates() (string, string) {
	issue, due := a.dateCandidates()
	if a.periodic() {
		issue = append(issue, a.monthCandidates()...)
	}
	var is, ds string
	ic, m, ok := chooseDate(issue)
	if ok {
		a.margins[document.IssueDate] = m
		is = ic.t.Format("2006-01-02")
	}
	if dc, m, ok2 := chooseDate(due); ok2 {
		a.margins[document.DueDate] = m
		if !ok || !dc.t.Before(ic.t) {
			ds = dc.t.Format("2006-01-02")
		}
	}
	return is, ds
}

// periodic says whether the document is dated by the end of its period.
func (a *analysis) periodic() bool {
	return a.kind == document.BankStatement || a.kind == document.Payslip
}

// dateCandidates scores every date of the page for the issue date and
// takes those a due date's label or line governs for the due date.
func (a *analysis) dateCandidates() (issue, due []dateCand) {
	latest := a.latestDate()
	for i, ds := range a.dates {
		for k := range ds {
			c := a.dateSite(i, k)
			if c.r == rDue {
				due = append(due, dateCand{t: c.d.t, score: labelWeight(c.r, c.l.text) * c.direct, line: i})
			}
			s := a.labelScore(c) + a.topScore(c) + a.tillClockScore(c) + a.placeScore(c)
			if a.dueInLine(c) {
				due = append(due, dateCand{t: c.d.t, score: dateW.DueInLine, line: i})
				s = 0
			}
			switch {
			case !a.periodic():
				if (c.periodStart || c.periodEnd) && c.r != rIssue {
					// A period's dates are not the document's.
					s = 0
				}
			case c.periodStart:
				s = a.statementLatestScore(c, latest)
			default:
				s += a.periodEndScore(c)
				s += a.statementLatestScore(c, latest)
			}
			if s > 0 {
				issue = append(issue, dateCand{t: c.d.t, score: s, line: i})
			}
		}
	}
	return issue, due
}

// latestDate is the latest date the page prints.
func (a *analysis) latestDate() time.Time {
	var latest time.Time
	for _, ds := range a.dates {
		for _, d := range ds {
			if d.t.After(latest) {
				latest = d.t
			}
		}
	}
	return latest
}

// dateSite finds the label that governs date k of line i and the role it
// gives the date.
func (a *analysis) dateSite(i, k int) dateSite {
	ds, fix := a.dates[i], a.d.lines[i].fix
	d := ds[k]
	l, direct := a.governing(i, d.start, dateFamily, a.datesBetween)
	r := l.role
	if j := a.jointLabel(i, l); j.role == rIssue {
		// "Rechnungsdatum/Lieferdatum": one date for both.
		l, r = j, rIssue
	}
	if r == rNone {
		if p, ok := a.labelEndingAbove(i, d.start); ok {
			// "Rechnung Nr. 5 vom" at a line's end, its date wrapped to
			// the next.
			l, r, direct = p, p.role, 1
			if r == rIssueWeak {
				r = a.weakDateRole(i-1, p)
			}
		}
	} else if r == rIssueWeak {
		r = a.weakDateRole(i, l)
	}
	return dateSite{
		d: d, line: i, l: l, r: r, direct: direct,
		periodStart: k+1 < len(ds) && rePeriodJoin.MatchString(fix[d.end:ds[k+1].start]),
		periodEnd:   k > 0 && rePeriodJoin.MatchString(fix[ds[k-1].end:d.start]),
	}
}

// labelScore is what the date's label says of it as the issue date.
func (a *analysis) labelScore(c dateSite) float64 {
	switch c.r {
	case rIssue:
		if c.l.role == rIssueWeak {
			// "Rechnung Nr. 5 vom": the number's date.
			return dateW.IssueOfNumber * c.direct
		}
		return dateW.Issue * labelWeight(c.r, c.l.text) * c.direct
	case rIssueWeak:
		return dateW.IssueWeak * c.direct
	case rNone:
		return dateW.Unlabelled
	case rPeriod:
		if a.periodic() {
			return dateW.Period
		}
	}
	return 0
}

// topScore favours an unlabelled date on the first page's top.
func (a *analysis) topScore(c dateSite) float64 {
	if c.r == rNone && a.d.lines[c.line].page == 0 && c.line < 25 {
		return dateW.Top
	}
	return 0
}

// tillClockScore favours a receipt's unlabelled date with its time of
// day: a till prints the moment of the sale.
func (a *analysis) tillClockScore(c dateSite) float64 {
	if c.r == rNone && a.kind == document.Receipt && reClockNext.MatchString(a.d.lines[c.line].fix[c.d.end:]) {
		return dateW.TillClock
	}
	return 0
}

// placeScore favours a date after a place ("Berlin, den"), unlabelled or
// under a weak label.
func (a *analysis) placeScore(c dateSite) float64 {
	raw := a.d.lines[c.line].raw
	if (c.r == rNone || c.r == rIssueWeak) && rePlaceDate.MatchString(raw[:min(c.d.start, len(raw))]) {
		return dateW.Place
	}
	return 0
}

// dueInLine says whether an unlabelled date is what a line of payment
// terms asks to pay by ("Zahlbar innerhalb 30 Tagen netto bis
// 04.04.2018"), which a discount's line is not.
func (a *analysis) dueInLine(c dateSite) bool {
	raw := a.d.lines[c.line].raw
	return c.r == rNone && reDueLine.MatchString(raw) && reDueBefore.MatchString(raw[:min(c.d.start, len(raw))]) && !reDiscountLine.MatchString(raw)
}

// periodEndScore favours the date that closes a period.
func (a *analysis) periodEndScore(c dateSite) float64 {
	if c.periodEnd {
		return dateW.PeriodEnd
	}
	return 0
}

// statementLatestScore favours a statement's latest unlabelled date.
func (a *analysis) statementLatestScore(c dateSite, latest time.Time) float64 {
	if a.kind == document.BankStatement && c.r == rNone && c.d.t.Equal(latest) {
		return dateW.StatementLatest
	}
	return 0
}

// monthCandidates are the months printed without a day: the period of a
// payslip or a statement, less sure on a statement, which has days.
func (a *analysis) monthCandidates() []dateCand {
	var out []dateCand
	for i, ms := range a.months {
		for _, m := range ms {
			l, _ := a.governing(i, m.start, dateFamily, a.datesBetween)
			s := dateW.Month
			if l.role == rPeriod || l.role == rIssue || l.role == rIssueWeak {
				s = dateW.MonthLabelled
			}
			if a.kind == document.BankStatement {
				s -= dateW.StatementMonth
			}
			out = append(out, dateCand{t: m.t, score: s, line: i})
		}
	}
	return out
}

// chooseDate takes the candidate of the highest score, the earlier on a
// tie, with its margin over the best other date.
func chooseDate(cs []dateCand) (dateCand, margin, bool) {
	if len(cs) == 0 {
		return dateCand{}, margin{}, false
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].score > cs[j].score })
	m := margin{best: cs[0].score}
	for _, c := range cs[1:] {
		if !c.t.Equal(cs[0].t) {
			m.other = c.score
			break
		}
	}
	return cs[0], m, true
}
