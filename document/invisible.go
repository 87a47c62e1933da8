package document

import (
	"strings"
	"unicode"
)

// DropInvisible drops the characters of s in the tables. In a name or a
// field read from a document, a right-to-left override (U+202E) or another
// format character (category Cf) makes "invoice\u202Efdp.exe" show as
// "invoiceexe.pdf", and a line or paragraph separator (U+2028, U+2029)
// breaks the line it is shown on.
func DropInvisible(s string, tables ...*unicode.RangeTable) string {
	drop := func(r rune) bool { return unicode.In(r, tables...) }
	if strings.IndexFunc(s, drop) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if drop(r) {
			return -1
		}
		return r
	}, s)
}

// CleanText is DropInvisible for a document's text: format characters go,
// its lines stay.
func CleanText(s string) string { return DropInvisible(s, unicode.Cf) }

// CleanField is DropInvisible for a name or a field read from a document:
// format characters and line and paragraph separators go.
func CleanField(s string) string { return DropInvisible(s, unicode.Cf, unicode.Zl, unicode.Zp) }
