package docfields

import (
	"regexp"
	"strings"
)

// vatFormats are the VAT id shapes of the EU states and their neighbours,
// after the two-letter prefix, without spaces.
var vatFormats = map[string]*regexp.Regexp{
	"DE": regexp.MustCompile(`^\d{9}$`),
	"AT": regexp.MustCompile(`^U\d{8}$`),
	"FR": regexp.MustCompile(`^[0-9A-HJ-NP-Z]{2}\d{9}$`),
	"NL": regexp.MustCompile(`^\d{9}B\d{2}$`),
	"BE": regexp.MustCompile(`^[01]\d{9}$`),
	"LU": regexp.MustCompile(`^\d{8}$`),
	"IT": regexp.MustCompile(`^\d{11}$`),
	"ES": regexp.MustCompile(`^[0-9A-Z]\d{7}[0-9A-Z]$`),
	"PL": regexp.MustCompile(`^\d{10}$`),
	"DK": regexp.MustCompile(`^\d{8}$`),
	"SE": regexp.MustCompile(`^\d{10}01$`),
	"FI": regexp.MustCompile(`^\d{8}$`),
	"IE": regexp.MustCompile(`^\d[0-9A-Z+*]\d{5}[A-Z]{1,2}$`),
	"PT": regexp.MustCompile(`^\d{9}$`),
	"CZ": regexp.MustCompile(`^\d{8,10}$`),
	"SK": regexp.MustCompile(`^\d{10}$`),
	"HU": regexp.MustCompile(`^\d{8}$`),
	"SI": regexp.MustCompile(`^\d{8}$`),
	"HR": regexp.MustCompile(`^\d{11}$`),
	"RO": regexp.MustCompile(`^\d{2,10}$`),
	"BG": regexp.MustCompile(`^\d{9,10}$`),
	"EL": regexp.MustCompile(`^\d{9}$`),
	"CY": regexp.MustCompile(`^\d{8}[A-Z]$`),
	"EE": regexp.MustCompile(`^\d{9}$`),
	"LV": regexp.MustCompile(`^\d{11}$`),
	"LT": regexp.MustCompile(`^(\d{9}|\d{12})$`),
	"MT": regexp.MustCompile(`^\d{8}$`),
	"GB": regexp.MustCompile(`^(\d{9}|\d{12})$`),
	"XI": regexp.MustCompile(`^(\d{9}|\d{12})$`),
	"CH": regexp.MustCompile(`^E\d{9}$`),
	"NO": regexp.MustCompile(`^\d{9}$`),
}

// reVATish finds what may be a VAT id: a country prefix then digits,
// allowing the spaces, dots and hyphens pages put in ("DE 123 456 789",
// "CHE-123.456.789", "FR 12 345678901").
var reVATish = regexp.MustCompile(`(?:\b|TVA|VAT|UID|IdNr\.?)(DE|ATU|AT\s?U|FR|NL|BE|LU|IT|ES|PL|DK|SE|FI|IE|PT|CZ|SK|HU|SI|HR|RO|BG|EL|CY|EE|LV|LT|MT|GB|XI|CHE|NO)[\s.:-]?([0-9A-Z](?:[\s.\-]?[0-9A-Z|lIOobis]){6,13})`)

type vatTok struct {
	id         string
	start, end int
	checked    bool // the check digits agree
	misshapen  bool // the country's prefix and digits, but not its shape: a typo, or a sample's made-up id
}

// vatsIn finds VAT ids on a line. OCR confusions in the digit part are
// undone before the format check.
func vatsIn(s string) []vatTok {
	if !codeThenDigit(s) {
		return nil
	}
	var out []vatTok
	for _, m := range reVATish.FindAllStringSubmatchIndex(s, 10) {
		cc := strings.ToUpper(strings.ReplaceAll(s[m[2]:m[3]], " ", ""))
		body := s[m[4]:m[5]]
		// Take the longest prefix of body that has the country's shape.
		var compact []byte
		var ends []int
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == ' ' || c == '.' || c == '-' {
				continue
			}
			compact = append(compact, c)
			ends = append(ends, i+1)
		}
		country := cc
		switch cc {
		case "ATU":
			country, compact = "AT", append([]byte("U"), compact...)
			ends = append([]int{0}, ends...)
		case "CHE":
			country, compact = "CH", append([]byte("E"), compact...)
			ends = append([]int{0}, ends...)
		}
		f := vatFormats[country]
		if f == nil {
			continue
		}
		found := false
		for n := len(compact); n >= 7 && !found; n-- {
			cand := fixVATBody(country, string(compact[:n]))
			// The id must end where the token ends: not inside a longer number.
			end := m[4] + ends[n-1]
			if end < len(s) && (isNum(s[end]) || isLetter(s[end]) && n < len(compact)) {
				if isNum(s[end]) {
					continue
				}
			}
			if f.MatchString(cand) {
				id := country + cand
				if country == "CH" {
					id = "CHE" + cand[1:]
				}
				out = append(out, vatTok{id: id, start: m[2], end: end, checked: vatChecks(country, cand)})
				found = true
			}
		}
		if !found && len(compact) >= 7 && len(compact) <= 14 && allDigits(compact) {
			end := m[4] + ends[len(ends)-1]
			if end >= len(s) || !isNum(s[end]) && !isLetter(s[end]) {
				out = append(out, vatTok{id: country + string(compact), start: m[2], end: end, misshapen: true})
			}
		}
	}
	return out
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isNum(c) {
			return false
		}
	}
	return true
}

