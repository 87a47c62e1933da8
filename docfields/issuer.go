package docfields

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"acctapi/document"
)

var (
	// A sender line above the address window: "Muster GmbH · Hauptstr. 1 · 12345 Berlin".
	reSenderLine = regexp.MustCompile(`^\s*([^·•|,]{2,60}?)\s*(?:[·•|]|\s-\s|,)\s*.*\b\d{4,5}\s+\pL`)
	reLegalForm  = regexp.MustCompile(`(?i)(?:^|[\s.,&])(GmbH(?:\s*&\s*Co\.?\s*KG)?|gGmbH|AG|UG(?:\s*\(haftungsbeschränkt\))?|KG|OHG|GbR|e\.\s?K\.|e\.\s?V\.|mbH|PartG(?:\s*mbB)?|Ltd\.?|Limited|LLC|LLP|Inc\.?|Corp\.?|PLC|SARL|S\.A\.R\.L\.|S\.\s?[àa]\s?r\.\s?l\.|SAS|S\.A\.S\.|SA|S\.A\.|EURL|SNC|SE|BV|B\.V\.|NV|N\.V\.|S\.p\.A\.|S\.r\.l\.|Sp\.\s?z\s?o\.o\.|AB|ApS|A/S|Oy|KGaA|Co\.\s?KG|eG|mbB)(?:$|[\s.,)])`)
	// reTradeStart opens the name of a firm without a legal form.
	reTradeStart  = regexp.MustCompile(`(?i)^(Steuerberat\w*|Rechtsanw\w*|Praxis|Apotheke|Bäckerei|Metzgerei|Restaurant|Ristorante|Gaststätte|Hotel|Café|Cafe|Brasserie|Boulangerie|Pharmacie|Librairie|Tankstelle|Malermeister|Elektromeister|Tischlerei|Schreinerei|Dachdeckerei|Sanitär|Friseur|Autohaus|Kanzlei|Ingenieurbüro|Architekt\w*|Dr\.)\b`)
	reBankName    = regexp.MustCompile(`(?i)(sparkasse|volksbank|raiffeisenbank|\bbank\b|\w+bank\b|postbank|commerzbank|\bing\b|\bdkb\b|\bn26\b|comdirect|consorsbank|\bbanque\b|crédit|credit agricole|caisse d'épargne|\bpsd\b|\bgls\b|hypovereinsbank|unicredit|targobank|santander|barclays|hsbc|revolut)`)
	reFinanzamt   = regexp.MustCompile(`(?i)^\s*(finanzamt\s+[\pL\- ]+|hm revenue & customs|hmrc|direction générale des finances publiques|internal revenue service|bundeszentralamt für steuern)`)
	rePostcode    = regexp.MustCompile(`\b(?:D-|A-|CH-|F-)?\d{4,5}\s+\pL`)
	reStreet      = regexp.MustCompile(`(?i)(str\.|straße|strasse|weg\b|allee|platz|gasse|ring\b|damm\b|ufer\b|chaussee|street|road|\brd\.|avenue|\bave\b|rue\b|boulevard|bd\b|\d+\s*[a-z]?\s*$)`)
	reContactish  = regexp.MustCompile(`(?i)(\btel\b|\bfax\b|e-?mail|www\.|http|@|\biban\b|\bbic\b|ust-?id|\bvat\b|steuer-?nr|steuernummer|amtsgericht|\bhrb\b|geschäftsführ|\bseite\b|\bpage\b|\bsitz\b|registergericht|bankverbindung)`)
	reRecipStart  = regexp.MustCompile(`(?i)^\s*(herrn?|frau|eheleute|familie|mr\.?|mrs\.?|ms\.?|monsieur|madame|mme\.?|m\.)\s+\pL`)
	reRecipLabel  = regexp.MustCompile(`(?i)^\s*(rechnungsempfänger|rechnungsadresse|rechnungsanschrift|bill(?:ed)? to|billing address|invoice(?:d)? to|sold to|ship to|deliver to|lieferadresse|lieferanschrift|empfänger|kunde|customer|an|to|client|factur[ée] à|adresse de (?:facturation|livraison)|destinataire|adressé à|kontoinhaber|account holder|arbeitnehmer|employee|mitarbeiter(?:in)?|mieter|tenant|käufer|buyer|steuerpflichtige[r]?)\b\s*:?\s*`)
	reIssuerLabel = regexp.MustCompile(`(?i)^\s*(rechnungssteller|verkäufer|seller|from|vendor|supplier|lieferant|auftragnehmer|fournisseur|vendeur|émetteur|emetteur|arbeitgeber|employer|leistungserbringer|absender|issued by|sold by|verkauft von|vermieter|landlord|händler|merchant|firma|company)\s*:\s*|^\s*(verkauft von|sold by|issued by|rechnungssteller|ausgestellt von)\s+|^\s*(verkäufer|seller|rechnungssteller|lieferant|supplier|vendeur|fournisseur|émetteur|arbeitgeber|employer)\s*$`)
)

