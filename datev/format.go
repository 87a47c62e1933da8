// Package datev writes what DATEV imports: the EXTF Buchungsstapel (header
// version 700, format category 21, format version 13) and the document
// archive's document.xml (version 6.0), packed with the documents' files in
// one ZIP that streams, so that an export of any size holds little memory.
// It knows neither HTTP nor SQL; the rules of booking a document are in
// booking.go.
package datev

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// The header's fixed values, as DATEV's format description gives them.
const (
	HeaderVersion  = 700
	FormatCategory = 21
	FormatName     = "Buchungsstapel"
	FormatVersion  = 13
	// MaxNumber is the longest Belegfeld 1; MaxText the longest
	// Buchungstext; MaxLabel the longest batch label in the header.
	MaxNumber = 36
	MaxText   = 60
	MaxLabel  = 30
	// MaxDocuments is the most documents one document.xml may name.
	MaxDocuments = 5000
)

// Headings are the 125 column headings of format version 13 in their
// order, spelt as in DATEV's sample files (their irregular "Inhalt"
// spacing included). DATEV reads the columns by position; the headings
// are checked all the same.
var Headings = headings()

func headings() []string {
	h := []string{"Umsatz (ohne Soll/Haben-Kz)", "Soll/Haben-Kennzeichen", "WKZ Umsatz", "Kurs", "Basis-Umsatz",
		"WKZ Basis-Umsatz", "Konto", "Gegenkonto (ohne BU-Schlüssel)", "BU-Schlüssel", "Belegdatum", "Belegfeld 1",
		"Belegfeld 2", "Skonto", "Buchungstext", "Postensperre", "Diverse Adressnummer", "Geschäftspartnerbank",
		"Sachverhalt", "Zinssperre", "Beleglink"}
	for i := 1; i <= 8; i++ {
		h = append(h, fmt.Sprintf("Beleginfo - Art %d", i), fmt.Sprintf("Beleginfo - Inhalt %d", i))
	}
	h = append(h, "KOST1 - Kostenstelle", "KOST2 - Kostenstelle", "Kost-Menge", "EU-Land u. UStID (Bestimmung)",
		"EU-Steuersatz (Bestimmung)", "Abw. Versteuerungsart", "Sachverhalt L+L", "Funktionsergänzung L+L",
		"BU 49 Hauptfunktionstyp", "BU 49 Hauptfunktionsnummer", "BU 49 Funktionsergänzung")
	for i := 1; i <= 20; i++ {
		h = append(h, fmt.Sprintf("Zusatzinformation - Art %d", i), fmt.Sprintf("Zusatzinformation- Inhalt %d", i))
	}
	return append(h, "Stück", "Gewicht", "Zahlweise", "Forderungsart", "Veranlagungsjahr", "Zugeordnete Fälligkeit",
		"Skontotyp", "Auftragsnummer", "Buchungstyp", "USt-Schlüssel (Anzahlungen)", "EU-Land (Anzahlungen)",
		"Sachverhalt L+L (Anzahlungen)", "EU-Steuersatz (Anzahlungen)", "Erlöskonto (Anzahlungen)", "Herkunft-Kz",
		"Buchungs GUID", "KOST-Datum", "SEPA-Mandatsreferenz", "Skontosperre", "Gesellschaftername",
		"Beteiligtennummer", "Identifikationsnummer", "Zeichnernummer", "Postensperre bis",
		"Bezeichnung SoBil-Sachverhalt", "Kennzeichen SoBil-Buchung", "Festschreibung", "Leistungsdatum",
		"Datum Zuord. Steuerperiode", "Fälligkeit", "Generalumkehr (GU)", "Steuersatz", "Land", "Abrechnungsreferenz",
		"BVV-Position", "EU-Land u. UStID (Ursprung)", "EU-Steuersatz (Ursprung)", "Abw. Skontokonto")
}

// The columns a booking fills, numbered from 1 as in the format description.
const (
	colAmount     = 1
	colDebit      = 2
	colAccount    = 7
	colContra     = 8
	colTaxKey     = 9
	colDate       = 10
	colNumber     = 11
	colText       = 14
	colLink       = 20
	colInfoKind1  = 48
	colInfoValue1 = 49
)

// Header is what line 1 of the Buchungsstapel says of the batch.
type Header struct {
	Created          time.Time
	ConsultantNumber int
	ClientNumber     int
	FiscalYearStart  time.Time
	AccountLength    int
	From, To         time.Time
	// Label names the batch in DATEV; cut to MaxLabel.
	Label string
	// Chart is "SKR03" or "SKR04".
	Chart string
}

