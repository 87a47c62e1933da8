package datev_test

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"acctapi/datev"
	"acctapi/datev/datevtest"
)

var (
	from = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	to   = time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
)

// mustArchive writes an archive of the rows, one file per GUID.
func mustArchive(t *testing.T, rows ...datev.Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	a := datev.NewArchive(&buf, time.Date(2026, 4, 2, 9, 30, 0, 123e6, time.UTC))
	if err := a.Begin(datev.Header{ConsultantNumber: 29098, ClientNumber: 55003, FiscalYearStart: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		AccountLength: 4, From: from, To: to, Label: "Belege März 2026 – acctapi", Chart: "SKR03"}); err != nil {
		t.Fatal(err)
	}
	var docs []datev.Document
	seen := map[string]bool{}
	for _, r := range rows {
		if err := a.Book(r); err != nil {
			t.Fatal(err)
		}
		if !seen[r.GUID] {
			seen[r.GUID] = true
			docs = append(docs, datev.Document{GUID: r.GUID, Name: r.GUID + ".pdf"})
		}
	}
	if err := a.Documents(docs); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		w, err := a.File(d.Name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "%PDF-1.4 "+d.GUID)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sampleRows() []datev.Row {
	g1, g2 := datev.GUID("file1"), datev.GUID("file2")
	return []datev.Row{
		{Amount: 11900, Account: "4900", ContraAccount: "70000", TaxKey: "9", Date: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC),
			Number: "RE 2026.001", Text: `Bäckerei „Müller“ – Brötchen 5 € "frisch"`, GUID: g1},
		{Amount: 10700, Account: "4900", ContraAccount: "70000", TaxKey: "8", Date: time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC),
			Number: "RE 2026.001", Text: "Bäckerei Müller", GUID: g1},
		{Amount: 595000, Credit: true, Account: "8400", ContraAccount: "10000", Date: time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC),
			Number: "A-17", Text: strings.Repeat("Honorar ", 12), GUID: g2},
	}
}

func TestArchivePassesTheValidator(t *testing.T) {
	data := mustArchive(t, sampleRows()...)
	e, err := datevtest.Validate(data)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if got, want := len(e.Rows), 3; got != want {
		t.Fatalf("rows: got %d, want %d", got, want)
	}
	r := e.Rows[0]
	if r.Number != "RE-2026-001" || r.Fields[48] != "RE 2026.001" || r.Fields[47] != "Belegnummer" {
		t.Errorf("Belegfeld 1 %q, Zusatzinformation %q %q: want the number in DATEV's characters and the printed one beside it",
			r.Number, r.Fields[47], r.Fields[48])
	}
	if r.Text != `Bäckerei „Müller“ – Brötchen 5 € "frisch"` {
		t.Errorf("Buchungstext: got %q", r.Text)
	}
	if r.Amount != 11900 || r.Date != "0503" || r.TaxKey != "9" || r.Credit {
		t.Errorf("row 1: got %+v", r)
	}
	if got := len([]rune(e.Rows[2].Text)); got != 60 {
		t.Errorf("a long Buchungstext: %d characters, want it cut to 60", got)
	}
	if !e.Rows[2].Credit || e.Rows[2].TaxKey != "" {
		t.Errorf("issued row: got %+v", e.Rows[2])
	}
	if e.Header[16] != "Belege März 2026 – acctapi" || e.Header[5] != "20260402093000123" || e.Header[26] != "03" {
		t.Errorf("header: label %q, created %q, chart %q", e.Header[16], e.Header[5], e.Header[26])
	}
	csv := csvOf(t, data)
	if !bytes.Contains(csv, []byte{0x80}) || !bytes.Contains(csv, []byte("B\xe4ckerei")) || !bytes.Contains(csv, []byte{0x96}) {
		t.Error("the CSV does not hold €, ä and – in Windows-1252")
	}
	if !bytes.Contains(csv, []byte(`"BEDI ""`+datev.GUID("file1")+`"""`)) {
		t.Error("the Beleglink is not BEDI with the GUID in doubled quotes")
	}
}

// csvOf is the Buchungsstapel of an archive.
func csvOf(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".csv") {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			return b
		}
	}
	t.Fatal("no CSV")
	return nil
}

