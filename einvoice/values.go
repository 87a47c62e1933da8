package einvoice

import (
	"regexp"
	"strings"
	"time"
)

// Each function here returns the normalised value of one kind of term, or ""
// when the text is not a value of the term's type (no day, no decimal, no
// currency code): the API cannot show it as one. Identifiers (a VAT id, an
// IBAN) are kept as written, and their shape is checked apart.

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

// written is an identifier as the standards write it: upper-case, without
// the spaces people put in for reading.
func written(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// vatShapes are the shapes of the VAT ids of the EU's countries (GR's
// prefix is EL, Northern Ireland's XI), the United Kingdom, Switzerland
// and Norway, after their prefix, as the EU's VIES lists them.
var vatShapes = map[string]*regexp.Regexp{
	"AT": regexp.MustCompile(`^U[0-9]{8}$`), "BE": regexp.MustCompile(`^[01][0-9]{9}$`),
	"BG": regexp.MustCompile(`^[0-9]{9,10}$`), "CY": regexp.MustCompile(`^[0-9]{8}[A-Z]$`),
	"CZ": regexp.MustCompile(`^[0-9]{8,10}$`), "DE": regexp.MustCompile(`^[0-9]{9}$`),
	"DK": regexp.MustCompile(`^[0-9]{8}$`), "EE": regexp.MustCompile(`^[0-9]{9}$`),
	"EL": regexp.MustCompile(`^[0-9]{9}$`), "ES": regexp.MustCompile(`^[0-9A-Z][0-9]{7}[0-9A-Z]$`),
	"FI": regexp.MustCompile(`^[0-9]{8}$`), "FR": regexp.MustCompile(`^[0-9A-Z]{2}[0-9]{9}$`),
	"HR": regexp.MustCompile(`^[0-9]{11}$`), "HU": regexp.MustCompile(`^[0-9]{8}$`),
	"IE": regexp.MustCompile(`^([0-9]{7}[A-Z]{1,2}|[0-9][A-Z+*][0-9]{5}[A-Z])$`), "IT": regexp.MustCompile(`^[0-9]{11}$`),
	"LT": regexp.MustCompile(`^([0-9]{9}|[0-9]{12})$`), "LU": regexp.MustCompile(`^[0-9]{8}$`),
	"LV": regexp.MustCompile(`^[0-9]{11}$`), "MT": regexp.MustCompile(`^[0-9]{8}$`),
	"NL": regexp.MustCompile(`^[0-9]{9}B[0-9]{2}$`), "PL": regexp.MustCompile(`^[0-9]{10}$`),
	"PT": regexp.MustCompile(`^[0-9]{9}$`), "RO": regexp.MustCompile(`^[0-9]{2,10}$`),
	"SE": regexp.MustCompile(`^[0-9]{12}$`), "SI": regexp.MustCompile(`^[0-9]{8}$`),
	"SK": regexp.MustCompile(`^[0-9]{10}$`), "XI": regexp.MustCompile(`^([0-9]{9}|[0-9]{12}|GD[0-9]{3}|HA[0-9]{3})$`),
	"GB": regexp.MustCompile(`^([0-9]{9}|[0-9]{12}|GD[0-9]{3}|HA[0-9]{3})$`),
	"CH": regexp.MustCompile(`^E[0-9]{9}(MWST|TVA|IVA)?$`), "NO": regexp.MustCompile(`^[0-9]{9}(MVA)?$`),
}

// vatIDShaped reports whether a written VAT id has its country's shape; a
// country not listed needs only a prefix of two letters and 2 to 13
// letters or digits.
func vatIDShaped(s string) bool {
	if len(s) < 4 || len(s) > 16 || !allUpper(s[:2]) {
		return false
	}
	if shape, ok := vatShapes[s[:2]]; ok {
		return shape.MatchString(s[2:])
	}
	for _, c := range s[2:] {
		if !isDigit(c) && !isUpper(c) {
			return false
		}
	}
	return true
}

// ibanShaped reports whether a written IBAN is a country, two check digits
// and 11 to 30 letters or digits.
func ibanShaped(s string) bool {
	if len(s) < 15 || len(s) > 34 || !allUpper(s[:2]) || !allDigits(s[2:4]) {
		return false
	}
	for _, c := range s[4:] {
		if !isDigit(c) && !isUpper(c) {
			return false
		}
	}
	return true
}

// ibanChecks reports whether a shaped IBAN's mod-97 check (ISO 13616)
// holds.
func ibanChecks(s string) bool {
	rem := 0
	for _, c := range s[4:] + s[:4] {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	return rem == 1
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
