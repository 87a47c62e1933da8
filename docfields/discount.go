package docfields

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Discount is the discount for early payment (Skonto, escompte) a
// document's text states: Percent of the total when paid by Until
// (YYYY-MM-DD); both "" when it states none, or none that can be dated.
type Discount struct {
	Percent string // a decimal with a dot, "2" or "2.5"
	Until   string
}

var (
	// discountWord names a discount for early payment in German, English
	// or French; "kein Skonto", "no discount" and "pas d'escompte" are
	// left out by noDiscount.
	discountWord = regexp.MustCompile(`(?i)skonto|discount|escompte`)
	noDiscount   = regexp.MustCompile(`(?i)\b(kein|ohne|no|not|pas|sans|aucun)\b[^.%]{0,20}(skonto|discount|d'escompte|escompte)`)
	// discountPercent is a percentage up to 9.99 %: a discount for early
	// payment is a few percent, and the tax rate on the line is not one.
	discountPercent = regexp.MustCompile(`(?:^|[^\d.,])(\d(?:[.,]\d{1,2})?)\s?%`)
	// discountDays is the period in days: "innerhalb (von) 14 Tagen",
	// "within 10 days", "sous 8 jours", "à 10 jours".
	discountDays = regexp.MustCompile(`(?i)(?:innerhalb|binnen|within|sous|à|a|dans les)\s+(?:von\s+|of\s+)?(\d{1,3})\s*(?:tagen|tage|days|day|jours|j)\b`)
	// discountBy is the last day: "bis (zum) 14.03.(2026)", "by 14/03/2026",
	// "until 2026-03-14", "avant le 15/03/2026", "jusqu'au 15.03.2026".
	discountBy = regexp.MustCompile(`(?i)(?:bis|by|until|before|avant|jusqu'au|jusqu’au)\s+(?:zum\s+|le\s+|au\s+)?(\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./](?:\d{4}|\d{2})?)`)
	// netTerms is the American "2/10 net 30": 2 % within 10 days.
	netTerms = regexp.MustCompile(`(?i)\b(\d)(?:[.,](\d{1,2}))?\s*/\s*(\d{1,2})\s*,?\s*net\s*\d{1,3}\b`)
)

// discountOf reads the discount the lines state; issueDate (YYYY-MM-DD)
// dates a period in days and gives a day without a year its year.
func discountOf(lines []line, issueDate string) Discount {
	issued, err := time.Parse(time.DateOnly, issueDate)
	if err != nil {
		return Discount{}
	}
	for i, l := range lines {
		text := l.raw
		if m := netTerms.FindStringSubmatch(text); m != nil {
			pct := m[1]
			if m[2] != "" {
				pct += "." + m[2]
			}
			return discountAfter(pct, issued, m[3])
		}
		loc := discountWord.FindStringIndex(text)
		if loc == nil || noDiscount.MatchString(text) {
			continue
		}
		// The terms may start on the line before and run on to the next.
		at := loc[0]
		if i > 0 {
			text = lines[i-1].raw + " " + text
			at += len(lines[i-1].raw) + 1
		}
		if i+1 < len(lines) {
			text += " " + lines[i+1].raw
		}
		pct := nearestPercent(text, at)
		if pct == "" {
			continue
		}
		if by := nearest(discountBy, text, at); by != "" {
			if until := dayOn(by, issued); until != "" {
				return Discount{Percent: pct, Until: until}
			}
		}
		if days := nearest(discountDays, text, at); days != "" {
			return discountAfter(pct, issued, days)
		}
	}
	return Discount{}
}

// nearest is the first group of re's match in text nearest to at: the
// terms beside the discount's word, not the payment terms around them.
func nearest(re *regexp.Regexp, text string, at int) string {
	best, dist := "", -1
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		d := m[0] - at
		if d < 0 {
			d = -d
		}
		if dist < 0 || d < dist {
			best, dist = text[m[2]:m[3]], d
		}
	}
	return best
}

// nearestPercent is the percentage of text nearest to at, as a decimal with
// a dot; "" when there is none above zero.
func nearestPercent(text string, at int) string {
	best, dist := "", -1
	for _, m := range discountPercent.FindAllStringSubmatchIndex(text, -1) {
		d := m[2] - at
		if d < 0 {
			d = -d
		}
		v := strings.Replace(text[m[2]:m[3]], ",", ".", 1)
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && (dist < 0 || d < dist) {
			best, dist = v, d
		}
	}
	return best
}

// discountAfter is the discount of pct when paid within days of issued.
func discountAfter(pct string, issued time.Time, days string) Discount {
	n, err := strconv.Atoi(days)
	if err != nil || n < 1 || n > 120 {
		return Discount{}
	}
	return Discount{Percent: pct, Until: issued.AddDate(0, 0, n).Format(time.DateOnly)}
}

// dayOn reads a day written as 2026-03-14, 14.03.2026, 14/03/26 or 14.03.
// (the year the one on or after the issue date); "" when it is none or
// falls before the issue date or more than 120 days after it.
func dayOn(s string, issued time.Time) string {
	var t time.Time
	if len(s) == 10 && s[4] == '-' {
		var err error
		if t, err = time.Parse(time.DateOnly, s); err != nil {
			return ""
		}
	} else {
		parts := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '/' })
		if len(parts) < 2 {
			return ""
		}
		day, _ := strconv.Atoi(parts[0])
		month, _ := strconv.Atoi(parts[1])
		year := issued.Year()
		if len(parts) == 3 {
			year, _ = strconv.Atoi(parts[2])
			if year < 100 {
				year += 2000
			}
		}
		t = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		if t.Day() != day || int(t.Month()) != month {
			return ""
		}
		if len(parts) == 2 && t.Before(issued) {
			t = t.AddDate(1, 0, 0)
		}
	}
	if t.Before(issued) || t.After(issued.AddDate(0, 0, 120)) {
		return ""
	}
	return t.Format(time.DateOnly)
}
