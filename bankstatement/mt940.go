package bankstatement

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"
)

// field is one MT940 tag with its lines, as written.
type field struct {
	tag   string // "20", "61", "60F"...
	lines []string
	line  int // the file's line number of the tag
}

// mt940Start skips what may precede the first :20: line (SWIFT block
// headers "{1:...}{2:...}{4:", blank lines, a bank's few header lines) and
// reports whether a :20: line comes within the first ten lines.
func mt940Start(data []byte) (head, rest []byte, ok bool) {
	if i := bytes.Index(data, []byte("{4:")); i >= 0 && bytes.HasPrefix(data, []byte("{1:")) {
		data = data[i+3:]
	}
	rest = data
	for n := 0; n < 10 && len(rest) > 0; n++ {
		line := rest
		if i := bytes.IndexAny(rest, "\r\n"); i >= 0 {
			line = rest[:i]
		}
		if bytes.HasPrefix(line, []byte(":20:")) {
			return data[:len(data)-len(rest)], rest, true
		}
		rest = bytes.TrimLeft(rest[len(line):], "\r\n")
	}
	return nil, nil, false
}

func parseMT940(data []byte, maxEntries int) ([]Statement, error) {
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, refuse("the file is neither CAMT.053 XML nor MT940 text: it holds binary data")
	}
	if bytes.HasPrefix(data, []byte("{1:")) && (bytes.Contains(data[:min(len(data), 64)], []byte("{2:I942")) ||
		bytes.Contains(data[:min(len(data), 64)], []byte("{2:O942"))) {
		return nil, errMT942
	}
	head, body, ok := mt940Start(data)
	if !ok {
		return nil, refuse("the file is neither CAMT.053 XML nor MT940 text (no :20: line at its start)")
	}
	// German banks write MT940 in ISO 8859-1; a file that is valid UTF-8 is
	// read as such.
	if !utf8.Valid(body) {
		body = latin1(body)
	}
	fields := splitFields(string(body), bytes.Count(head, []byte("\n"))+1)
	var (
		sts   []Statement
		st    *Statement
		tref  string
		total int
		// details are the :86: fields of each entry of st.
		details [][]field
		all     [][][]field
		// entryDetails says the field before was an entry's :61: or :86:.
		entryDetails bool
	)
	for _, f := range fields {
		if f.tag == "" {
			st, entryDetails = nil, false
			continue
		}
		if f.tag == "20" || st == nil {
			sts = append(sts, Statement{Format: FormatMT940})
			st = &sts[len(sts)-1]
			all = append(all, nil)
			tref = ""
		}
		v := strings.TrimSpace(strings.Join(f.lines, "\n"))
		follows := entryDetails
		entryDetails = false
		switch f.tag {
		case "20":
			tref = v
			st.ID = v
		case "25":
			st.Account = mt940Account(v)
		case "28C", "28":
			if v != "" {
				st.ID = tref + "/" + v
			}
		case "34F", "13D", "90C", "90D":
			return nil, errMT942
		case "60F", "60M", "62F", "62M":
			b, ccy, err := mt940Balance(v, f)
			if err != nil {
				return nil, err
			}
			if st.Currency != "" && ccy != st.Currency {
				return nil, refuse("the balance :%s: on line %d is in %s, but the statement's other balances are in %s", f.tag, f.line, ccy, st.Currency)
			}
			st.Currency = ccy
			if f.tag[:2] == "60" {
				st.Opening = b
			} else {
				st.Closing = b
			}
		case "61":
			e, err := mt940Entry(f)
			if err != nil {
				return nil, err
			}
			total++
			if total > maxEntries {
				return nil, refuse("the file has more than %d entries", maxEntries)
			}
			st.Entries = append(st.Entries, e)
			all[len(all)-1] = append(all[len(all)-1], nil)
			entryDetails = true
		case "86":
			// Details follow their :61:, on one :86: or on several (older
			// Dutch files write one :86: a line); after the closing
			// balance they are the statement's, not an entry's.
			if follows {
				details = all[len(all)-1]
				details[len(details)-1] = append(details[len(details)-1], f)
				entryDetails = true
			}
		}
	}
	for i := range sts {
		st := &sts[i]
		if st.Opening == nil && st.Closing == nil && len(st.Entries) == 0 {
			return nil, refuse("statement %d of the MT940 file has no balance (:60F:) and no entry (:61:)", i+1)
		}
		if st.Account.IBAN == "" && st.Account.Number == "" {
			return nil, refuse("statement %s of the MT940 file names no account (:25:)", st.name(i, len(sts)))
		}
		if st.Currency == "" {
			return nil, refuse("statement %s of the MT940 file states no currency: it has no balance (:60F:, :62F:)", st.name(i, len(sts)))
		}
		if st.Account.Currency != "" && st.Account.Currency != st.Currency {
			return nil, refuse("statement %s of the MT940 file names an account in %s (:25:), but its balances are in %s",
				st.name(i, len(sts)), st.Account.Currency, st.Currency)
		}
		st.Account.Currency = st.Currency
		for j := range st.Entries {
			st.Entries[j].Currency = st.Currency
			mt940Details(&st.Entries[j], all[i][j])
		}
		st.fillPeriod()
	}
	return sts, nil
}

