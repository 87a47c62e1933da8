package docfields

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A date as printed, with where it was found.
type dateTok struct {
	t          time.Time
	start, end int  // byte offsets in the line
	ambiguous  bool // numeric d/m or m/d with both parts <= 12
	swapped    time.Time
	slash      bool // written with '/' or '-' between numbers: the order may be m/d
	monthOnly  bool // "März 2018", "03/2018": a month, not a day
	first, sec int  // the numeric parts as printed, for the m/d decision
}

var months = func() map[string]time.Month {
	months := map[string]time.Month{}
	add := func(m time.Month, names ...string) {
		for _, n := range names {
			months[n] = m
		}
	}
	add(1, "januar", "jänner", "jan", "january", "janvier", "janv", "janv.", "gennaio", "enero", "januari")
	add(2, "februar", "feb", "february", "février", "fevrier", "févr", "fevr", "febr", "feber")
	add(3, "märz", "maerz", "marz", "mär", "mrz", "mar", "march", "mars")
	add(4, "april", "apr", "avril", "avr")
	add(5, "mai", "may")
	add(6, "juni", "jun", "june", "juin")
	add(7, "juli", "jul", "july", "juillet", "juil")
	add(8, "august", "aug", "août", "aout")
	add(9, "september", "sep", "sept", "septembre")
	add(10, "oktober", "okt", "october", "oct", "octobre")
	add(11, "november", "nov", "novembre")
	add(12, "dezember", "dez", "december", "dec", "décembre", "decembre", "déc")
	return months
}()

// monthAlt matches the month names as OCR may misread them ("Oct0ber",
// "scptembre"); monthOf reads a match back.
var monthAlt = func() string {
	names := strings.Split(`januar|jänner|january|janvier|janv|jan|februar|february|février|fevrier|févr|fevr|febr|feb|märz|maerz|marz|mär|mrz|march|mars|mar|april|avril|apr|avr|mai|may|juni|june|juin|jun|juli|july|juillet|juil|jul|august|août|aout|aug|september|septembre|sept|sep|oktober|october|octobre|okt|oct|november|novembre|nov|dezember|december|décembre|decembre|déc|dez|dec`, "|")
	r := strings.NewReplacer("o", "[o0]", "i", "[il1|]", "l", "[l1|i]", "e", "[ec]", "m", "(?:m|rn)", "a", "[ao]")
	for k, n := range names {
		names[k] = r.Replace(n)
	}
	return strings.Join(names, "|")
}()

var monthKeys = func() map[string]time.Month {
	m := map[string]time.Month{}
	for k, v := range months {
		m[monthKey(k)] = v
	}
	return m
}()

var monthFolder = strings.NewReplacer("0", "o", "1", "l", "|", "l", "i", "l", "c", "e", "a", "o")

// monthKey folds a month name the way monthAlt tolerates it.
func monthKey(s string) string {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	s = strings.ReplaceAll(s, "rn", "m")
	return monthFolder.Replace(s)
}

func monthOf(s string) (time.Month, bool) {
	m, ok := monthKeys[monthKey(s)]
	return m, ok
}

