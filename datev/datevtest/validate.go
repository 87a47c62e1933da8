// Package datevtest checks an export's ZIP against DATEV's public format
// description ("DATEV-Format", EXTF Buchungsstapel, header version 700,
// format category 21, format version 13; "XML-Schnittstelle online",
// document.xml version 6.0), written from the description and not from our
// writer, so that a test of the writer does not check it against itself.
package datevtest

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// columns are the 125 headings of format version 13, as DATEV's sample
// files spell them.
const columns = "Umsatz (ohne Soll/Haben-Kz);Soll/Haben-Kennzeichen;WKZ Umsatz;Kurs;Basis-Umsatz;WKZ Basis-Umsatz;" +
	"Konto;Gegenkonto (ohne BU-Schlüssel);BU-Schlüssel;Belegdatum;Belegfeld 1;Belegfeld 2;Skonto;Buchungstext;" +
	"Postensperre;Diverse Adressnummer;Geschäftspartnerbank;Sachverhalt;Zinssperre;Beleglink;" +
	"Beleginfo - Art 1;Beleginfo - Inhalt 1;Beleginfo - Art 2;Beleginfo - Inhalt 2;Beleginfo - Art 3;Beleginfo - Inhalt 3;" +
	"Beleginfo - Art 4;Beleginfo - Inhalt 4;Beleginfo - Art 5;Beleginfo - Inhalt 5;Beleginfo - Art 6;Beleginfo - Inhalt 6;" +
	"Beleginfo - Art 7;Beleginfo - Inhalt 7;Beleginfo - Art 8;Beleginfo - Inhalt 8;" +
	"KOST1 - Kostenstelle;KOST2 - Kostenstelle;Kost-Menge;EU-Land u. UStID (Bestimmung);EU-Steuersatz (Bestimmung);" +
	"Abw. Versteuerungsart;Sachverhalt L+L;Funktionsergänzung L+L;BU 49 Hauptfunktionstyp;BU 49 Hauptfunktionsnummer;" +
	"BU 49 Funktionsergänzung;" +
	"Zusatzinformation - Art 1;Zusatzinformation- Inhalt 1;Zusatzinformation - Art 2;Zusatzinformation- Inhalt 2;" +
	"Zusatzinformation - Art 3;Zusatzinformation- Inhalt 3;Zusatzinformation - Art 4;Zusatzinformation- Inhalt 4;" +
	"Zusatzinformation - Art 5;Zusatzinformation- Inhalt 5;Zusatzinformation - Art 6;Zusatzinformation- Inhalt 6;" +
	"Zusatzinformation - Art 7;Zusatzinformation- Inhalt 7;Zusatzinformation - Art 8;Zusatzinformation- Inhalt 8;" +
	"Zusatzinformation - Art 9;Zusatzinformation- Inhalt 9;Zusatzinformation - Art 10;Zusatzinformation- Inhalt 10;" +
	"Zusatzinformation - Art 11;Zusatzinformation- Inhalt 11;Zusatzinformation - Art 12;Zusatzinformation- Inhalt 12;" +
	"Zusatzinformation - Art 13;Zusatzinformation- Inhalt 13;Zusatzinformation - Art 14;Zusatzinformation- Inhalt 14;" +
	"Zusatzinformation - Art 15;Zusatzinformation- Inhalt 15;Zusatzinformation - Art 16;Zusatzinformation- Inhalt 16;" +
	"Zusatzinformation - Art 17;Zusatzinformation- Inhalt 17;Zusatzinformation - Art 18;Zusatzinformation- Inhalt 18;" +
	"Zusatzinformation - Art 19;Zusatzinformation- Inhalt 19;Zusatzinformation - Art 20;Zusatzinformation- Inhalt 20;" +
	"Stück;Gewicht;Zahlweise;Forderungsart;Veranlagungsjahr;Zugeordnete Fälligkeit;Skontotyp;Auftragsnummer;Buchungstyp;" +
	"USt-Schlüssel (Anzahlungen);EU-Land (Anzahlungen);Sachverhalt L+L (Anzahlungen);EU-Steuersatz (Anzahlungen);" +
	"Erlöskonto (Anzahlungen);Herkunft-Kz;Buchungs GUID;KOST-Datum;SEPA-Mandatsreferenz;Skontosperre;Gesellschaftername;" +
	"Beteiligtennummer;Identifikationsnummer;Zeichnernummer;Postensperre bis;Bezeichnung SoBil-Sachverhalt;" +
	"Kennzeichen SoBil-Buchung;Festschreibung;Leistungsdatum;Datum Zuord. Steuerperiode;Fälligkeit;Generalumkehr (GU);" +
	"Steuersatz;Land;Abrechnungsreferenz;BVV-Position;EU-Land u. UStID (Ursprung);EU-Steuersatz (Ursprung);Abw. Skontokonto"

