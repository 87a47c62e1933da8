package bankstatement

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The longest texts kept, in characters: the SEPA limits (a name 70, a
// remittance 140) with room for banks that join several.
const (
	MaxName       = 140
	MaxRemittance = 1000
)

// collapse trims s and turns every run of white space into one space.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// clean is s as a person may see it: control and format characters (ESC,
// the bidi overrides and isolates, zero-width spaces) removed, white space
// collapsed, and at most max characters kept; the rest is dropped.
func clean(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r), r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	s = collapse(s)
	n := 0
	for i := range s {
		if n == max {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

// compact upper-cases s and drops its white space, as IBANs and BICs are
// compared.
func compact(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// validIBAN gives s compacted when it is an IBAN whose check digits hold,
// else "".
func validIBAN(s string) string {
	s = compact(s)
	if len(s) < 15 || len(s) > 34 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if i < 2 && !letter || i >= 2 && i < 4 && !digit || !letter && !digit {
			return ""
		}
	}
	// ISO 13616: the country and check digits move to the end, letters
	// become 10 to 35, and the number is 1 modulo 97.
	rem := 0
	for _, c := range s[4:] + s[:4] {
		if c >= 'A' {
			rem = (rem*100 + int(c-'A'+10)) % 97
		} else {
			rem = (rem*10 + int(c-'0')) % 97
		}
	}
	if rem != 1 {
		return ""
	}
	return s
}

// isBIC reports whether s has the shape of a BIC: 8 or 11 letters and
// digits, the first six letters.
func isBIC(s string) bool {
	if len(s) != 8 && len(s) != 11 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter, digit := c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if i < 6 && !letter || !letter && !digit {
			return false
		}
	}
	return true
}