var (
	// 05.03.2018, 5.3.18, 05,03.2018 (OCR), 05. 03. 2018
	reDMYDot = regexp.MustCompile(`(\d{1,2})\s?[.,]\s?(\d{1,2})\s?[.]\s?(\d{4}|\d{2})`)
	// 05/03/2018, 05-03-2018, 5/3/18
	reDMYSlash = regexp.MustCompile(`(\d{1,2})\s?([/-])\s?(\d{1,2})\s?[/-]\s?(\d{4}|\d{2})`)
	// 2018-03-05, 2018/03/05, 2018.03.05
	reYMD = regexp.MustCompile(`(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})`)
	// 5. März 2018, 05. Mrz. 2018, 2nd May 2005, 12-Mar-2024, 1er mars 2018
	reDMonY = regexp.MustCompile(`(?i)(\d{1,2})(?:st|nd|rd|th|er|\.)?\s*(?:of\s+|de\s+)?[-\s]?(` + monthAlt + `)\.?[-\s,]*(\d{4}|\d{2})`)
	// March 5, 2018, Mar 5th 2018
	reMonDY = regexp.MustCompile(`(?i)(` + monthAlt + `)\.?\s*(\d{1,2})(?:st|nd|rd|th)?\s?,?\s*(\d{4})`)
	// März 2018, 03/2018: a month, for periods
	reMonY  = regexp.MustCompile(`(?i)(` + monthAlt + `)\.?\s*(\d{4})`)
	reMMYYY = regexp.MustCompile(`(\d{1,2})\s?[/.]\s?(\d{4})`)
	// "Date: 27092017", "Date 0502/2018", "Sat 21710/2017": a till's date
	// right after its label or weekday, its separators lost or read as 1
	// or 7. A faded "Date" reads "Bate" or "Cate".
	reLabelledRun = regexp.MustCompile(`(?i)\b(?:[bcd]ate|datz|dated|datum|tarikh|mon|tue|wed|thu|fri|sat|sun)\b[\s:.]{0,8}((\d{2})[17/]?(\d{2})[17/]?(\d{4}))(?:[^\d/]|$)`)
	// "0405/2017 7:19:43 AM": such a run before the time of day, its
	// label lost.
	reTimedRun = regexp.MustCompile(`(?:^|[^\d/])((\d{2})[17/]?(\d{2})[17/]?(\d{4}))\s{1,4}(?:[01]?\d|2[0-3]):[0-5]\d\b`)
)

// hasMonthName reports whether a word of s reads as a month name.
func hasMonthName(s string) bool {
	start := -1
	for i := 0; i <= len(s); i++ {
		word := i < len(s) && (isLetter(s[i]) || s[i] >= 0x80 || s[i] == '|' || isNum(s[i]))
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 3 && i-start <= 10 {
			w := s[start:i]
			if _, ok := monthOf(w); ok {
				return true
			}
			// "2nd May", "5.März": digits glued before the name.
			if t := strings.Trim(w, "0123456789"); t != w && len(t) >= 3 {
				if _, ok := monthOf(t); ok {
					return true
				}
			}
		}
		start = -1
	}
	return false
}

func validYear(y int) bool { return y >= 1990 && y <= latestYear() }

// latestYear is the last year a document's date can name: a year after
// next is a misread, or no date at all ("RCI1-23-42", an article). It is
// asked each time, since a server runs across New Year.
func latestYear() int { return time.Now().Year() + 1 }

func year(s string) int {
	y, _ := strconv.Atoi(s)
	switch len(s) {
	case 2:
		if y < 70 {
			y += 2000
		} else {
			y += 1900
		}
	case 4:
		if y > latestYear() {
			if r, ok := undoMisread(s, validYear); ok {
				y = r
			}
		}
	}
	return y
}

// undoMisread reads the digits s again as a thermal print's faded 0 and
// 1, which OCR takes for 6 and 7 ("30/03/2618", "10/03/2078") and less
// often 0 for 8 or 3 ("32/02/2018"): the one value ok accepts with a
// single such digit undone, the rarer misreadings tried only where the
// common ones give nothing. Two that fit ("67": 07 and 61) are no answer.
func undoMisread(s string, ok func(int) bool) (int, bool) {
	for _, misread := range []map[byte]byte{{'6': '0', '7': '1'}, {'8': '0', '3': '0'}} {
		found, n := 0, 0
		for i := range len(s) {
			d, has := misread[s[i]]
			if !has {
				continue
			}
			v, _ := strconv.Atoi(s[:i] + string(d) + s[i+1:])
			if ok(v) && (n == 0 || v != found) {
				found, n = v, n+1
			}
		}
		if n > 0 {
			return found, n == 1
		}
	}
	return 0, false
}