// automatic are the automatic accounts (at length 4) of the default
// revenue and purchase accounts, by the header's chart field: no tax key
// may stand on them.
var automatic = map[string][]string{"03": {"3300", "3400", "8300", "8400"}, "04": {"4300", "4400", "5300", "5400"}}

// taxKeys are the keys of 19 % and 7 % output tax (3, 2) and input tax
// (9, 8), the only ones the export writes.
var taxKeys = map[string]bool{"": true, "2": true, "3": true, "8": true, "9": true}

var (
	amountRE = regexp.MustCompile(`^[0-9]{1,10},[0-9]{2}$`)
	numberRE = regexp.MustCompile(`^[A-Za-z0-9$&%*+\-/]{0,36}$`)
	digitsRE = regexp.MustCompile(`^[0-9]+$`)
	guidRE   = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
	linkRE   = regexp.MustCompile(`^BEDI "([^"]*)"$`)
)

// Row is one booking as the validator read it.
type Row struct {
	Amount        int64 // cents
	Credit        bool
	Account       string
	ContraAccount string
	TaxKey        string
	Date          string // DDMM
	Number        string
	Text          string
	GUID          string
	// Fields are all 125, unquoted.
	Fields []string
}

// Export is what a valid ZIP holds.
type Export struct {
	Header   []string // the 31 fields, unquoted
	From, To time.Time
	Rows     []Row
	// Documents maps each GUID of document.xml to its file's name.
	Documents map[string]string
	// Files are the ZIP's entries other than the CSV and document.xml.
	Files map[string][]byte
}

// Validate checks a whole export ZIP and returns what it holds, or every
// fault it found, joined.
func Validate(data []byte) (*Export, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a ZIP: %w", err)
	}
	e := &Export{Documents: map[string]string{}, Files: map[string][]byte{}}
	var csvName string
	var csv, docXML []byte
	for _, f := range zr.File {
		b, err := read(f)
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(f.Name, "EXTF_Buchungsstapel_") && strings.HasSuffix(f.Name, ".csv"):
			if csv != nil {
				return nil, errors.New("two Buchungsstapel in the ZIP")
			}
			csvName, csv = f.Name, b
		case f.Name == "document.xml":
			docXML = b
		default:
			if strings.Contains(f.Name, "/") {
				return nil, fmt.Errorf("file %q is not at the ZIP's root", f.Name)
			}
			e.Files[f.Name] = b
		}
	}
	if csv == nil || docXML == nil {
		return nil, errors.New("the ZIP lacks the Buchungsstapel or document.xml")
	}
	var errs []error
	errs = append(errs, CSV(csv, e)...)
	if len(e.Header) == 31 && csvName != fmt.Sprintf("EXTF_Buchungsstapel_%s_%s.csv", e.Header[14], e.Header[15]) {
		errs = append(errs, fmt.Errorf("the CSV is named %q, not by its period", csvName))
	}
	errs = append(errs, documents(docXML, e)...)
	for i, r := range e.Rows {
		if _, ok := e.Documents[r.GUID]; !ok {
			errs = append(errs, fmt.Errorf("row %d: Beleglink %s names no document of document.xml", i+3, r.GUID))
		}
	}
	named := map[string]bool{}
	for guid, name := range e.Documents {
		named[name] = true
		if _, ok := e.Files[name]; !ok {
			errs = append(errs, fmt.Errorf("document %s: its file %q is not in the ZIP", guid, name))
		}
	}
	for name := range e.Files {
		if !named[name] {
			errs = append(errs, fmt.Errorf("file %q in the ZIP is named by no document", name))
		}
	}
	return e, errors.Join(errs...)
}

func read(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return b, nil
}

