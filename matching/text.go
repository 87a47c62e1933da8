package matching

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MinNumberLength is the shortest document number, in letters and digits,
// looked for in the remittance text: a shorter one is found by chance.
const MinNumberLength = 3

// tokens cuts s into upper-case runs of letters or of digits: any other
// character separates, and so does a change between letters and digits,
// so that "RE-2026/001", "re 2026 001" and "RE2026001" give the same
// tokens.
func tokens(s string) []string {
	var out []string
	var cur strings.Builder
	kind := 0 // 1 letters, 2 digits
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range fold(s) {
		k := 0
		switch {
		case unicode.IsDigit(r):
			k = 2
		case unicode.IsLetter(r):
			k = 1
		}
		if k != kind {
			flush()
			kind = k
		}
		if k != 0 {
			cur.WriteRune(unicode.ToUpper(r))
		}
	}
	flush()
	return out
}

// numberFound reports whether a document number, given as its tokens
// joined, appears in the remittance tokens as whole tokens: it equals a run
// of remittance tokens joined, so "RE-12" is found in "Rechnung RE 12" and
// "re12" but not in "RE-123".
func numberFound(remittance []string, want string) bool {
	if len(want) < MinNumberLength {
		return false
	}
	for i := range remittance {
		got := ""
		for j := i; j < len(remittance) && len(got) < len(want); j++ {
			got += remittance[j]
			if got == want {
				return true
			}
		}
	}
	return false
}

// NameThreshold is the similarity from which a counterparty's name counts
// as the issuer's.
const NameThreshold = 0.5

// legalForms are words of company names that say what kind of company it
// is, not which: they are left out when names are compared, as are words of
// one letter ("S.à r.l." gives S, A, R, L).
var legalForms = map[string]bool{
	"GMBH": true, "MBH": true, "AG": true, "KG": true, "KGAA": true, "OHG": true, "UG": true, "GBR": true, "EK": true,
	"EV": true, "SE": true, "CO": true, "HAFTUNGSBESCHRAENKT": true, "LTD": true, "LIMITED": true, "LLC": true,
	"INC": true, "CORP": true, "PLC": true, "LLP": true, "SARL": true, "SAS": true, "SA": true, "SCA": true,
	"SRL": true, "SPA": true, "BV": true, "NV": true, "AB": true, "AS": true, "OY": true, "APS": true,
	"KFT": true, "ZOO": true, "UND": true, "AND": true, "THE": true, "EG": true, "MBB": true, "PARTG": true,
	"GGMBH": true, "VVAG": true, "AOER": true,
}

// nameTokens are the words of a name that say which company it is:
// folded, upper-case, without legal forms.
func nameTokens(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		t = strings.ToUpper(t)
		if len(t) > 1 && !legalForms[t] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// similarity is the share of the shorter name's words found in the other
// name; a word of four letters or more also agrees with a word it begins
// (bank lines cut names short).
func similarity(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	found := 0
	for _, x := range a {
		for _, y := range b {
			if x == y || len(x) >= 4 && len(y) >= 4 && (strings.HasPrefix(x, y) || strings.HasPrefix(y, x)) {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(a))
}

// umlauts are spelt out as German banks spell them in SEPA text.
var umlauts = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "Ae", "Ö", "Oe", "Ü", "Ue", "ß", "ss")

// fold spells out umlauts and drops other accents, so that "Müller",
// "Mueller" and "MUELLER" compare equal, and "Café" and "Cafe".
func fold(s string) string {
	s = umlauts.Replace(s)
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// instalmentWords say in a remittance that a payment is a part of what a
// document asks: German, English and French.
var instalmentWords = map[string]bool{
	"TEILZAHLUNG": true, "TEILBETRAG": true, "RATE": true, "RATENZAHLUNG": true, "ANZAHLUNG": true,
	"RESTZAHLUNG": true, "RESTBETRAG": true, "PARTIAL": true, "INSTALMENT": true, "INSTALLMENT": true,
	"ACOMPTE": true, "PARTIEL": true, "PARTIELLE": true, "ECHEANCE": true,
}

// saysInstalment reports whether the remittance says the payment is a
// part payment.
func saysInstalment(remittance string) bool {
	return slices.ContainsFunc(tokens(remittance), func(t string) bool { return instalmentWords[t] })
}

// NumberKey is what a remittance naming the document numbered number must
// hold, upper-case, for a store to look for it first: the longest run of
// its letters or digits (the last of equal ones, a serial number's end
// rather than its year); "" when the number is too short to be looked for.
func NumberKey(number string) string {
	key := ""
	for _, t := range tokens(number) {
		if len(t) >= len(key) {
			key = t
		}
	}
	if len(key) < MinNumberLength {
		return ""
	}
	return key
}