// dayMonth is a numeric date's day and month as printed; beside a year
// of four digits, a part no date can have is read again (see
// undoMisread). A two-digit year's "23-69 - 12" is more often no date.
func dayMonth(ds, ms, ys string) (int, int) {
	d, _ := strconv.Atoi(ds)
	m, _ := strconv.Atoi(ms)
	if len(ys) != 4 {
		return d, m
	}
	if d > 31 {
		if r, ok := undoMisread(ds, func(v int) bool { return v >= 1 && v <= 31 }); ok {
			d = r
		}
	}
	if m > 12 {
		if r, ok := undoMisread(ms, func(v int) bool { return v >= 1 && v <= 12 }); ok {
			m = r
		}
	}
	return d, m
}

func mkDate(y, m, d int) (time.Time, bool) {
	if !validYear(y) || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

func isNum(b byte) bool { return b >= '0' && b <= '9' }

// datesIn finds the dates of a line (its digit-repaired spelling). Spans
// never overlap: a longer spelling found first wins, so the spellings are
// searched in this order, each by a function of its own.
func datesIn(s string) []dateTok {
	digits := 0
	for i := 0; i < len(s); i++ {
		if isNum(s[i]) {
			digits++
		}
	}
	if digits < 4 {
		return nil
	}
	l := &lineDates{s: s}
	if hasMonthName(s) {
		// Most lines name no month, and the names' patterns are the slow
		// part.
		l.s = firstAsOne(s)
		l.dayMonthYear()
		l.monthDayYear()
	}
	l.yearMonthDay()
	l.dotted()
	l.slashed()
	l.runs()
	// Each spelling was found in a pass of its own: the line's order is
	// what readers of two neighbouring dates ("01.02.2018 bis 5 March
	// 2018") rely on.
	slices.SortFunc(l.out, func(x, y dateTok) int { return x.start - y.start })
	return l.out
}

// lineDates is one line's dates as its passes find them.
type lineDates struct {
	s   string
	out []dateTok
}

// taken says whether the span a..b overlaps a date found before.
func (l *lineDates) taken(a, b int) bool {
	for _, d := range l.out {
		if a < d.end && d.start < b {
			return true
		}
	}
	return false
}

// edge says whether the span a..b stands alone: no digit glued to it.
func (l *lineDates) edge(a, b int) bool {
	return (a == 0 || !isNum(l.s[a-1])) && (b >= len(l.s) || !isNum(l.s[b]))
}

// named adds a date whose month is named, its day in group 1 or 2 as
// dayGroup says, and its year last; a span found before wins.
func (l *lineDates) named(m []int, monGroup, dayGroup int) {
	s := l.s
	mon, ok := monthOf(s[m[2*monGroup]:m[2*monGroup+1]])
	if !ok {
		return
	}
	d, _ := strconv.Atoi(s[m[2*dayGroup]:m[2*dayGroup+1]])
	if t, ok := mkDate(year(s[m[6]:m[7]]), int(mon), d); ok && !l.taken(m[0], m[1]) {
		l.out = append(l.out, dateTok{t: t, start: m[0], end: m[1]})
	}
}

// dayMonthYear finds "5. März 2018", "2nd May 2005", "12-Mar-2024".
func (l *lineDates) dayMonthYear() {
	for _, m := range reDMonY.FindAllStringSubmatchIndex(l.s, 50) {
		if l.edge(m[0], m[1]) && (m[1] >= len(l.s) || !isLetter(l.s[m[1]])) {
			l.named(m, 2, 1)
		}
	}
}

// monthDayYear finds "March 5, 2018", "Mar 5th 2018".
func (l *lineDates) monthDayYear() {
	for _, m := range reMonDY.FindAllStringSubmatchIndex(l.s, 50) {
		if l.edge(m[0], m[1]) && (m[0] == 0 || !isLetter(l.s[m[0]-1])) {
			l.named(m, 1, 2)
		}
	}
}

// yearMonthDay finds "2018-03-05", "2018/03/05", "2018.03.05".
func (l *lineDates) yearMonthDay() {
	s := l.s
	for _, m := range reYMD.FindAllStringSubmatchIndex(s, 50) {
		if !l.edge(m[0], m[1]) || l.taken(m[0], m[1]) {
			continue
		}
		d, mo := dayMonth(s[m[6]:m[7]], s[m[4]:m[5]], s[m[2]:m[3]])
		if t, ok := mkDate(year(s[m[2]:m[3]]), mo, d); ok {
			l.out = append(l.out, dateTok{t: t, start: m[0], end: m[1]})
		}
	}
}

// dotted finds "05.03.2018", "5.3.18", OCR's "05,03.2018".
func (l *lineDates) dotted() {
	s := l.s
	for _, m := range reDMYDot.FindAllStringSubmatchIndex(s, 50) {
		if l.taken(m[0], m[1]) {
			continue
		}
		if !l.edge(m[0], m[1]) || len(s[m[6]:m[7]]) == 4 && !validYear(year(s[m[6]:m[7]])) {
			// "06.07.1817:29": a two-digit year glued to a time.
			if m[0] > 0 && isNum(s[m[0]-1]) || m[7]-m[6] != 4 || m[7]+1 >= len(s) || s[m[7]] != ':' && s[m[7]+1] != ':' {
				continue
			}
			m[1], m[7] = m[1]-2, m[7]-2
		}
		// "1.234,56" is an amount, not 1.2.34: a comma form needs a dot after.
		ys := s[m[6]:m[7]]
		d, mo := dayMonth(s[m[2]:m[3]], s[m[4]:m[5]], ys)
		if len(ys) == 2 && m[1] < len(s) && (s[m[1]] == ',' || s[m[1]] == '.') && m[1]+1 < len(s) && isNum(s[m[1]+1]) {
			continue
		}
		if strings.Contains(s[m[0]:m[1]], ",") && len(ys) != 4 {
			continue
		}
		if t, ok := mkDate(year(ys), mo, d); ok {
			l.out = append(l.out, dateTok{t: t, start: m[0], end: m[1]})
		}
	}
}

// slashed finds "05/03/2018", "05-03-2018", "5/3/18": day first where
// only that reads, month first where only that does, and both kept where
// both read.
func (l *lineDates) slashed() {
	s := l.s
	for _, m := range overlapping(reDMYSlash, s, 50) {
		if !l.edge(m[0], m[1]) || l.taken(m[0], m[1]) || m[1]+1 < len(s) && s[m[1]] == '/' && isNum(s[m[1]+1]) {
			// "#19- 02/03/2018": "19- 02/03" goes on; the date is what follows.
			continue
		}
		ys := s[m[8]:m[9]]
		if s[m[4]:m[5]] == "-" && len(ys) == 2 && m[1] < len(s) && s[m[1]] == '-' {
			// "12-03-18" is fine, but phone numbers and ranges are not dates.
			continue
		}
		a, _ := strconv.Atoi(s[m[2]:m[3]])
		b, _ := strconv.Atoi(s[m[6]:m[7]])
		y := year(ys)
		t, ok := mkDate(y, b, a)
		alt, okAlt := mkDate(y, a, b)
		switch {
		case ok:
			tok := dateTok{t: t, start: m[0], end: m[1], slash: true, first: a, sec: b}
			if okAlt && a != b {
				tok.ambiguous, tok.swapped = true, alt
			}
			l.out = append(l.out, tok)
		case okAlt:
			l.out = append(l.out, dateTok{t: alt, start: m[0], end: m[1], slash: true, first: a, sec: b})
		default:
			d, mo := dayMonth(s[m[2]:m[3]], s[m[6]:m[7]], ys)
			if t, ok := mkDate(y, mo, d); ok {
				l.out = append(l.out, dateTok{t: t, start: m[0], end: m[1], slash: true, first: d, sec: mo})
			}
		}
	}
}

// runs finds a till's date whose separators are lost ("Date: 27092017",
// "0405/2017 7:19:43 AM"), after its label or before its time of day.
func (l *lineDates) runs() {
	s := l.s
	runs := append(reLabelledRun.FindAllStringSubmatchIndex(s, 5), reTimedRun.FindAllStringSubmatchIndex(s, 5)...)
	for _, m := range runs {
		if l.taken(m[2], m[3]) {
			continue
		}
		d, mo := dayMonth(s[m[4]:m[5]], s[m[6]:m[7]], s[m[8]:m[9]])
		if t, ok := mkDate(year(s[m[8]:m[9]]), mo, d); ok {
			tok := dateTok{t: t, start: m[2], end: m[3], slash: true, first: d, sec: mo}
			if alt, ok := mkDate(t.Year(), d, mo); ok && d != mo {
				tok.ambiguous, tok.swapped = true, alt
			}
			l.out = append(l.out, tok)
		}
	}
}

// overlapping finds up to n matches of re in s, each searched from one
// byte past the previous match's start: a match that is no date ("19-
// 21/03" of "#19- 21/03/2018") must not hide the date that overlaps it.
func overlapping(re *regexp.Regexp, s string, n int) [][]int {
	var out [][]int
	for pos := 0; pos < len(s) && len(out) < n; {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += pos
			}
		}
		out = append(out, m)
		pos = m[0] + 1
	}
	return out
}