// CSV checks a Buchungsstapel's bytes: the encoding, the line ends, the
// header field by field, the headings and every row's columns. It fills e
// with what it read.
func CSV(b []byte, e *Export) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if err := windows1252(b); err != nil {
		bad("%v", err)
	}
	if !bytes.HasSuffix(b, []byte("\r\n")) {
		bad("the file does not end with CRLF")
	}
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			bad("byte %d: a line ends with LF alone, not CRLF", i)
			break
		}
		if c == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			bad("byte %d: a CR without LF", i)
			break
		}
	}
	lines := strings.Split(strings.TrimSuffix(decode(b), "\r\n"), "\r\n")
	if len(lines) < 2 {
		return append(errs, errors.New("the file has no header and headings"))
	}
	header, err := split(lines[0])
	if err != nil {
		return append(errs, fmt.Errorf("header: %w", err))
	}
	e.Header = header.values
	errs = append(errs, checkHeader(header, e)...)
	if lines[1] != columns {
		got := strings.Split(lines[1], ";")
		want := strings.Split(columns, ";")
		bad("headings: %d, want the %d of format version 13", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				bad("heading %d is %q, want %q", i+1, got[i], want[i])
				break
			}
		}
	}
	for n, l := range lines[2:] {
		row, rowErrs := checkRow(l, e)
		for _, err := range rowErrs {
			bad("row %d: %v", n+3, err)
		}
		if row != nil {
			e.Rows = append(e.Rows, *row)
		}
	}
	return errs
}

// windows1252 refuses the bytes Windows-1252 leaves undefined and any
// sequence that reads as UTF-8 beyond ASCII: a file written as UTF-8 by
// mistake.
func windows1252(b []byte) error {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case 0x81, 0x8D, 0x8F, 0x90, 0x9D:
			return fmt.Errorf("byte %d: 0x%02X is not a character of Windows-1252", i, b[i])
		}
		if b[i] >= 0xC2 && b[i] <= 0xF4 {
			if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError && size > 1 {
				return fmt.Errorf("byte %d: a UTF-8 sequence (%q), not Windows-1252", i, r)
			}
		}
	}
	return nil
}

// cp1252 are the characters of 0x80-0x9F in Windows-1252; the rest of the
// upper half is Latin-1's.
var cp1252 = [32]rune{'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ'}

func decode(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 0x80 && c < 0xA0 {
			s.WriteRune(cp1252[c-0x80])
		} else {
			s.WriteRune(rune(c))
		}
	}
	return s.String()
}

// fields are one line's fields, unquoted, and whether each was quoted.
type fields struct {
	values []string
	quoted []bool
}

// split reads one line: fields separated by ";", a text field in double
// quotes with a quote doubled.
func split(l string) (fields, error) {
	var f fields
	for {
		if strings.HasPrefix(l, `"`) {
			var v strings.Builder
			i := 1
			for {
				j := strings.IndexByte(l[i:], '"')
				if j < 0 {
					return f, errors.New("a quoted field does not end")
				}
				v.WriteString(l[i : i+j])
				i += j + 1
				if i < len(l) && l[i] == '"' {
					v.WriteByte('"')
					i++
					continue
				}
				break
			}
			f.values, f.quoted = append(f.values, v.String()), append(f.quoted, true)
			l = l[i:]
		} else {
			j := strings.IndexByte(l, ';')
			if j < 0 {
				j = len(l)
			}
			if strings.Contains(l[:j], `"`) {
				return f, fmt.Errorf("field %d: a quote in an unquoted field", len(f.values)+1)
			}
			f.values, f.quoted = append(f.values, l[:j]), append(f.quoted, false)
			l = l[j:]
		}
		if l == "" {
			return f, nil
		}
		if l[0] != ';' {
			return f, fmt.Errorf("field %d: text after its closing quote", len(f.values))
		}
		l = l[1:]
	}
}

// headerText are the header's fields (1-based) that are text, and so
// quoted when they have a value.
var headerText = map[int]bool{1: true, 4: true, 8: true, 9: true, 10: true, 17: true, 18: true, 22: true, 24: true,
	27: true, 30: true, 31: true}

