package docfields

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// folded is a line reduced to what a label's spelling keeps: lower case,
// no spaces, dots or hyphens, umlauts and accents dropped, and the
// letters OCR confuses made one ("0"/"o", "1"/"l"/"i", "rn"/"m", "c"/"e").
// off and end map each folded rune back to the bytes it came from.
type folded struct {
	r        []rune
	off, end []int
}

func foldRune(r rune) (rune, bool) {
	switch r {
	case ' ', '.', ',', '-', '\'', '’', '`', '~', '_', '(', ')', '\t':
		return 0, false
	case '0', 'O', 'o', '°', 'º', 'ö', 'Ö', 'ó', 'ô':
		return 'o', true
	case '1', '|', '!', 'l', 'L', 'i', 'I', 'í', 'î', 'ï':
		return 'l', true
	case 'ü', 'Ü', 'ù', 'û', 'ú':
		return 'u', true
	case 'ä', 'Ä', 'à', 'â', 'á', 'a', 'A':
		// OCR reads "a" as "o": "Dote", "Grond total".
		return 'o', true
	case 'é', 'è', 'ê', 'ë', 'É', 'c', 'C', 'ç', 'e', 'E':
		return 'e', true
	}
	return unicode.ToLower(r), true
}

func fold(s string) folded {
	f := folded{r: make([]rune, 0, len(s)), off: make([]int, 0, len(s)), end: make([]int, 0, len(s))}
	for i, r := range s {
		n := utf8.RuneLen(r)
		if r == 'ß' {
			f.r = append(f.r, 's', 's')
			f.off = append(f.off, i, i)
			f.end = append(f.end, i+n, i+n)
			continue
		}
		// Digits fold to letters only inside words: "Rechnungsn0." but
		// not "2018".
		if (r == '0' || r == '1' || r == '5') && !letterNear(s, i, n) {
			f.r = append(f.r, r)
			f.off = append(f.off, i)
			f.end = append(f.end, i+n)
			continue
		}
		if r == '5' {
			r = 's'
		}
		// A colon after an abbreviation's dot read as "!" ("Inv. No.!")
		// is no "l".
		if r == '!' && i > 0 && s[i-1] == '.' {
			continue
		}
		// OCR reads the "°" of "N°" as "?" or a quote ("N' de
		// facture").
		if (r == '?' || r == '\'' || r == '"' || r == '`') && i > 0 && (s[i-1] == 'N' || s[i-1] == 'n') &&
			(i == 1 || !unicode.IsLetter(rune(s[i-2]))) && (i+1 == len(s) || s[i+1] == ' ') {
			r = '°'
		}
		fr, ok := foldRune(r)
		if !ok {
			continue
		}
		k := len(f.r)
		// "rn" reads as "m"; "ae", "oe", "ue" as the umlaut's vowel.
		if k > 0 && f.end[k-1] == i && (fr == 'n' && f.r[k-1] == 'r' || fr == 'e' && (f.r[k-1] == 'o' || f.r[k-1] == 'u') && r == 'e') {
			if fr == 'n' {
				f.r[k-1] = 'm'
			}
			f.end[k-1] = i + n
			continue
		}
		f.r = append(f.r, fr)
		f.off = append(f.off, i)
		f.end = append(f.end, i+n)
	}
	return f
}

func letterNear(s string, i, n int) bool {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsLetter(r) {
			return true
		}
	}
	if i+n < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i+n:])
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// matcher finds many fixed phrases at once in folded text.
type matcher struct {
	pats  [][]rune
	byKey map[[2]rune][]int // by the first two folded runes, longest first
	short map[rune][]int    // one-rune phrases
}

func newMatcher(phrases []string) *matcher {
	m := &matcher{byKey: map[[2]rune][]int{}, short: map[rune][]int{}}
	for i, p := range phrases {
		f := fold(p)
		m.pats = append(m.pats, f.r)
		switch {
		case len(f.r) == 0:
		case len(f.r) == 1:
			m.short[f.r[0]] = append(m.short[f.r[0]], i)
		default:
			k := [2]rune{f.r[0], f.r[1]}
			m.byKey[k] = append(m.byKey[k], i)
		}
	}
	for k, ids := range m.byKey {
		sort.SliceStable(ids, func(a, b int) bool { return len(m.pats[ids[a]]) > len(m.pats[ids[b]]) })
		m.byKey[k] = ids
	}
	return m
}

type hit struct {
	id         int
	start, end int // byte offsets in the original text
}

// find returns every phrase found in s that starts and ends at a word
// edge of s.
func (m *matcher) find(s string, f folded) []hit {
	var out []hit
	for p := range f.r {
		if p+1 < len(f.r) {
			for _, id := range m.byKey[[2]rune{f.r[p], f.r[p+1]}] {
				pat := m.pats[id]
				if p+len(pat) > len(f.r) || !runesEqual(f.r[p:p+len(pat)], pat) {
					continue
				}
				st, en := f.off[p], f.end[p+len(pat)-1]
				if edgeBefore(s, st) && edgeAfter(s, en) && (!strings.Contains(s[st:en], "  ") || spacedLabel(s, f, p, len(pat))) {
					out = append(out, hit{id: id, start: st, end: en})
				}
			}
		}
		for _, id := range m.short[f.r[p]] {
			st, en := f.off[p], f.end[p]
			if edgeBefore(s, st) && edgeAfter(s, en) {
				out = append(out, hit{id: id, start: st, end: en})
			}
		}
	}
	return out
}

// spacedLabel says whether a phrase that spans wide gaps ("Total
// Amount", "Total  Sales  (Inclusive GST)  RM  9.90") is one label that
// OCR spaced out, not words of two columns: each wide gap holds only
// spaces, and the value follows the phrase on its line, with nothing but
// punctuation or a currency between, or the phrase starts a line that
// holds a value after it.
func spacedLabel(s string, f folded, p, n int) bool {
	for k := p; k+1 < p+n; k++ {
		if gap := s[f.end[k]:f.off[k+1]]; strings.Contains(gap, "  ") && strings.Trim(gap, " ") != "" {
			return false
		}
	}
	rest := s[f.end[p+n-1]:]
	return reValueNext.MatchString(rest) || strings.Trim(s[:f.off[p]], " |:.*-") == "" && strings.ContainsAny(rest, "0123456789")
}

// reValueNext is what follows a label whose value stands beside it.
var reValueNext = regexp.MustCompile(`^[\s:;.,=~!*()\[\]-]*(?:(?i:rm|myr|eur|usd|gbp|chf|sgd)\b|[€$£])?[\s:;.=~!*()-]*-?\d`)

func runesEqual(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// edgeBefore: a phrase starts a word (a digit or punctuation before it
// counts as an edge: OCR glues words to numbers).
func edgeBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !unicode.IsLetter(r)
}

func edgeAfter(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !unicode.IsLetter(r)
}