// codeThenDigit reports whether s has two capitals followed closely by a
// digit, as every VAT id and IBAN does: most lines have none, and the
// patterns need not run.
func codeThenDigit(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' || s[i+1] < 'A' || s[i+1] > 'Z' {
			continue
		}
		for k := i + 2; k < len(s) && k <= i+4; k++ {
			if isNum(s[k]) || digitFor(s[k]) != 0 {
				return true
			}
		}
	}
	return false
}

// fixVATBody undoes OCR letter-for-digit confusions in a VAT id's body,
// except where the country's format has letters.
func fixVATBody(country, s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if (country == "AT" || country == "CH") && i == 0 {
			continue
		}
		if country == "NL" && i == 9 {
			if c == '8' {
				b[i] = 'B'
			}
			continue
		}
		if country == "FR" && i < 2 || country == "ES" || country == "IE" || country == "CY" {
			continue
		}
		switch c {
		case 'O', 'D', 'Q':
			b[i] = '0'
		case 'L', 'I', '|':
			b[i] = '1'
		case 'S':
			b[i] = '5'
		case 'B':
			b[i] = '8'
		case 'Z':
			b[i] = '2'
		case 'G':
			b[i] = '6'
		}
	}
	return string(b)
}

// vatChecks verifies the check digits of the countries whose rule is
// public and simple; for the others, the format is all we know.
func vatChecks(country, s string) bool {
	switch country {
	case "DE":
		// ISO 7064 MOD 11,10.
		p := 10
		for i := 0; i < 8; i++ {
			sum := (int(s[i]-'0') + p) % 10
			if sum == 0 {
				sum = 10
			}
			p = (2 * sum) % 11
		}
		c := 11 - p
		if c == 10 {
			c = 0
		}
		return c == int(s[8]-'0')
	case "AT":
		sum := 0
		for i := 1; i < 8; i++ {
			d := int(s[i] - '0')
			if i%2 == 0 {
				d *= 2
				d = d/10 + d%10
			}
			sum += d
		}
		c := (96 - sum) % 10
		if c < 0 {
			c += 10
		}
		return c == int(s[8]-'0')
	case "FR":
		if !isNum(s[0]) || !isNum(s[1]) {
			return true
		}
		var n int64
		for _, c := range s[2:] {
			n = n*10 + int64(c-'0')
		}
		key := (12 + 3*(n%97)) % 97
		return key == int64(s[0]-'0')*10+int64(s[1]-'0')
	case "BE":
		var n int64
		for _, c := range s[:8] {
			n = n*10 + int64(c-'0')
		}
		return 97-n%97 == int64(s[8]-'0')*10+int64(s[9]-'0')
	case "IT":
		return luhn(s)
	}
	return true
}