func checkHeader(h fields, e *Export) []error {
	var errs []error
	bad := func(n int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("header field %d: %s", n, fmt.Sprintf(format, args...)))
	}
	if len(h.values) != 31 {
		return []error{fmt.Errorf("header: %d fields, want 31", len(h.values))}
	}
	v := func(n int) string { return h.values[n-1] }
	for n := 1; n <= 31; n++ {
		if h.quoted[n-1] != headerText[n] && (v(n) != "" || h.quoted[n-1]) {
			bad(n, "quoted %v, want %v", h.quoted[n-1], headerText[n])
		}
	}
	for n, want := range map[int]string{1: "EXTF", 2: "700", 3: "21", 4: "Buchungsstapel", 5: "13", 7: "", 10: "", 22: "EUR"} {
		if v(n) != want {
			bad(n, "%q, want %q", v(n), want)
		}
	}
	if _, err := time.Parse("20060102150405", v(6)[:min(14, len(v(6)))]); err != nil || len(v(6)) != 17 || !digitsRE.MatchString(v(6)) {
		bad(6, "creation time %q is not YYYYMMDDHHMMSSFFF", v(6))
	}
	if len(v(8)) > 2 {
		bad(8, "origin %q over 2 characters", v(8))
	}
	if n, err := strconv.Atoi(v(11)); err != nil || n < 1001 || n > 9999999 {
		bad(11, "consultant number %q not in 1001-9999999", v(11))
	}
	if n, err := strconv.Atoi(v(12)); err != nil || n < 1 || n > 99999 {
		bad(12, "client number %q not in 1-99999", v(12))
	}
	start, err1 := time.Parse("20060102", v(13))
	from, err2 := time.Parse("20060102", v(15))
	to, err3 := time.Parse("20060102", v(16))
	if err := errors.Join(err1, err2, err3); err != nil {
		bad(13, "a date is not YYYYMMDD: %v", err)
	} else {
		e.From, e.To = from, to
		if to.Before(from) {
			bad(16, "the period ends before it starts")
		}
		if from.Before(start) || !to.Before(start.AddDate(1, 0, 0)) {
			bad(15, "the period %s-%s leaves the fiscal year starting %s", v(15), v(16), v(13))
		}
	}
	if n, err := strconv.Atoi(v(14)); err != nil || n < 4 || n > 8 {
		bad(14, "account length %q not in 4-8", v(14))
	}
	if utf8.RuneCountInString(v(17)) > 30 {
		bad(17, "label over 30 characters")
	}
	if v(19) != "1" {
		bad(19, "booking type %q, want 1 (financial accounting)", v(19))
	}
	if v(21) != "0" && v(21) != "1" {
		bad(21, "Festschreibung %q, want 0 or 1", v(21))
	}
	if v(27) != "03" && v(27) != "04" && v(27) != "" {
		bad(27, "chart %q, want 03 or 04", v(27))
	}
	return errs
}

// rowText are the columns (1-based) the export fills that are text.
var rowText = map[int]bool{2: true, 9: true, 11: true, 14: true, 20: true, 48: true, 49: true}

func checkRow(l string, e *Export) (*Row, []error) {
	f, err := split(l)
	if err != nil {
		return nil, []error{err}
	}
	if len(f.values) != 125 {
		return nil, []error{fmt.Errorf("%d columns, want 125", len(f.values))}
	}
	var errs []error
	bad := func(col int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("column %d: %s", col, fmt.Sprintf(format, args...)))
	}
	v := func(n int) string { return f.values[n-1] }
	for n := range rowText {
		if v(n) != "" && !f.quoted[n-1] {
			bad(n, "text %q is not quoted", v(n))
		}
	}
	r := &Row{Fields: f.values, Account: v(7), ContraAccount: v(8), TaxKey: v(9), Date: v(10), Number: v(11), Text: v(14)}
	if !amountRE.MatchString(v(1)) {
		bad(1, "Umsatz %q is not a positive amount with a decimal comma", v(1))
	} else {
		r.Amount, _ = strconv.ParseInt(strings.Replace(v(1), ",", "", 1), 10, 64)
		if r.Amount <= 0 {
			bad(1, "Umsatz %q is not above 0", v(1))
		}
	}
	switch v(2) {
	case "S":
	case "H":
		r.Credit = true
	default:
		bad(2, "Soll/Haben %q, want S or H", v(2))
	}
	length, _ := strconv.Atoi(e.Header[13])
	for _, n := range []int{7, 8} {
		if !digitsRE.MatchString(v(n)) || len(v(n)) != length && len(v(n)) != length+1 {
			bad(n, "account %q is not %d or %d digits", v(n), length, length+1)
		}
	}
	if len(v(9)) > 4 || !digitsRE.MatchString(v(9)) && v(9) != "" {
		bad(9, "BU-Schlüssel %q is not up to 4 digits", v(9))
	} else if !taxKeys[v(9)] {
		bad(9, "BU-Schlüssel %q is not one of 19 %% or 7 %% input or output tax", v(9))
	}
	if v(9) != "" {
		for _, a := range automatic[e.Header[26]] {
			if v(7) == a+strings.Repeat("0", max(0, length-4)) {
				bad(9, "BU-Schlüssel %q on the automatic account %s", v(9), v(7))
			}
		}
	}
	if !e.From.IsZero() {
		if err := inPeriod(v(10), e.From, e.To); err != nil {
			bad(10, "%v", err)
		}
	}
	if !numberRE.MatchString(v(11)) {
		bad(11, "Belegfeld 1 %q is over 36 characters or has one DATEV does not allow", v(11))
	}
	if utf8.RuneCountInString(v(14)) > 60 {
		bad(14, "Buchungstext over 60 characters")
	}
	if m := linkRE.FindStringSubmatch(v(20)); m == nil || !guidRE.MatchString(m[1]) {
		bad(20, "Beleglink %q is not BEDI \"<GUID>\"", v(20))
	} else {
		r.GUID = m[1]
	}
	if utf8.RuneCountInString(v(48)) > 20 || utf8.RuneCountInString(v(49)) > 210 {
		bad(48, "Zusatzinformation over its length")
	}
	return r, errs
}