// issuerFirstWords open the labels of reIssuerLabel: cells that start
// otherwise need not be matched.
var issuerFirstWords = map[string]bool{"rechnungssteller": true, "verkäufer": true, "seller": true, "from": true,
	"vendor": true, "supplier": true, "lieferant": true, "auftragnehmer": true, "fournisseur": true, "vendeur": true,
	"émetteur": true, "emetteur": true, "arbeitgeber": true, "employer": true, "leistungserbringer": true,
	"absender": true, "issued": true, "sold": true, "verkauft": true, "vermieter": true, "landlord": true,
	"händler": true, "merchant": true, "firma": true, "company": true, "ausgestellt": true}

func issuerLabelIn(s string) []int {
	w, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	if !issuerFirstWords[strings.ToLower(strings.TrimRight(w, ":"))] {
		return nil
	}
	return reIssuerLabel.FindStringIndex(s)
}

// legalWords are the words of reLegalForm, lower case without their last
// dot: a cell with none of them has no legal form.
var legalWords = map[string]bool{"gmbh": true, "ggmbh": true, "ag": true, "ug": true, "kg": true, "ohg": true,
	"gbr": true, "e.k": true, "e.v": true, "mbh": true, "partg": true, "ltd": true, "limited": true, "llc": true,
	"llp": true, "inc": true, "corp": true, "plc": true, "sarl": true, "s.a.r.l": true, "sas": true, "s.a.s": true,
	"sa": true, "s.a": true, "eurl": true, "snc": true, "se": true, "bv": true, "b.v": true, "nv": true, "n.v": true,
	"s.p.a": true, "s.r.l": true, "sp": true, "ab": true, "aps": true, "a/s": true, "oy": true, "kgaa": true,
	"co": true, "eg": true, "mbb": true, "r.l": true, "k": true, "v": true, "e": true}

func hasLegalForm(s string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == ',' || r == '(' || r == ')' || r == '&' }) {
		if legalWords[strings.TrimRight(w, ".")] {
			return reLegalForm.MatchString(s)
		}
	}
	return false
}

// recipientLines marks the lines of the recipient's address: after a
// sender line or a recipient label ("Rechnungsempfänger", "Bill to"), or
// opened by a salutation ("Herrn", "Mrs"), up to a blank line.
func (a *analysis) recipientLines() []bool {
	n := len(a.d.lines)
	rec := make([]bool, n)
	mark := func(from, max int) {
		for k := from; k < n && k < from+max; k++ {
			t := strings.TrimSpace(a.d.lines[k].raw)
			if t == "" {
				if k > from {
					return
				}
				continue
			}
			rec[k] = true
		}
	}
	for i, l := range a.d.lines {
		if l.page > 0 || i > 60 {
			break
		}
		t := strings.TrimSpace(l.raw)
		if t == "" {
			continue
		}
		first := t
		if cs := cells(l.raw); len(cs) > 0 {
			first = cs[0].text
		}
		switch {
		case a.isSenderLine(i):
			mark(i+1, 6)
		case reRecipLabel.MatchString(first):
			if rest := reRecipLabel.ReplaceAllString(first, ""); strings.TrimSpace(rest) != "" {
				rec[i] = true
				mark(i+1, 5)
			} else {
				mark(i+1, 6)
			}
		case reRecipStart.MatchString(first):
			rec[i] = true
			mark(i+1, 4)
		}
	}
	return rec
}