func luhn(s string) bool {
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i] - '0')
		if (len(s)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// ibanLengths are the IBAN lengths per country (SWIFT registry).
var ibanLengths = map[string]int{
	"DE": 22, "AT": 20, "CH": 21, "LI": 21, "FR": 27, "MC": 27, "NL": 18, "BE": 16, "LU": 20, "IT": 27,
	"ES": 24, "PT": 25, "GB": 22, "IE": 22, "PL": 28, "DK": 18, "SE": 24, "FI": 18, "NO": 15, "CZ": 24,
	"SK": 24, "HU": 28, "SI": 19, "HR": 21, "RO": 24, "BG": 22, "GR": 27, "CY": 28, "EE": 20, "LV": 21,
	"LT": 20, "MT": 31, "IS": 26, "SM": 27, "AD": 24, "TR": 26,
}

// ibanAllDigits are the countries whose BBAN is digits only: there OCR's
// O/l confusions can be undone safely.
var ibanAllDigits = map[string]bool{
	"DE": true, "AT": true, "CH": true, "BE": true, "PL": true, "DK": true, "FI": true, "NO": true, "CZ": true,
	"SK": true, "HU": true, "SI": true, "HR": true, "EE": true, "LT": true, "ES": true, "PT": true, "SE": true,
}

var reIBANish = regexp.MustCompile(`\b([A-Z]{2})\s?([0-9OlI]{2})((?:[\s'\x60.,~]?[0-9A-Za-z|]){10,32})`)

type ibanTok struct {
	iban       string
	start, end int
	invalid    bool // fails mod-97, but is labeled IBAN and has the country's length
}

// ibansIn finds IBANs that pass the mod-97 check, in the country's length.
// OCR's confusions are tried away: the checksum says which reading holds.
func ibansIn(s string) []ibanTok {
	if !codeThenDigit(s) {
		return nil
	}
	var out []ibanTok
	for _, m := range reIBANish.FindAllStringSubmatchIndex(s, 10) {
		cc := s[m[2]:m[3]]
		n := ibanLengths[cc]
		if n == 0 {
			continue
		}
		var b []byte
		end, endPlus := m[4], 0
		for i := m[4]; i < m[7] && len(b) < n-1; i++ {
			if strings.IndexByte(" '`.,~", s[i]) >= 0 {
				continue
			}
			if len(b) == n-2 {
				endPlus = i + 1
				b = append(b, s[i])
				break
			}
			b = append(b, s[i])
			end = i + 1
		}
		if len(b) < n-2 {
			continue
		}
		plus := strings.ToUpper(string(b))
		b = b[:n-2]
		if iban, ok := repairIBAN(cc, strings.ToUpper(string(b))); ok {
			out = append(out, ibanTok{iban: iban, start: m[0], end: end})
		} else if iban, ok := ibanWithout(cc, plus); ok {
			out = append(out, ibanTok{iban: iban, start: m[0], end: endPlus})
		} else if strings.HasSuffix(strings.ToUpper(strings.TrimRight(s[max(0, m[0]-8):m[0]], " :")), "IBAN") && ibanShape(cc, strings.ToUpper(string(b))) {
			// Sample and test invoices print IBANs that fail the check;
			// kept, but any IBAN that passes is preferred.
			out = append(out, ibanTok{iban: cc + strings.ToUpper(string(b)), start: m[0], end: end, invalid: true})
		}
	}
	return out
}

var ibanDigitFor = map[byte]byte{'O': '0', 'D': '0', 'Q': '0', 'L': '1', 'I': '1', '|': '1', 'S': '5', 'B': '8', 'Z': '2', 'G': '6'}
var ibanLetterFor = map[byte]byte{'0': 'O', '1': 'I', '5': 'S', '8': 'B', '6': 'G', '2': 'Z'}

// ibanLetters are the BBAN positions that hold letters, per country.
var ibanLetters = map[string][2]int{"GB": {2, 6}, "IE": {2, 6}, "NL": {2, 6}, "MT": {2, 6}}

// repairIBAN returns the IBAN when body (check digits and BBAN) or a
// reading of it with up to six OCR confusions undone passes mod-97.
func repairIBAN(cc, body string) (string, bool) {
	if ibanValid(cc + body) {
		return cc + body, true
	}
	type alt struct {
		pos int
		c   byte
	}
	var alts []alt
	letters, hasLetters := ibanLetters[cc]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if hasLetters && i >= letters[0] && i < letters[1] {
			if l, ok := ibanLetterFor[c]; ok {
				alts = append(alts, alt{i, l})
			}
			continue
		}
		if d, ok := ibanDigitFor[c]; ok && (i < 2 || ibanAllDigits[cc] || cc == "FR" || cc == "GB" || cc == "IT") {
			alts = append(alts, alt{i, d})
		}
	}
	if len(alts) == 0 || len(alts) > 6 {
		return "", false
	}
	b := []byte(body)
	for mask := 1; mask < 1<<len(alts); mask++ {
		copy(b, body)
		for k, a := range alts {
			if mask&(1<<k) != 0 {
				b[a.pos] = a.c
			}
		}
		if ibanValid(cc + string(b)) {
			return cc + string(b), true
		}
	}
	return "", false
}

// ibanWithout undoes a glyph OCR read twice ("DEO05" for "DE05"): body,
// one character longer than the country's IBAN, passes mod-97 without one
// of its letters that stand for a digit, the others read as digits. Only
// where the BBAN is all digits, so that each deletion is one reading and
// the checksum lets through a wrong one about once in a hundred.
func ibanWithout(cc, body string) (string, bool) {
	if !ibanAllDigits[cc] || len(body) != ibanLengths[cc]-1 {
		return "", false
	}
	found := ""
	for k := 0; k < len(body); k++ {
		if _, ok := ibanDigitFor[body[k]]; !ok || k > 0 && body[k-1] == body[k] {
			continue
		}
		b := []byte(body[:k] + body[k+1:])
		for i, c := range b {
			if d, ok := ibanDigitFor[c]; ok {
				b[i] = d
			}
		}
		if !ibanValid(cc + string(b)) {
			continue
		}
		if found != "" && found != cc+string(b) {
			return "", false // two readings: neither is sure
		}
		found = cc + string(b)
	}
	return found, found != ""
}

