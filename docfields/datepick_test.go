package docfields

import (
	"strings"
	"testing"
	"time"

	"acctapi/document"
)

// The dates reader step by step: each spelling's pass, the candidates and
// their features, then the choice.

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestDatePasses(t *testing.T) {
	for _, c := range []struct {
		name string
		line string
		pass func(*lineDates)
		want []string
	}{
		{"day month year", "am 5. März 2018 und 2nd May 2005", (*lineDates).dayMonthYear, []string{"2018-03-05", "2005-05-02"}},
		{"day month year glued to a word", "5 March 2018x", (*lineDates).dayMonthYear, nil},
		{"month day year", "March 5, 2018", (*lineDates).monthDayYear, []string{"2018-03-05"}},
		{"year month day", "2018-03-05 2018/02/30", (*lineDates).yearMonthDay, []string{"2018-03-05"}},
		{"dotted", "05.03.2018 5.3.18", (*lineDates).dotted, []string{"2018-03-05", "2018-03-05"}},
		{"dotted amount", "1.234,56", (*lineDates).dotted, nil},
		{"dotted year glued to a time", "06.07.1817:29", (*lineDates).dotted, []string{"2018-07-06"}},
		{"slashed", "05/03/2018", (*lineDates).slashed, []string{"2018-03-05"}},
		{"slashed month first", "03/25/2018", (*lineDates).slashed, []string{"2018-03-25"}},
		{"slashed phone number", "12-03-18-44", (*lineDates).slashed, nil},
		{"labelled run", "Date: 27092017", (*lineDates).runs, []string{"2017-09-27"}},
		{"timed run", "0405/2017 7:19:43 AM", (*lineDates).runs, []string{"2017-05-04"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &lineDates{s: c.line}
			c.pass(l)
			var got []string
			for _, d := range l.out {
				got = append(got, iso(d.t))
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k := range got {
				if got[k] != c.want[k] {
					t.Errorf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestDatePassesKeepSpansApart(t *testing.T) {
	l := &lineDates{s: "05.03.2018"}
	l.out = []dateTok{{t: day("2018-03-05"), start: 0, end: 10}}
	l.dotted()
	l.slashed()
	if len(l.out) != 1 {
		t.Errorf("got %+v, want the span found first alone", l.out)
	}
	if ambiguous := datesIn("05/03/2018"); len(ambiguous) != 1 || !ambiguous[0].ambiguous || iso(ambiguous[0].swapped) != "2018-05-03" {
		t.Errorf("05/03/2018: got %+v, want day first with month first kept", ambiguous)
	}
}

// site is the first date of the first line with marker.
func site(t *testing.T, a *analysis, marker string) dateSite {
	t.Helper()
	for i, l := range a.d.lines {
		if len(a.dates[i]) > 0 && strings.Contains(l.raw, marker) {
			return a.dateSite(i, 0)
		}
	}
	t.Fatalf("no date on a line with %q", marker)
	return dateSite{}
}

func TestDateSiteRoles(t *testing.T) {
	a := analyze(newDoc([]string{`RECHNUNG Nr. 7 vom
01.02.2024
Lieferschein Nr. 3 vom 20.01.2024
Rechnungsdatum/Lieferdatum: 02.02.2024
Leistungszeitraum 01.01.2024 - 31.01.2024
Summe 100,00`}))
	for _, c := range []struct {
		marker string
		want   role
	}{
		{"01.02.2024", rIssue},
		{"Lieferschein", rOrder},
		{"Rechnungsdatum", rIssue},
	} {
		if got := site(t, a, c.marker); got.r != c.want {
			t.Errorf("%s: role %v, want %v", c.marker, got.r, c.want)
		}
	}
	period := a.dates[4]
	if len(period) != 2 {
		t.Fatalf("period line dates %+v, want two", period)
	}
	if s := a.dateSite(4, 0); !s.periodStart || s.periodEnd {
		t.Errorf("period's first date: start %v end %v, want start", s.periodStart, s.periodEnd)
	}
	if s := a.dateSite(4, 1); s.periodStart || !s.periodEnd {
		t.Errorf("period's last date: start %v end %v, want end", s.periodStart, s.periodEnd)
	}
}

func TestDateFeatures(t *testing.T) {
	invoice := analyze(newDoc([]string{`Berlin, 03.02.2024
RECHNUNG Nr. 7
Rechnungsdatum: 01.02.2024
Datum 04.02.2024
Zahlung innerhalb 14 Tagen netto bis 15.02.2024
2% Skonto bei Zahlung bis 08.02.2024
Summe 100,00`}))
	receipt := analyze(newDoc([]string{"SHOP SDN BHD\nRECEIPT\n12/03/2018 14:22\nTOTAL 5.00\nCASH 10.00\nCHANGE 5.00"}))
	for _, c := range []struct {
		name    string
		a       *analysis
		marker  string
		feature func(*analysis, dateSite) float64
		want    float64
	}{
		{"issue label", invoice, "Rechnungsdatum", (*analysis).labelScore, dateW.Issue * labelWeight(rIssue, "Rechnungsdatum")},
		{"weak label", invoice, "Datum 04", (*analysis).labelScore, dateW.IssueWeak},
		{"no label", invoice, "Berlin", (*analysis).labelScore, dateW.Unlabelled},
		{"top", invoice, "Berlin", (*analysis).topScore, dateW.Top},
		{"top labelled", invoice, "Rechnungsdatum", (*analysis).topScore, 0},
		{"place", invoice, "Berlin", (*analysis).placeScore, dateW.Place},
		{"no place", invoice, "Rechnungsdatum", (*analysis).placeScore, 0},
		{"till clock", receipt, "14:22", (*analysis).tillClockScore, dateW.TillClock},
		{"no till clock on an invoice", invoice, "Berlin", (*analysis).tillClockScore, 0},
	} {
		if got := c.feature(c.a, site(t, c.a, c.marker)); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if !invoice.dueInLine(site(t, invoice, "netto bis")) {
		t.Error("netto bis: not read as the due date")
	}
	if invoice.dueInLine(site(t, invoice, "Skonto")) {
		t.Error("a discount's date read as the due date")
	}
}

func TestPeriodFeatures(t *testing.T) {
	a := analyze(newDoc([]string{`Kontoauszug Nr. 3
Girokonto DE89 3704 0044 0532 0130 00
Zeitraum 01.03.2024 - 31.03.2024
01.03.2024 Miete -900,00
15.03.2024 Gehalt 2.500,00
Alter Saldo 1.000,00
Neuer Saldo 2.600,00`}))
	if a.kind != document.BankStatement {
		t.Fatalf("kind %q, want a bank statement", a.kind)
	}
	end := a.dateSite(2, 1)
	if got := a.periodEndScore(end); got != dateW.PeriodEnd {
		t.Errorf("period's end: got %v, want %v", got, dateW.PeriodEnd)
	}
	if got := a.periodEndScore(a.dateSite(2, 0)); got != 0 {
		t.Errorf("period's start: got %v, want 0", got)
	}
	latest := a.latestDate()
	if iso(latest) != "2024-03-31" {
		t.Errorf("latest date %s, want 2024-03-31", iso(latest))
	}
	if got := a.statementLatestScore(a.dateSite(4, 0), latest); got != 0 {
		t.Errorf("an earlier date: got %v, want 0", got)
	}
	if issue, _ := a.pickDates(); issue != "2024-03-31" {
		t.Errorf("issue date %q, want the period's end", issue)
	}
}

func TestMonthCandidates(t *testing.T) {
	a := analyze(newDoc([]string{"Verdienstabrechnung\nAbrechnungsmonat: März 2024\nAuszahlungsbetrag 2.100,00"}))
	cs := a.monthCandidates()
	if len(cs) != 1 || iso(cs[0].t) != "2024-03-31" || cs[0].score != dateW.MonthLabelled {
		t.Errorf("got %+v, want March's last day scored %v", cs, dateW.MonthLabelled)
	}
}

func TestChooseDate(t *testing.T) {
	if _, _, ok := chooseDate(nil); ok {
		t.Error("chose a date from no candidates")
	}
	got, m, ok := chooseDate([]dateCand{
		{t: day("2024-02-01"), score: 2},
		{t: day("2024-02-03"), score: 3},
		{t: day("2024-02-03"), score: 2.5},
		{t: day("2024-02-04"), score: 3},
	})
	if !ok || iso(got.t) != "2024-02-03" {
		t.Errorf("chose %v, want the earlier of the two best", got)
	}
	if m.best != 3 || m.other != 3 {
		t.Errorf("margin %+v, want best 3 and the other date's 3", m)
	}
}

func TestDueDateNeverBeforeIssue(t *testing.T) {
	a := analyze(newDoc([]string{"RECHNUNG Nr. 7\nRechnungsdatum: 10.02.2024\nFällig am: 01.02.2024\nSumme 100,00"}))
	issue, due := a.pickDates()
	if issue != "2024-02-10" || due != "" {
		t.Errorf("got %q and due %q, want 2024-02-10 and no due date", issue, due)
	}
	if _, ok := a.margins[document.DueDate]; !ok {
		t.Error("the due date's margin is not kept")
	}
}