// errMT942 refuses the interim report: its entries are the day's so far,
// which the day's statement books again.
var errMT942 = refuse("the file is an MT942 interim report, not an MT940 statement; import the day's MT940 or camt.053 statement instead")

// splitFields cuts the text into tags; a line that does not start a tag
// continues the one before. A line "-" (or "-}") ends a message and gives
// an empty field; inside :86: text a "-" line is text unless a new message
// (":20:", a SWIFT block) or the end of the file follows it.
func splitFields(s string, lineNo int) []field {
	lines := strings.Split(s, "\n")
	var out []field
	open := false
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		n := lineNo + i
		switch {
		case strings.HasPrefix(trimmed, "-}"),
			trimmed == "-" && (!open || out[len(out)-1].tag != "86" || messageEnds(lines[i+1:])):
			out = append(out, field{line: n})
			open = false
			continue
		case strings.HasPrefix(trimmed, "{") && !open:
			continue
		}
		// A wrapped line may start like a tag (":12:11" of a time cut
		// after its hour): inside a field only the tags of MT940 count.
		if tag, rest, ok := cutTag(line); ok && (!open || mt940Tags[tag]) {
			out = append(out, field{tag: tag, lines: []string{rest}, line: n})
			open = true
			continue
		}
		if open && trimmed != "" {
			f := &out[len(out)-1]
			f.lines = append(f.lines, line)
		}
	}
	return out
}

// messageEnds reports whether the lines after a "-" start a new message:
// nothing but blank lines, or a :20: or SWIFT block first.
func messageEnds(rest []string) bool {
	for _, line := range rest {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return strings.HasPrefix(line, ":20:") || strings.HasPrefix(line, "{")
	}
	return true
}

// mt940Tags are the tags of MT940 and of the MT942 interim report.
var mt940Tags = map[string]bool{
	"13": true, "13D": true, "20": true, "21": true, "25": true, "25P": true, "28": true, "28C": true,
	"34F": true, "60F": true, "60M": true, "61": true, "62F": true, "62M": true, "64": true, "65": true,
	"86": true, "90C": true, "90D": true,
}

// cutTag splits ":61:rest" into "61" and "rest".
func cutTag(line string) (tag, rest string, ok bool) {
	if len(line) < 4 || line[0] != ':' {
		return "", "", false
	}
	end := strings.IndexByte(line[1:], ':')
	if end < 2 || end > 3 {
		return "", "", false
	}
	tag = line[1 : end+1]
	if tag[0] < '0' || tag[0] > '9' || tag[1] < '0' || tag[1] > '9' || len(tag) == 3 && (tag[2] < 'A' || tag[2] > 'Z') {
		return "", "", false
	}
	return tag, line[end+2:], true
}

// mt940Account reads :25:, "BLZ/account", "BIC/IBAN" or an IBAN, with an
// optional currency after the account.
func mt940Account(v string) Account {
	a := Account{Number: v}
	parts := strings.Split(v, "/")
	last := strings.TrimSpace(parts[len(parts)-1])
	if n := len(last); n > 3 && isUpper(last[n-3:]) && last[n-4] >= '0' && last[n-4] <= '9' {
		a.Currency = last[n-3:]
		last = last[:n-3]
		a.Number = strings.TrimSuffix(v, a.Currency)
	}
	if iban := validIBAN(last); iban != "" {
		a.IBAN, a.Number = iban, ""
	}
	if len(parts) == 2 && isBIC(compact(parts[0])) {
		a.BIC = compact(parts[0])
	}
	return a
}

func isUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// mt940Balance reads :60F: and :62F:, "C260301EUR1234,56".
func mt940Balance(v string, f field) (*Balance, string, error) {
	if len(v) < 11 || (v[0] != 'C' && v[0] != 'D') {
		return nil, "", refuse("the balance :%s: on line %d is not a mark, a date, a currency and an amount: %q", f.tag, f.line, truncate(v, 40))
	}
	d, ok := yymmdd(v[1:7])
	ccy := v[7:10]
	a, okAmount := parseDecimal(v[10:], ',')
	if !ok || !isUpper(ccy) || !okAmount || a < 0 {
		return nil, "", refuse("the balance :%s: on line %d is not a mark, a date, a currency and an amount: %q", f.tag, f.line, truncate(v, 40))
	}
	if v[0] == 'D' {
		a = -a
	}
	return &Balance{Amount: a, Date: d}, ccy, nil
}

// yymmdd reads a SWIFT date; years 80 to 99 are 19xx.
func yymmdd(s string) (time.Time, bool) {
	if len(s) != 6 || !allDigits(s) {
		return time.Time{}, false
	}
	y := int(s[0]-'0')*10 + int(s[1]-'0')
	if y < 80 {
		y += 2000
	} else {
		y += 1900
	}
	return monthDay(y, s[2:6])
}

// monthDay reads MMDD in year y. A day past the month's end is its last
// day: German banks write interest and fee bookings on 30 February.
func monthDay(y int, s string) (time.Time, bool) {
	m := time.Month(int(s[0]-'0')*10 + int(s[1]-'0'))
	d := int(s[2]-'0')*10 + int(s[3]-'0')
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	if last := day(y, m+1, 0).Day(); d > last {
		d = last
	}
	return day(y, m, d), true
}

// mt940Entry reads :61:, value date YYMMDD, [entry date MMDD], mark C, D,
// RC or RD, [funds code], amount, transaction type (1 letter and 3
// characters), customer reference [//bank reference]; a second line holds
// supplementary details.
func mt940Entry(f field) (Entry, error) {
	v := f.lines[0]
	bad := func(what string) (Entry, error) {
		return Entry{}, refuse("the entry :61: on line %d has %s: %q", f.line, what, truncate(v, 80))
	}
	if len(v) < 6 {
		return bad("no value date")
	}
	value, ok := yymmdd(v[:6])
	if !ok {
		return bad("no valid value date")
	}
	s := v[6:]
	booking := value
	if len(s) >= 4 && strings.TrimSpace(s[:4]) == "" {
		s = s[4:] // some banks leave the optional entry date blank
	}
	if len(s) >= 4 && allDigits(s[:4]) {
		booking, ok = entryDate(value, s[:4])
		if !ok {
			return bad("no valid entry date")
		}
		s = s[4:]
	}
	sign := Amount(1)
	switch {
	case strings.HasPrefix(s, "RC"):
		sign, s = -1, s[2:] // a credit reversed takes money out
	case strings.HasPrefix(s, "RD"):
		s = s[2:]
	case strings.HasPrefix(s, "C"):
		s = s[1:]
	case strings.HasPrefix(s, "D"):
		sign, s = -1, s[1:]
	default:
		return bad("no credit or debit mark (C, D, RC, RD)")
	}
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		s = s[1:] // the funds code, the currency's third letter
	}
	n := 0
	for n < len(s) && n < 15 && (s[n] >= '0' && s[n] <= '9' || s[n] == ',') {
		n++
	}
	a, ok := parseDecimal(s[:n], ',')
	if n == 0 || !ok {
		return bad("no valid amount")
	}
	s = s[n:]
	e := Entry{BookingDate: booking, ValueDate: value, Amount: sign * a}
	// The type code takes 4 characters; the customer reference follows,
	// then the bank's after "//".
	if len(s) >= 4 {
		s = s[4:]
		if _, bankRef, found := strings.Cut(s, "//"); found {
			e.BankReference = strings.TrimSpace(bankRef)
		}
	}
	return e, nil
}

// entryDate places an MMDD entry date in the year that puts it nearest the
// value date: a December booking of a January value date is the year
// before.
func entryDate(value time.Time, mmdd string) (time.Time, bool) {
	best, found := time.Time{}, false
	for _, y := range []int{value.Year() - 1, value.Year(), value.Year() + 1} {
		t, ok := monthDay(y, mmdd)
		if !ok {
			continue
		}
		if !found || absDays(t, value) < absDays(best, value) {
			best, found = t, true
		}
	}
	return best, found
}