// ibanShape reports whether body (check digits and BBAN) is alphanumeric
// with digits where the country's BBAN is all digits.
func ibanShape(cc, body string) bool {
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !isNum(c) && (i < 2 || ibanAllDigits[cc] || c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// ibanValid checks the ISO 13616 mod-97 checksum.
func ibanValid(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	r := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// reDocNo is the shape of a document number: letters, digits and the
// joiners numbers use, at least one digit.
var reDocNo = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9\-/._#'\x60~,]*`)

// docNoAfter reads a document number at the start of s (the text after a
// label): it skips what separates label and value, and stops at a glued
// word ("RE-0042Datum").
func docNoAfter(s string) (string, int) {
	i := 0
	// A colon read as "!" too.
	for i < len(s) && strings.IndexByte(" :#.-=~`',_|!", s[i]) >= 0 {
		i++
	}
	// "Nr.", "No.", "n°" between the label and the value.
	low := strings.ToLower(s[i:])
	for _, p := range []string{"nr.", "nr", "no.", "no", "n°", "nº", "number", "nummer", "#"} {
		if strings.HasPrefix(low, p) && (len(low) == len(p) || !isLetter(low[len(p)])) {
			i += len(p)
			for i < len(s) && strings.IndexByte(" :#.", s[i]) >= 0 {
				i++
			}
			break
		}
	}
	m := reDocNo.FindString(s[i:])
	// A comma ends a number unless digits follow it (OCR's speck in
	// "R18,874910"); specks of other kinds are dropped.
	for k := 0; k < len(m); k++ {
		if m[k] == ',' && (k+1 >= len(m) || !isNum(m[k+1])) {
			m = m[:k]
			break
		}
	}
	m = strings.NewReplacer("'", "", "`", "", "~", "", ",", "").Replace(m)
	if m == "" {
		return "", -1
	}
	// Cut at a word glued after a digit: "0042Datum", "0042Kunde".
	for k := 1; k+2 < len(m); k++ {
		if isNum(m[k-1]) && m[k] >= 'A' && m[k] <= 'Z' && m[k+1] >= 'a' && m[k+1] <= 'z' && m[k+2] >= 'a' && m[k+2] <= 'z' {
			m = m[:k]
			break
		}
	}
	m = strings.TrimRight(m, "-/._#")
	// Numbers printed in groups: "260 987 6543".
	if strings.Trim(m, "0123456789") == "" {
		rest := s[i+len(m):]
		for g := 0; g < 4; g++ {
			k := 1
			for k < len(rest) && isNum(rest[k]) {
				k++
			}
			if len(rest) < 3 || rest[0] != ' ' || k < 3 || k > 7 || (k < len(rest) && rest[k] != ' ' && rest[k] != ',') {
				break
			}
			m += rest[:k]
			rest = rest[k:]
		}
	}
	if len(m) < 2 && !(len(m) == 1 && isNum(m[0])) || len(m) > 32 {
		return "", -1
	}
	m = fixDocNo(m)
	if !strings.ContainsAny(m, "0123456789") {
		return "", -1
	}
	return m, i
}

// fixDocNo undoes OCR confusions in the digit groups of a number:
// "RE-2O18-OO42" becomes "RE-2018-0042", "RG18l/19" "RG181/19"; a group's
// leading letters ("RE", "RG") stay.
func fixDocNo(s string) string {
	b := []byte(s)
	segStart := 0
	for i := 0; i <= len(b); i++ {
		if i < len(b) && (isNum(b[i]) || isLetter(b[i]) || b[i] == '|') {
			continue
		}
		seg := b[segStart:i]
		// Skip the letter prefix, up to the first digit.
		p := 0
		for p < len(seg) && !isNum(seg[p]) {
			p++
		}
		if p > 0 && p < len(seg) && p <= 3 {
			// A prefix of one confusable letter before digits is a digit
			// ("O42"), but "RE", "F", "AB" are letters.
			if !(p == 1 && (seg[0] == 'O' || seg[0] == 'l' || seg[0] == 'I' || seg[0] == '|')) {
				seg = seg[p:]
			}
		}
		digits, conf := 0, 0
		for _, c := range seg {
			if isNum(c) {
				digits++
			} else if digitFor(c) != 0 {
				conf++
			}
		}
		if digits > 0 && digits+conf == len(seg) && digits >= conf {
			for k, c := range seg {
				if d := digitFor(c); d != 0 && !isNum(c) {
					seg[k] = d
				}
			}
		}
		segStart = i + 1
	}
	return string(b)
}
