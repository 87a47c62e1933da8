package docfields

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"time"
	"unicode"

	"acctapi/document"
)

// Anchor says where a field's value stood in a document a person
// corrected, so that the next document of the same supplier is read there
// first: the label words before the value on its line (or, where none
// stand there, the words of the line above), hashed so that the text
// cannot be read back from them, and the value's place on the page.
type Anchor struct {
	Field string `json:"f"`
	// Labels are the hashes of the label words, in order.
	Labels []uint32 `json:"l"`
	// Above says the labels are the line above the value's.
	Above bool `json:"a,omitempty"`
	// Page is the value's page; Line its line's place on the page, from 0
	// (the first line) to 1 (the last).
	Page int     `json:"p"`
	Line float64 `json:"y"`
	// Nth is which value of the field's type the value is on its line,
	// counted from the line's end (0: the last), after the labels.
	Nth int `json:"n"`
}

// maxLabels is how many words before a value make its label.
const maxLabels = 3

// span is one value of a field's type on a line, in the field's form.
type span struct {
	value      string
	start, end int
}

// FindAnchor finds where value, the value of field a person set, stands
// in the document; false when it is not found, or the field is not read
// from a place (the currency).
func FindAnchor(pages []string, field, value string) (Anchor, bool) {
	d := newDoc(pages)
	var found Anchor
	ok := false
	for i, l := range d.lines {
		spans := spansOf(field, l)
		for k, s := range spans {
			if !sameAnchored(field, s.value, value) {
				continue
			}
			a := Anchor{Field: field, Labels: hashWords(lastWords(l.raw[:s.start], maxLabels)), Page: l.page,
				Line: linePlace(d, i), Nth: len(spans) - 1 - k}
			if len(a.Labels) == 0 && i > 0 && d.lines[i-1].page == l.page {
				a.Labels, a.Above = hashWords(lastWords(d.lines[i-1].raw, 2*maxLabels)), true
			}
			if len(a.Labels) == 0 {
				continue
			}
			// The first place with labels on its own line wins: that is
			// where a reader looks; a value repeated in a table is not.
			if !ok || found.Above && !a.Above {
				found, ok = a, true
			}
		}
		if ok && !found.Above {
			break
		}
	}
	return found, ok
}

// ReadAnchors reads each anchor's field where it points in the document:
// on the line whose labels match, nearest the anchor's place. The result
// holds only the fields found.
func ReadAnchors(pages []string, anchors []Anchor) map[string]string {
	d := newDoc(pages)
	out := map[string]string{}
	for _, a := range anchors {
		best, bestDist := "", math.Inf(1)
		for i, l := range d.lines {
			spans := spansOf(a.Field, l)
			if len(spans) == 0 {
				continue
			}
			var after []span
			switch {
			case a.Above:
				if i == 0 || d.lines[i-1].page != l.page || !hasWords(hashWords(lastWords(d.lines[i-1].raw, 2*maxLabels)), a.Labels) {
					continue
				}
				after = spans
			default:
				for _, s := range spans {
					if hasWords(hashWords(lastWords(l.raw[:s.start], maxLabels)), a.Labels) {
						after = spans[indexOf(spans, s):]
						break
					}
				}
			}
			if len(after) == 0 {
				continue
			}
			s := after[max(len(after)-1-a.Nth, 0)]
			dist := math.Abs(linePlace(d, i)-a.Line) + math.Abs(float64(l.page-a.Page))
			if dist < bestDist {
				best, bestDist = s.value, dist
			}
		}
		if best != "" {
			out[a.Field] = best
		}
	}
	return out
}

func indexOf(spans []span, s span) int {
	for i, t := range spans {
		if t.start == s.start {
			return i
		}
	}
	return 0
}

// linePlace is line i's place on its page, from 0 to 1.
func linePlace(d *doc, i int) float64 {
	page := d.lines[i].page
	first, last := i, i
	for first > 0 && d.lines[first-1].page == page {
		first--
	}
	for last < len(d.lines)-1 && d.lines[last+1].page == page {
		last++
	}
	if last == first {
		return 0
	}
	return float64(i-first) / float64(last-first)
}