func absDays(a, b time.Time) time.Duration {
	d := a.Sub(b)
	if d < 0 {
		return -d
	}
	return d
}

// sepaKeywords start the parts of SEPA remittance German banks write in
// the ?2x subfields.
var sepaKeywords = []string{"EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "COAM+", "OAMT+", "SVWZ+", "ABWA+", "ABWE+", "IBAN+", "BIC+"}

// The widths MT940 fills before it wraps: a line of text (SWIFT's 65x),
// and a remittance subfield (?20 to ?29 of the German format, 27
// characters).
const (
	lineWidth     = 65
	subfieldWidth = 27
)

// mt940Details reads the :86: fields of an entry into it. Structured
// details start with a three-digit transaction code and a separator
// (usually '?'); then ?20-?29 and ?60-?63 are the remittance, ?31 the
// counterparty's IBAN, ?32-?33 its name. Their lines are joined as they
// are: a bank breaks them anywhere, even inside a subfield's code. A bank
// fills a subfield before it starts the next, so a full one (27
// characters) goes on in the next without a space, and a shorter one ended
// at a space the bank left out; so with the name's ?32 and ?33. Text without subfields wraps the same way
// at a line's 65 characters. Further :86: fields add lines of their own.
func mt940Details(e *Entry, fields []field) {
	if len(fields) == 0 {
		return
	}
	var rem []string
	lines := fields[0].lines
	first := strings.TrimLeft(lines[0], " ")
	if len(first) < 4 || !allDigits(first[:3]) || isAlnum(first[3]) || first[3] == ' ' {
		rem = append(rem, joinWrapped(lines))
	} else {
		rem = append(rem, mt940Subfields(e, first+strings.Join(lines[1:], "")))
	}
	for _, f := range fields[1:] {
		rem = append(rem, joinWrapped(f.lines))
	}
	e.RemittanceInfo = clean(strings.Join(rem, " "), MaxRemittance)
	if ref := sepaPart(e.RemittanceInfo, "EREF+"); ref != "" && !strings.EqualFold(ref, "NOTPROVIDED") {
		// A SEPA end-to-end id has at most 35 characters; text after them
		// is not the id.
		e.EndToEndID = strings.TrimSpace(ref[:min(len(ref), 35)])
	}
}

// mt940Subfields reads structured details, s from the transaction code on,
// into the entry's counterparty, and returns the remittance.
func mt940Subfields(e *Entry, s string) string {
	sep := s[3]
	var rem, name strings.Builder
	full, nameFull := true, true
	for part := range strings.SplitSeq(s[4:], string(sep)) {
		if len(part) < 2 || !allDigits(part[:2]) {
			continue
		}
		code, text := part[:2], part[2:]
		switch {
		case code >= "20" && code <= "29" || code >= "60" && code <= "63":
			if rem.Len() > 0 && (!full || hasKeyword(text)) {
				rem.WriteByte(' ')
			}
			rem.WriteString(text)
			full = utf8.RuneCountInString(text) >= subfieldWidth
		case code == "31":
			e.CounterpartyIBAN = validIBAN(text)
		case code == "32" || code == "33":
			if name.Len() > 0 && !nameFull {
				name.WriteByte(' ')
			}
			name.WriteString(text)
			nameFull = utf8.RuneCountInString(text) >= subfieldWidth
		}
	}
	e.CounterpartyName = clean(name.String(), MaxName)
	return rem.String()
}

// joinWrapped joins the lines of a text field: a full line was wrapped
// where it reached the width and goes on in the next; a shorter one ended
// at a space.
func joinWrapped(lines []string) string {
	var b strings.Builder
	for i, line := range lines {
		b.WriteString(line)
		if i < len(lines)-1 && utf8.RuneCountInString(line) < lineWidth {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

func hasKeyword(s string) bool {
	for _, k := range sepaKeywords {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}

// sepaPart gives the text after keyword up to the next keyword.
func sepaPart(s, keyword string) string {
	i := strings.Index(s, keyword)
	if i < 0 || i > 0 && s[i-1] != ' ' {
		return ""
	}
	s = s[i+len(keyword):]
	end := len(s)
	for _, k := range sepaKeywords {
		if j := strings.Index(s, " "+k); j >= 0 && j < end {
			end = j
		}
	}
	return strings.TrimSpace(s[:end])
}