// monthsIn finds months printed without a day ("März 2018", "03/2018"),
// the period of a payslip or a statement. The date is the month's last day.
func monthsIn(s string, days []dateTok) []dateTok {
	var out []dateTok
	inDay := func(a, b int) bool {
		for _, d := range days {
			if a < d.end && d.start < b {
				return true
			}
		}
		return false
	}
	var named [][]int
	if hasMonthName(s) {
		// Most lines name no month, and the pattern of the names is the
		// slow part.
		named = reMonY.FindAllStringSubmatchIndex(s, 20)
	}
	for _, m := range named {
		if inDay(m[0], m[1]) || (m[0] > 0 && isLetter(s[m[0]-1])) || (m[1] < len(s) && isNum(s[m[1]])) {
			continue
		}
		mon, ok := monthOf(s[m[2]:m[3]])
		y, _ := strconv.Atoi(s[m[4]:m[5]])
		if ok && validYear(y) {
			out = append(out, dateTok{t: monthEnd(y, mon), start: m[0], end: m[1], monthOnly: true})
		}
	}
	for _, m := range reMMYYY.FindAllStringSubmatchIndex(s, 20) {
		if inDay(m[0], m[1]) || (m[0] > 0 && (isNum(s[m[0]-1]) || s[m[0]-1] == '.' || s[m[0]-1] == '/')) || (m[1] < len(s) && isNum(s[m[1]])) {
			continue
		}
		mo, _ := strconv.Atoi(s[m[2]:m[3]])
		y, _ := strconv.Atoi(s[m[4]:m[5]])
		if mo >= 1 && mo <= 12 && validYear(y) {
			out = append(out, dateTok{t: monthEnd(y, time.Month(mo)), start: m[0], end: m[1], monthOnly: true})
		}
	}
	return out
}

func monthEnd(y int, m time.Month) time.Time {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC)
}

// reFirstMisread is "1st" before a month's name as OCR reads it: "ist
// June 2024", "lst May".
var reFirstMisread = regexp.MustCompile(`(?i)(^|[^\p{L}\d])[il|]st\s+\p{L}`)

// firstAsOne spells OCR's "ist" for "1st" before a month's name as "1st",
// in as many bytes.
func firstAsOne(s string) string {
	ms := reFirstMisread.FindAllStringSubmatchIndex(s, 10)
	if ms == nil {
		return s
	}
	b := []byte(s)
	for _, m := range ms {
		if _, ok := monthOf(strings.Trim(strings.Fields(s[m[3]+3:])[0], ".,")); ok {
			b[m[3]] = '1'
		}
	}
	return string(b)
}