// inPeriod checks a Belegdatum DDMM: a real day of the period, whose year
// the header gives.
func inPeriod(ddmm string, from, to time.Time) error {
	if len(ddmm) != 4 || !digitsRE.MatchString(ddmm) {
		return fmt.Errorf("the Belegdatum %q is not DDMM", ddmm)
	}
	for _, year := range []int{from.Year(), to.Year()} {
		d, err := time.Parse("020120060", ddmm+strconv.Itoa(year)+"0")
		if err == nil && !d.Before(from) && !d.After(to) {
			return nil
		}
	}
	return fmt.Errorf("the Belegdatum %q is not a day of the period %s to %s", ddmm, from.Format(time.DateOnly), to.Format(time.DateOnly))
}

type archiveXML struct {
	XMLName   xml.Name `xml:"http://xml.datev.de/bedi/tps/document/v06.0 archive"`
	Version   string   `xml:"version,attr"`
	Date      string   `xml:"header>date"`
	Documents []struct {
		GUID       string `xml:"guid,attr"`
		Extensions []struct {
			Type string `xml:"http://www.w3.org/2001/XMLSchema-instance type,attr"`
			Name string `xml:"name,attr"`
		} `xml:"extension"`
	} `xml:"content>document"`
}

// documents checks document.xml: version 6.0 in its namespace, a header
// date, at most 5,000 documents, each with a GUID of its own and one File
// extension naming its file.
func documents(b []byte, e *Export) []error {
	var x archiveXML
	if err := xml.Unmarshal(b, &x); err != nil {
		return []error{fmt.Errorf("document.xml: %w", err)}
	}
	var errs []error
	if x.Version != "6.0" {
		errs = append(errs, fmt.Errorf("document.xml: version %q, want 6.0", x.Version))
	}
	if _, err := time.Parse("2006-01-02T15:04:05", x.Date); err != nil {
		errs = append(errs, fmt.Errorf("document.xml: header date %q", x.Date))
	}
	if len(x.Documents) == 0 || len(x.Documents) > 5000 {
		errs = append(errs, fmt.Errorf("document.xml: %d documents, want 1 to 5000", len(x.Documents)))
	}
	for _, d := range x.Documents {
		if !guidRE.MatchString(d.GUID) {
			errs = append(errs, fmt.Errorf("document.xml: GUID %q", d.GUID))
		}
		if _, dup := e.Documents[d.GUID]; dup {
			errs = append(errs, fmt.Errorf("document.xml: GUID %s twice", d.GUID))
		}
		files := 0
		for _, x := range d.Extensions {
			if x.Type == "File" {
				files++
				e.Documents[d.GUID] = x.Name
			}
		}
		if files != 1 {
			errs = append(errs, fmt.Errorf("document.xml: document %s has %d File extensions, want 1", d.GUID, files))
		}
	}
	return errs
}