func (a *analysis) isSenderLine(i int) bool {
	// The sender line sits above the address window, in the top of the
	// first page; the same line in the footer is the issuer's imprint.
	if a.d.lines[i].page > 0 || i > 30 || i > len(a.d.lines)*6/10 {
		return false
	}
	t := strings.TrimSpace(a.d.lines[i].raw)
	if len(t) > 120 || !rePostcode.MatchString(t) {
		return false
	}
	seps := strings.Count(t, "·") + strings.Count(t, "•") + strings.Count(t, "|") + strings.Count(t, " - ")
	if seps >= 2 {
		return true
	}
	// Comma-separated, small, one line: "Muster GmbH, Hauptstr. 1, 12345 Berlin".
	return strings.Count(t, ",") >= 2 && len(cells(a.d.lines[i].raw)) == 1 && i < 30 && reLegalForm.MatchString(t)
}

// issuerWeights names every weight the issuer's reader uses.
type issuerWeights struct {
	Labelled, SenderLine, Party, Office float64 // "Verkäufer: X"; a sender line's first part; a contract's first party; a tax office
	LegalForm, LegalTop, LegalFoot      float64 // a name with a legal form (GmbH, Ltd); in the letterhead; in the footer
	LegalInRecipient, Imprint           float64 // within the address window; beside the VAT id, the bank or the register
	LegalLineDecay                      float64 // a legal name's loss a line down the page
	Bank, BankLineDecay                 float64 // a bank statement's bank, and its loss a line down
	Letterhead, LetterheadReceipt       float64 // the first plain line of the page; of a receipt
	LetterheadTopLines, TradeWord       float64 // on the first three lines; opened by a trade ("Bäckerei")
	LetterheadLineDecay                 float64 // the letterhead's loss a line down
	Repeat                              float64 // for each repetition on the page, up to three
}

var issuerW = issuerWeights{
	Labelled: 6, SenderLine: 5, Party: 6, Office: 5,
	LegalForm: 3, LegalTop: 0.5, LegalFoot: 0.6,
	LegalInRecipient: -1, Imprint: 1,
	LegalLineDecay: 0.002,
	Bank:           4.5, BankLineDecay: 0.01,
	Letterhead: 3.3, LetterheadReceipt: 3.8,
	LetterheadTopLines: 0.3, TradeWord: 0.3,
	LetterheadLineDecay: 0.05,
	Repeat:              0.6,
}

type nameCand struct {
	v     string
	score float64
}

// pickIssuer chooses the issuer's name: the candidates of
// issuerCandidates, each raised for how often the page repeats it.
func (a *analysis) pickIssuer() string {
	return a.chooseIssuer(a.issuerCandidates())
}

