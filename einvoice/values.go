package einvoice

import (
	"strings"
	"time"
)

// Each function here returns the normalised value of one kind of term, or ""
// when the text is not a valid value: a wrong value is worse than none.

func typeCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 1 || len(s) > 3 || !allDigits(s) {
		return ""
	}
	return s
}

// ciiDate reads udt:DateTimeString. Format 102 (YYYYMMDD) is the one
// EN 16931 allows; the month (610) and week (616) formats name no day. A
// missing format is read as 102.
func ciiDate(s, format string) string {
	s = strings.TrimSpace(s)
	if format != "" && format != "102" {
		return ""
	}
	if len(s) != 8 || !allDigits(s) {
		return ""
	}
	return day(s[0:4] + "-" + s[4:6] + "-" + s[6:8])
}

// isoDate reads xsd:date: YYYY-MM-DD, maybe with a zone, which a day on an
// invoice does not need.
func isoDate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 10 {
		return ""
	}
	if zone := s[10:]; zone != "" && zone != "Z" {
		if _, err := time.Parse("-07:00", zone); err != nil {
			return ""
		}
	}
	return day(s[:10])
}

// day returns a YYYY-MM-DD that names a real day between 1900 and 2999, and
// "" for anything else: no invoice is dated outside them.
func day(s string) string {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1900 || t.Year() > 2999 {
		return ""
	}
	return s
}

func currency(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) != 3 || !allUpper(s) {
		return ""
	}
	return s
}

// decimal reads xsd:decimal: an optional sign, digits, an optional point and
// digits. The decimals stay as written ("1234.50"); a leading '+' and
// leading zeros go, and a bare point gets its zero ("0.5", "5").
func decimal(s string) string {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	whole, frac, point := strings.Cut(s, ".")
	if whole == "" && frac == "" || !allDigits(whole) || !allDigits(frac) {
		return ""
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if point && frac != "" {
		whole += "." + frac
	}
	if neg && strings.Trim(whole, "0.") != "" {
		whole = "-" + whole
	}
	return whole
}

// name collapses the spaces and line breaks of a name.
func name(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// vatID reads a VAT id: a country prefix (GR's is EL, Northern Ireland's
// XI) and 2 to 13 letters or digits, as written without spaces.
func vatID(s string) string {
	s = strings.ToUpper(strings.Join(strings.Fields(s), ""))
	if len(s) < 4 || len(s) > 15 || !allUpper(s[:2]) {
		return ""
	}
	for _, c := range s[2:] {
		if !isDigit(c) && !isUpper(c) && c != '+' && c != '*' {
			return ""
		}
	}
	return s
}

// iban reads an IBAN: a country, two check digits and up to 30 letters or
// digits, whose mod-97 check (ISO 13616) holds.
func iban(s string) string {
	s = strings.ToUpper(strings.Join(strings.Fields(s), ""))
	if len(s) < 15 || len(s) > 34 || !allUpper(s[:2]) || !allDigits(s[2:4]) {
		return ""
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isUpper(c):
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return ""
		}
	}
	if rem != 1 {
		return ""
	}
	return s
}

// language reads a language as ISO 639-1 from a code or a tag ("de",
// "DE", "de-DE").
func language(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(s, "-_"); i >= 0 {
		s = s[:i]
	}
	if len(s) != 2 || s[0] < 'a' || s[0] > 'z' || s[1] < 'a' || s[1] > 'z' {
		return ""
	}
	return s
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }
func isUpper(c rune) bool { return c >= 'A' && c <= 'Z' }

func allDigits(s string) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

func allUpper(s string) bool {
	for _, c := range s {
		if !isUpper(c) {
			return false
		}
	}
	return true
}
