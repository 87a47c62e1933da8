package docfields

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits that keep one call bounded whatever the input.
const (
	maxInput = 1 << 20 // bytes of text read; the rest is ignored
	maxLines = 6000
	maxLine  = 2000 // bytes of one line
	// Lines read in detail: the first headLines and the last tailLines.
	headLines = 1200
	tailLines = 400
)

// line is one line of the document in two spellings of equal byte length:
// raw as printed (labels and names are read from it) and fix with OCR's
// letter-for-digit confusions undone inside numbers (dates and amounts are
// read from it).
type line struct {
	raw, fix string
	page     int
	n        int // index in doc.lines
}

type doc struct {
	lines []line
	pages int
}

var spaceLike = strings.NewReplacer(
	"\u00a0", " ", "\u2007", " ", "\u2009", " ", "\u202f", " ", "\u200b", "",
	"\t", "    ", "\u2212", "-", "\u2013", "-", "\u2014", "-", "\u2010", "-", "\u2011", "-",
	"\ufb01", "fi", "\ufb02", "fl", "\u2018", "'", "\u2019", "'", "\u201a", ",",
	"\u00ad", "", "\ufeff", "",
)

// newDoc splits pages into normalized lines.
func newDoc(pages []string) *doc {
	d := &doc{}
	budget := maxInput
	for p, text := range pages {
		if budget <= 0 {
			break
		}
		if len(text) > budget {
			text = text[:budget]
		}
		budget -= len(text)
		text = strings.ToValidUTF8(text, " ")
		text = norm.NFC.String(text)
		text = spaceLike.Replace(text)
		text = sectionAsFive(text)
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
		for _, s := range strings.Split(text, "\n") {
			if len(d.lines) >= maxLines {
				break
			}
			s = strings.TrimRightFunc(stripControls(s), unicode.IsSpace)
			if len(s) > maxLine {
				s = s[:maxLine]
				s = strings.ToValidUTF8(s, "")
			}
			d.lines = append(d.lines, line{raw: s, fix: repairDigits(s), page: p, n: len(d.lines)})
		}
		d.pages = p + 1
	}
	return d
}

func stripControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// splitPages treats form feeds as page breaks, as pdftotext writes them.
func splitPages(text string) []string {
	return strings.Split(text, "\f")
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// digitFor maps letters OCR confuses with digits.
func digitFor(b byte) byte {
	switch b {
	case 'O', 'o', 'D', 'Q':
		return '0'
	case 'l', 'I', '|', 'i', '!':
		return '1'
	case 'S':
		return '5'
	case 'B':
		return '8'
	case 'Z':
		return '2'
	case 'b', 'G':
		return '6'
	}
	return 0
}

// repairDigits returns s with letters that stand between digits read as
// the digits OCR took them for: "2O18" becomes "2018", "1.234,5O" becomes
// "1.234,50". A letter is changed only in a run of at most two letters
// touching a digit, so words ("Total", "MwSt") are left alone. The result
// has the byte length of s.
func repairDigits(s string) string {
	var b []byte
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		d := digitFor(c)
		if d == 0 {
			continue
		}
		// The run of ASCII letters (and '|', '!') around i.
		j := i
		for j > 0 && (isLetter(s[j-1]) || s[j-1] == '|' || s[j-1] == '!') {
			j--
		}
		k := i + 1
		for k < n && (isLetter(s[k]) || s[k] == '|' || s[k] == '!') {
			k++
		}
		if k-j > 2 {
			continue
		}
		// Every letter of the run must be a confusable one.
		ok := true
		for m := j; m < k; m++ {
			if digitFor(s[m]) == 0 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if !touchesDigit(s, j, k) {
			continue
		}
		// A lone 'D' or 'S' or 'B' next to digits is more often a letter
		// (DE..., S.1) than a digit: require digits on both sides.
		// The second decimal of an amount ("4,4B") counts as between digits.
		secondDecimal := j > 1 && isDigit(s[j-1]) && (s[j-2] == ',' || s[j-2] == '.') && (k >= n || !isLetter(s[k]))
		if (c == 'D' || c == 'S' || c == 'B' || c == 'Z' || c == 'i' || c == 'Q' || c == 'b' || c == 'G') && !(j > 0 && isDigit(s[j-1]) && k < n && isDigit(s[k])) && !secondDecimal {
			continue
		}
		if b == nil {
			b = []byte(s)
		}
		b[i] = d
	}
	if b == nil {
		return s
	}
	return string(b)
}

func touchesDigit(s string, j, k int) bool {
	left := j > 0 && (isDigit(s[j-1]) || (j > 1 && strings.IndexByte(".,/", s[j-1]) >= 0 && isDigit(s[j-2])))
	right := k < len(s) && (isDigit(s[k]) || (k+1 < len(s) && strings.IndexByte(".,/", s[k]) >= 0 && isDigit(s[k+1])))
	// A letter must sit in a number, not at the end of a word glued to
	// one: "l2" at the start of a token counts, "Nr.1" does not change 'r'.
	if left || right {
		// Refuse when a letter precedes the run directly (part of a word).
		if j > 0 && utf8.RuneStart(s[j-1]) && s[j-1] >= 0x80 {
			return false
		}
		return true
	}
	return false
}

// cell is a run of text separated from its neighbours by two or more
// spaces: a column of a two-column header or a table.
type cell struct {
	text       string
	start, end int // byte offsets in the line
}

func cells(s string) []cell {
	var out []cell
	i := 0
	for i < len(s) {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		for j < len(s) {
			if s[j] == ' ' && j+1 < len(s) && s[j+1] == ' ' {
				break
			}
			j++
		}
		out = append(out, cell{text: strings.TrimSpace(s[i:j]), start: i, end: j})
		i = j
	}
	return out
}

// column is the display column of byte offset off in s.
func column(s string, off int) int {
	if off > len(s) {
		off = len(s)
	}
	return utf8.RuneCountInString(s[:off])
}

func collapseSpaces(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// sectionAsFive undoes OCR's reading of a "5" that starts an amount as
// "§" ("§,217.53", "§1,20"): a "§" followed by nothing but digits and
// separators that end in two decimals is a 5. A section sign before a
// law's number ("§ 13b", "§13b UStG") is left alone.
func sectionAsFive(s string) string {
	if !strings.Contains(s, "§") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "§")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len("§"):]
		j := 0
		for j < len(rest) && (isNum(rest[j]) || rest[j] == '.' || rest[j] == ',') {
			j++
		}
		run := rest[:j]
		if len(run) >= 3 && (run[len(run)-3] == '.' || run[len(run)-3] == ',') && isNum(run[len(run)-2]) && isNum(run[len(run)-1]) &&
			(j == len(rest) || !isNum(rest[j]) && !isLetter(rest[j])) {
			b.WriteString("5")
		} else {
			b.WriteString("§")
		}
		s = rest
	}
}