// issuerCandidates are the names the page gives its issuer: named by a
// label ("Verkäufer:") first; then the first part of a sender line; then a
// line with a legal form (GmbH, Ltd, SARL) outside the address window, at
// the top or in the footer; for a bank statement the bank and for a tax
// notice the office; the letterhead's first line; a contract's first
// party. Names of the recipient's address are never candidates.
func (a *analysis) issuerCandidates() []nameCand {
	var cs []nameCand
	recipNames := a.recipientNames()
	add := func(v string, s float64) {
		v = cleanName(v)
		if v == "" || recipNames[normName(v)] || !plausibleName(v) {
			return
		}
		cs = append(cs, nameCand{v, s})
	}
	n := len(a.d.lines)
	for i, l := range a.d.lines {
		if strings.TrimSpace(l.raw) == "" {
			continue
		}
		if !(l.page == 0 && i < 30) && !a.nearPageEnd(i, 20) {
			// Names stand in the letterhead and the footer; the body
			// between names other firms.
			continue
		}
		for ci, c := range cells(l.raw) {
			if m := issuerLabelIn(c.text); m != nil {
				rest := strings.TrimSpace(c.text[m[1]:])
				if rest == "" {
					rest = a.nameBelow(i, c)
				}
				add(firstSegment(rest), issuerW.Labelled)
			}
			if ci == 0 && a.isSenderLine(i) {
				if m := reSenderLine.FindStringSubmatch(l.raw); m != nil {
					add(m[1], issuerW.SenderLine)
				}
			}
			if a.recip[i] && c.start < 40 {
				continue
			}
			if hasLegalForm(c.text) && !reRecipLabel.MatchString(c.text) && !a.valueIn(i, c) {
				s := issuerW.LegalForm
				switch {
				case l.page == 0 && i < 15:
					s += issuerW.LegalTop
				case i > n*2/3:
					s += issuerW.LegalFoot
				}
				if a.recip[i] {
					s += issuerW.LegalInRecipient
				}
				if a.nearImprint(i) {
					s += issuerW.Imprint
				}
				add(legalName(firstSegment(c.text)), s-float64(i)*issuerW.LegalLineDecay)
			}
			switch a.kind {
			case document.BankStatement:
				if reBankName.MatchString(c.text) && i < 20 {
					add(firstSegment(c.text), issuerW.Bank-float64(i)*issuerW.BankLineDecay)
				}
			case document.TaxNotice:
				if m := reFinanzamt.FindString(c.text); m != "" {
					add(m, issuerW.Office)
				}
			}
		}
	}
	if v, s, ok := a.letterhead(); ok {
		add(v, s)
	}
	if a.kind == document.Contract {
		if v, ok := a.firstParty(); ok {
			add(v, issuerW.Party)
		}
	}
	return cs
}

// recipientNames are the cells of the recipient's address, normalised.
// The address window is on the left: a column beside it may name the
// seller.
func (a *analysis) recipientNames() map[string]bool {
	names := map[string]bool{}
	for i, l := range a.d.lines {
		if a.recip[i] {
			for _, c := range cells(l.raw) {
				if c.start < 40 {
					names[normName(c.text)] = true
				}
			}
		}
	}
	return names
}

// letterhead is the first line of the first page that is not a title, a
// label, a date, an amount or an address line, with its score.
func (a *analysis) letterhead() (string, float64, bool) {
	for i, l := range a.d.lines {
		if l.page > 0 || i > 12 {
			break
		}
		if a.recip[i] {
			continue
		}
		cl := cells(l.raw)
		if len(cl) == 0 {
			continue
		}
		c := cl[0]
		s := issuerW.Letterhead
		if a.kind == document.Receipt {
			s = issuerW.LetterheadReceipt
		}
		if i <= 2 {
			s += issuerW.LetterheadTopLines
		}
		if reTradeStart.MatchString(c.text) {
			s += issuerW.TradeWord
		}
		if len(a.labels[i]) > 0 && a.labels[i][0].start <= c.start+1 || len(a.dates[i]) > 0 || len(a.amounts[i]) > 0 || isKindTitle(c.text) || a.isSenderLine(i) {
			continue
		}
		return firstSegment(c.text), s - float64(i)*issuerW.LetterheadLineDecay, true
	}
	return "", 0, false
}

// firstParty is a contract's first party: the line after "zwischen" or
// "between".
func (a *analysis) firstParty() (string, bool) {
	for i, l := range a.d.lines {
		if i > 40 {
			break
		}
		if m := reBetween.FindStringSubmatch(strings.TrimSpace(l.raw)); m != nil {
			rest := strings.TrimSpace(m[1])
			for k := i + 1; rest == "" && k < len(a.d.lines) && k < i+4; k++ {
				rest = strings.TrimSpace(a.d.lines[k].raw)
			}
			return firstSegment(rest), true
		}
	}
	return "", false
}