// withCSV is the archive with its Buchungsstapel changed by edit.
func withCSV(t *testing.T, data []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		if strings.HasSuffix(f.Name, ".csv") {
			b = edit(b)
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

func TestValidatorFindsEachFault(t *testing.T) {
	good := mustArchive(t, sampleRows()...)
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte {
			if !bytes.Contains(b, []byte(old)) {
				return nil
			}
			return bytes.Replace(b, []byte(old), []byte(new), 1)
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"a dot for the comma", replace("119,00;", "119.00;"), "column 1"},
		{"a negative amount", replace("119,00;", "-119,00;"), "column 1"},
		{"a 5-digit BU key", replace(`;"9";`, `;"40009";`), "column 9"},
		{"a BU key on an automatic account", replace(`8400;10000;"";`, `8400;10000;"3";`), "automatic"},
		{"Belegfeld 1 over 36", replace(`"RE-2026-001"`, `"`+strings.Repeat("A", 37)+`"`), "column 11"},
		{"Belegfeld 1 with a space", replace(`"RE-2026-001"`, `"RE 2026-001"`), "column 11"},
		{"Buchungstext over 60", replace("\"B\xe4ckerei M\xfcller\"", `"`+strings.Repeat("x", 61)+`"`), "column 14"},
		{"a date outside the period", replace(";0503;", ";0104;"), "column 10"},
		{"UTF-8 bytes", replace("B\xe4ckerei", "Bäckerei"), "UTF-8"},
		{"LF line ends", func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")) }, "LF"},
		{"a heading changed", replace("Belegfeld 1;", "Belegfeld1;"), "heading 11"},
		{"header version", replace(`"EXTF";700;`, `"EXTF";510;`), "header field 2"},
		{"a column too few", replace(`;"9";`, `;`), "columns"},
		{"a Beleglink without GUID", replace(`"BEDI ""`, `"BEDI ""x`), "column 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := tc.edit(csvOf(t, good))
			if edited == nil {
				t.Fatal("the CSV has nothing to change")
			}
			_, err := datevtest.Validate(withCSV(t, good, func([]byte) []byte { return edited }))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[string]string{
		"RE-2026/17":                    "RE-2026/17",
		"Nr. 4711 ä":                    "Nr-4711-ae",
		"  #12__34  ":                   "12-34",
		strings.Repeat("1234567890", 5): "123456789012345678901234567890123456",
		"Größe€":                        "Groesse",
	} {
		if got := datev.Number(in); got != want {
			t.Errorf("Number(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name            string
		net, tax, total int64
		stated, ok      bool
		want            []datev.Part
	}{
		{"19 %", 10000, 1900, 11900, true, true, []datev.Part{{19, 11900}}},
		{"7 % rounded", 999, 70, 1069, true, true, []datev.Part{{7, 1069}}},
		{"no tax stated", 0, 0, 5000, false, true, []datev.Part{{0, 5000}}},
		{"two rates", 15000, 2250, 17250, true, true, []datev.Part{{19, 11900}, {7, 5350}}},
		{"two rates, odd cents", 12345, 1567, 13912, true, true, nil},
		{"a foreign rate", 10000, 2000, 12000, true, false, nil},
		{"sums that do not add up", 10000, 1900, 12000, true, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts, ok := datev.Split(tc.net, tc.tax, tc.total, tc.stated)
			if ok != tc.ok {
				t.Fatalf("ok: got %v, want %v (%v)", ok, tc.ok, parts)
			}
			var sum int64
			for _, p := range parts {
				sum += p.Gross
			}
			if ok && sum != tc.total {
				t.Errorf("parts add up to %d, want %d", sum, tc.total)
			}
			if tc.want != nil && (len(parts) != len(tc.want) || parts[0] != tc.want[0]) {
				t.Errorf("got %v, want %v", parts, tc.want)
			}
		})
	}
}

func TestTaxKeys(t *testing.T) {
	for _, chart := range []string{"SKR03", "SKR04"} {
		c := datev.Charts[chart]
		for _, tc := range []struct {
			rate    int
			issued  bool
			account string
			want    string
		}{
			{19, false, c.Expense, "9"}, {7, false, c.Expense, "8"}, {19, true, c.Revenue, "3"}, {7, true, c.Revenue, "2"},
			{0, false, c.Expense, ""}, {19, true, c.AutomaticAccounts[3], ""}, {7, true, datev.Account(c.AutomaticAccounts[2], 6), ""},
		} {
			if got := c.TaxKey(tc.rate, tc.issued, tc.account); got != tc.want {
				t.Errorf("%s: TaxKey(%d, issued %v, %s) = %q, want %q", chart, tc.rate, tc.issued, tc.account, got, tc.want)
			}
		}
	}
}

func TestRateKey(t *testing.T) {
	for key, want := range map[string]bool{"2": true, "3": true, "8": true, "9": true, "94": false, "": false, "1": false} {
		if got := datev.RateKey(key); got != want {
			t.Errorf("RateKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestGUIDIsStable(t *testing.T) {
	first, again, other := datev.GUID("a"), datev.GUID("a"), datev.GUID("b")
	if first != again || first == other || len(first) != 36 {
		t.Errorf("GUID: %s, again %s, of another %s", first, again, other)
	}
}