// spansOf are the values of field's type on a line, in the field's form.
func spansOf(field string, l line) []span {
	var out []span
	switch field {
	case document.IssueDate, document.DueDate:
		for _, t := range datesIn(l.fix) {
			if !t.monthOnly {
				out = append(out, span{t.t.Format(time.DateOnly), t.start, t.end})
			}
		}
	case document.NetAmount, document.TaxAmount, document.TotalAmount:
		for _, t := range amountsIn(l.fix) {
			if !t.percent {
				out = append(out, span{formatCents(t.cents), t.start, t.end})
			}
		}
	case document.IssuerIBAN:
		for _, t := range ibansIn(l.fix) {
			out = append(out, span{t.iban, t.start, t.end})
		}
	case document.IssuerVATID:
		for _, t := range vatsIn(l.fix) {
			out = append(out, span{t.id, t.start, t.end})
		}
	case document.DocumentNumber:
		for _, w := range tokens(l.raw) {
			if strings.IndexFunc(w.value, unicode.IsDigit) >= 0 {
				out = append(out, w)
			}
		}
	case document.IssuerName:
		if s := strings.TrimSpace(l.raw); s != "" {
			start := strings.Index(l.raw, s)
			out = append(out, span{s, start, start + len(s)})
		}
	}
	return out
}

// tokens are the words of s between spaces, trimmed of punctuation at
// their ends.
func tokens(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		if w := strings.Trim(s[i:j], ".,:;()[]"); w != "" {
			start := i + strings.Index(s[i:j], w)
			out = append(out, span{w, start, start + len(w)})
		}
		i = j
	}
	return out
}

// sameAnchored says whether a value read equals a person's, in the field's
// form: amounts by their cents, ids without spaces and case.
func sameAnchored(field, read, person string) bool {
	switch field {
	case document.NetAmount, document.TaxAmount, document.TotalAmount:
		c, ok := parseDecimal(person)
		return ok && formatCents(c) == read
	case document.IssuerName:
		return strings.EqualFold(strings.Join(strings.Fields(read), " "), strings.Join(strings.Fields(person), " "))
	}
	return strings.EqualFold(strings.ReplaceAll(read, " ", ""), strings.ReplaceAll(person, " ", ""))
}

// parseDecimal reads an amount as the API writes it ("1234.5") into cents.
func parseDecimal(s string) (int64, bool) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	if len(frac) > 2 || whole == "" {
		return 0, false
	}
	frac += strings.Repeat("0", 2-len(frac))
	var c int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, false
		}
		c = c*10 + int64(r-'0')
	}
	if neg {
		c = -c
	}
	return c, true
}

// lastWords are the last n words of letters of s, lower-case.
func lastWords(s string, n int) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
	var out []string
	for _, w := range words {
		if len([]rune(w)) >= 2 {
			out = append(out, w)
		}
	}
	return out[max(len(out)-n, 0):]
}

// hashWords hashes words one by one: a label is matched, never read.
func hashWords(words []string) []uint32 {
	out := make([]uint32, len(words))
	for i, w := range words {
		sum := sha256.Sum256([]byte("acctapi anchor\x00" + w))
		out[i] = binary.BigEndian.Uint32(sum[:4])
	}
	return out
}

// hasWords says whether got ends with want: the same words last before the
// value.
func hasWords(got, want []uint32) bool {
	if len(got) < len(want) {
		return false
	}
	got = got[len(got)-len(want):]
	for i := range want {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// legalForms are the words of a company's name that say its legal form,
// not who it is.
var legalForms = map[string]bool{
	"gmbh": true, "ag": true, "kg": true, "co": true, "ohg": true, "ug": true, "ek": true, "mbh": true, "se": true,
	"ltd": true, "limited": true, "llc": true, "inc": true, "plc": true, "sarl": true, "sas": true, "sa": true,
	"bv": true, "nv": true, "srl": true, "spa": true, "sl": true, "und": true, "and": true, "haftungsbeschränkt": true,
}

// SupplierKeys are the keys a document's supplier is known by, hashed, the
// surest first: its VAT id, its IBAN, its name without case, punctuation
// and legal form. Empty when the fields name no supplier.
func SupplierKeys(fields map[string]string) []string {
	var keys []string
	add := func(kind, v string) {
		if v != "" {
			sum := sha256.Sum256([]byte("acctapi supplier\x00" + kind + "\x00" + v))
			keys = append(keys, hex.EncodeToString(sum[:16]))
		}
	}
	add("vat", strings.ToUpper(strings.ReplaceAll(fields[document.IssuerVATID], " ", "")))
	add("iban", strings.ToUpper(strings.ReplaceAll(fields[document.IssuerIBAN], " ", "")))
	var name []string
	for _, w := range strings.FieldsFunc(strings.ToLower(fields[document.IssuerName]), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !legalForms[w] {
			name = append(name, w)
		}
	}
	add("name", strings.Join(name, " "))
	return keys
}