// chooseIssuer takes the best candidate. An issuer repeats itself
// (letterhead, sender line, footer, the account holder); a recipient is
// named once.
func (a *analysis) chooseIssuer(cs []nameCand) string {
	best := nameCand{}
	for _, c := range cs {
		key := normName(c.v)
		seen := 0
		for _, l := range a.d.lines {
			if strings.Contains(strings.ToLower(l.raw), key) {
				seen++
			}
		}
		c.score += issuerW.Repeat * float64(min(max(seen-1, 0), 3))
		if c.score > best.score {
			best = c
		}
	}
	return best.v
}

var reNameField = regexp.MustCompile(`(?i)^(?:name|firma|firmenname|company|company name|raison sociale|nom)\s*:\s*(\S.*)$`)

// nameBelow reads the name under a label such as "Verkäufer:", in the
// label's column: the first line with a legal form, else the first that
// is neither a "key: value" line nor mostly digits.
func (a *analysis) nameBelow(i int, c cell) string {
	first := ""
	for k := i + 1; k < len(a.d.lines) && k <= i+6; k++ {
		if m := reNameField.FindStringSubmatch(collapseSpaces(a.d.lines[k].raw)); m != nil {
			// "Name:      Lieferant GmbH" in a seller block.
			return m[1]
		}
		var t string
		for _, nc := range cells(a.d.lines[k].raw) {
			if nc.start <= c.start+8 && nc.end >= c.start {
				t = nc.text
				break
			}
		}
		if t == "" {
			if first != "" {
				break
			}
			continue
		}
		if m := reNameField.FindStringSubmatch(t); m != nil {
			// "Name: Lieferant GmbH" in a seller block.
			return m[1]
		}
		if strings.Contains(t, ":") || !plausibleName(t) {
			continue
		}
		if reLegalForm.MatchString(t) {
			return t
		}
		if first == "" {
			first = t
		}
	}
	return first
}

// legalName cuts a firm's name out of a sentence that names it: the
// capitalized words before its legal form ("... transfer to Sarah Wright
// Design Ltd").
func legalName(s string) string {
	ws := strings.Fields(s)
	if len(ws) <= 6 {
		return s
	}
	loc := reLegalForm.FindStringIndex(s)
	if loc == nil {
		return s
	}
	head := strings.Fields(s[:loc[0]+1])
	start := len(head)
	for start > 0 && len(head)-start < 5 {
		w := head[start-1]
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && w != "&" && w != "und" && w != "and" {
			break
		}
		start--
	}
	tail := strings.TrimSpace(s[loc[0]:])
	if tw := strings.Fields(tail); len(tw) > 0 {
		tail = tw[0]
	}
	return strings.Join(append(head[start:], tail), " ")
}

var reBetween = regexp.MustCompile(`(?i)^(?:zwisch[ec]n|b[ec]tw[ec][ec]n|[ec]ntr[ec])\b[:\s]*(.*)$`)

var reImprint = regexp.MustCompile(`(?i)(ust-?id|vat\s*(?:reg|no|id)|tva\s*intra|iban|amtsgericht|registergericht|hrb|geschäftsführ|sitz\s*(?:der|:)|siret|rcs|company\s*no)`)

// nearImprint reports whether line i or its neighbours carry what the
// law makes an issuer print: VAT id, bank, register, managing director.
func (a *analysis) nearImprint(i int) bool {
	if !a.nearPageEnd(i, 12) {
		return false
	}
	for k := max(0, i-2); k < len(a.d.lines) && k <= i+2; k++ {
		if !a.recip[k] && (len(a.vats[k]) > 0 || len(a.ibans[k]) > 0 || reImprint.MatchString(a.d.lines[k].raw)) {
			return true
		}
	}
	return false
}