// fields are the header's 31 fields, text quoted.
func (h Header) fields() []string {
	chart := strings.TrimPrefix(h.Chart, "SKR")
	return []string{quote("EXTF"), fmt.Sprint(HeaderVersion), fmt.Sprint(FormatCategory), quote(FormatName),
		fmt.Sprint(FormatVersion), created(h.Created),
		"", quote("RE"), quote(""), quote(""), fmt.Sprint(h.ConsultantNumber), fmt.Sprint(h.ClientNumber),
		h.FiscalYearStart.Format("20060102"), fmt.Sprint(h.AccountLength), h.From.Format("20060102"),
		h.To.Format("20060102"), quote(cut(h.Label, MaxLabel)), quote(""), "1", "0", "0", quote("EUR"), "",
		quote(""), "", "", quote(chart), "", "", quote(""), quote("")}
}

// created is the header's creation time, YYYYMMDDHHMMSSFFF in UTC.
func created(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/int(time.Millisecond))
}

// Row is one booking: an amount of one VAT rate of one document.
type Row struct {
	// Amount is the gross amount in cents, above 0.
	Amount int64
	// Credit books the amount on the account's credit side (H), else on
	// its debit side (S).
	Credit        bool
	Account       string
	ContraAccount string
	// TaxKey is the BU-Schlüssel, "" for none.
	TaxKey string
	Date   time.Time
	// Number is the document's number as printed; the row carries it in
	// DATEV's characters and says the printed form when that differs.
	Number string
	Text   string
	// GUID links the row to its document in document.xml.
	GUID string
}

// fields are the row's 125 columns.
func (r Row) fields() []string {
	f := make([]string, len(Headings))
	f[colAmount-1] = FormatAmount(r.Amount)
	f[colDebit-1] = quote("S")
	if r.Credit {
		f[colDebit-1] = quote("H")
	}
	f[colAccount-1] = r.Account
	f[colContra-1] = r.ContraAccount
	f[colTaxKey-1] = quote(r.TaxKey)
	f[colDate-1] = r.Date.Format("0201")
	number := Number(r.Number)
	f[colNumber-1] = quote(number)
	f[colText-1] = quote(cut(r.Text, MaxText))
	f[colLink-1] = quote(`BEDI "` + r.GUID + `"`)
	if number != r.Number && r.Number != "" {
		f[colInfoKind1-1] = quote("Belegnummer")
		f[colInfoValue1-1] = quote(cut(r.Number, 210))
	}
	return f
}

// FormatAmount writes cents with a decimal comma and no thousands
// separator: 123456 is "1234,56".
func FormatAmount(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d,%02d", sign, cents/100, cents%100)
}

// Number is a document number in the characters DATEV allows in Belegfeld
// 1 (letters, digits and $ & % * + - /), at most MaxNumber long: German
// letters are spelt out, other separators become one "-", and what is left
// is dropped.
func Number(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case numberRune(r):
			b.WriteRune(r)
			dash = r == '-'
		case umlauts[r] != "":
			b.WriteString(umlauts[r])
			dash = false
		case r == ' ' || r == '.' || r == '_' || r == ':' || r == '#' || r == '\\' || r == '|' || r == ',':
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.Trim(cut(strings.TrimRight(b.String(), "-"), MaxNumber), "-")
}

// numberRune reports whether DATEV allows r in Belegfeld 1.
func numberRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("$&%*+-/", r)
}

var umlauts = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "AE", 'Ö': "OE", 'Ü': "UE", 'ß': "ss"}

// quote writes a text field: in double quotes, a quote doubled. Line
// breaks, which would end the row, become spaces.
func quote(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", `"`, `""`).Replace(s)
	return `"` + s + `"`
}

// cut shortens s to at most n characters (not bytes).
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// encode writes s in Windows-1252; a character it cannot hold becomes "?".
func encode(dst []byte, s string) []byte {
	for _, r := range s {
		if b, ok := charmap.Windows1252.EncodeRune(r); ok {
			dst = append(dst, b)
		} else {
			dst = append(dst, '?')
		}
	}
	return dst
}

// line encodes fields as one CSV line ending in CRLF.
func line(dst []byte, fields []string) []byte {
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ';')
		}
		dst = encode(dst, f)
	}
	return append(dst, '\r', '\n')
}