// valueIn reports whether a date or an amount stands in cell c of line
// i: a booking line or a line item names a firm that did not issue the
// document.
func (a *analysis) valueIn(i int, c cell) bool {
	for _, d := range a.dates[i] {
		if d.start >= c.start && d.start < c.end {
			return true
		}
	}
	for _, x := range a.amounts[i] {
		if x.start >= c.start && x.start < c.end {
			return true
		}
	}
	return false
}

func (a *analysis) nearPageEnd(i, n int) bool {
	p := a.d.lines[i].page
	for k := i + 1; k < len(a.d.lines) && k <= i+n; k++ {
		if a.d.lines[k].page != p {
			return true
		}
	}
	return i+n >= len(a.d.lines)
}

func isKindTitle(s string) bool {
	if len(strings.Fields(s)) > 4 {
		return false
	}
	for _, h := range kindMatcher.find(s, fold(s)) {
		if kindWords[h.id].titled {
			return true
		}
	}
	return false
}

// firstSegment cuts a footer or sender line at its first separator:
// "Muster GmbH · Sitz Berlin" is "Muster GmbH".
func firstSegment(s string) string {
	for _, sep := range []string{" · ", "·", " • ", "•", " | ", "|", " - ", " – ", ", ", "  "} {
		if i := strings.Index(s, sep); i > 0 {
			rest := s[i+len(sep):]
			if sep == ", " && !(rePostcode.MatchString(rest) || reStreet.MatchString(rest) || reContactish.MatchString(rest)) && !strings.HasPrefix(rest, "Inh") && !reEndsLegalForm.MatchString(s[:i]) {
				continue
			}
			s = s[:i]
		}
	}
	return s
}

var reEndsLegalForm = regexp.MustCompile(`(?i)(GmbH|AG|KG|mbH|Ltd\.?|Limited|LLC|Inc\.?|SARL|SAS|SA|S\.\s?[àa]\s?r\.\s?l\.|SE|e\.\s?K\.|plc|BV)$`)

var reNameLead = regexp.MustCompile(`(?i)^(rechnungssteller|verkäufer|seller|from|vendor|supplier|lieferant|arbeitgeber|employer|firma|company|absender)\s*:\s*`)

var reAfterLegalForm = regexp.MustCompile(`(?i)^(.*?\b(?:GmbH(?:\s*&\s*Co\.?\s*KG)?|AG|KG|mbH|mbB|Ltd\.?|Limited|LLC|LLP|Inc\.?|Corp\.?|plc|SARL|SAS|SA|EURL|SE|GbR|OHG|e\.\s?K\.))\s+.*\d`)

// reGluedLegalForm is a legal form OCR glued to the name before it, the
// space between lost: "PRINTLLC", "SchmidtGmbH".
var reGluedLegalForm = regexp.MustCompile(`\b(\p{Lu}\p{L}{2,}?)(GmbH|GMBH|LLC|Ltd\.|LTD\.?)(\s|$)`)

func cleanName(s string) string {
	s = reNameLead.ReplaceAllString(strings.TrimSpace(s), "")
	s = reGluedLegalForm.ReplaceAllString(s, "$1 $2$3")
	// Glued to an address by a lost line break: "Muster GmbH 12 Main Rd".
	if m := reAfterLegalForm.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	s = strings.Trim(s, " ,;:-·•|*_=")
	s = strings.TrimLeft(s, ".")
	if strings.HasSuffix(strings.ToLower(s), " e") {
		// "Muster e.K." lost its dots.
		return collapseSpaces(s)
	}
	return collapseSpaces(s)
}

func plausibleName(s string) bool {
	if len(s) < 2 || len(s) > 90 {
		return false
	}
	letters, digits := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		}
	}
	if letters < 2 || digits > letters {
		return false
	}
	if reContactish.MatchString(s) && !reLegalForm.MatchString(s) {
		return false
	}
	return !rePostcode.MatchString(s)
}

func normName(s string) string {
	return strings.ToLower(collapseSpaces(s))
}
