package bankstatement

import (
	"strings"
	"testing"
	"time"
)

// mt940Sample is two statements as German banks write them; the test
// stores it in ISO 8859-1.
const mt940Sample = `:20:STARTUMS
:25:37040044/0532013000
:28C:00003/001
:60F:C260301EUR2000,00
:61:2603120312DR49,99NTRFNONREF//BANKREF1
:86:106?00SEPA-LASTSCHRIFT?109310?20EREF+E2E-1?21MREF+M-77?22CRED+DE98
ZZZ09999999999?23SVWZ+Order 302-1234567 Amazo
n Marketplace?30BYLADEM1001?31LU89751000135104200E?32Amazon EU S.a r.l.
:61:260315C1000,00NTRFNONREF
:86:166?00GUTSCHRIFT?20SVWZ+Rechnung Nr. RE-2026-0
?21017 Zahlung für März?30DEUTDEFF?31DE75512108001245126199?32Müller & Söhne Großhandel G?33mbH
:62F:C260331EUR2950,01
-
:20:STARTUMS
:25:DE89370400440532013000
:28C:00004/001
:60M:C261231EUR100,00
:61:2612310102RC10,00NMSC//REV1
:86:Storno Gutschrift
:61:261231D5,
:62M:C270102EUR85,00
-
`

// toLatin1 encodes s, which has only ISO 8859-1 characters, as ISO 8859-1.
func toLatin1(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r))
	}
	return b
}

func TestParseMT940(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"latin-1", toLatin1(mt940Sample)},
		{"utf-8", []byte(mt940Sample)},
		{"crlf", toLatin1(strings.ReplaceAll(mt940Sample, "\n", "\r\n"))},
		{"swift blocks", []byte("{1:F01COBADEFFAXXX0000000000}{2:I940COBADEFFXXXXN}{4:\n" + strings.TrimSuffix(mt940Sample, "-\n") + "-}")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts, err := Parse(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(sts) != 2 {
				t.Fatalf("got %d statements, want 2", len(sts))
			}
			s := sts[0]
			if s.Format != FormatMT940 || s.ID != "STARTUMS/00003/001" || s.Currency != "EUR" ||
				s.Account != (Account{Number: "37040044/0532013000", Currency: "EUR"}) {
				t.Errorf("got statement %q %q %q %+v", s.Format, s.ID, s.Currency, s.Account)
			}
			if !s.From.Equal(day(2026, 3, 1)) || !s.To.Equal(day(2026, 3, 31)) || s.Opening.Amount.String() != "2000.00" || s.Closing.Amount.String() != "2950.01" {
				t.Errorf("got period %v to %v, balances %v %v", s.From, s.To, s.Opening, s.Closing)
			}
			if len(s.Entries) != 2 {
				t.Fatalf("got %d entries, want 2", len(s.Entries))
			}
			want := []Entry{
				{BookingDate: day(2026, 3, 12), ValueDate: day(2026, 3, 12), Amount: -4999000, Currency: "EUR",
					CounterpartyName: "Amazon EU S.a r.l.", CounterpartyIBAN: "LU89751000135104200E",
					RemittanceInfo: "EREF+E2E-1 MREF+M-77 CRED+DE98ZZZ09999999999 SVWZ+Order 302-1234567 Amazon Marketplace",
					EndToEndID:     "E2E-1", BankReference: "BANKREF1"},
				{BookingDate: day(2026, 3, 15), ValueDate: day(2026, 3, 15), Amount: 100000000, Currency: "EUR",
					CounterpartyName: "Müller & Söhne Großhandel GmbH", CounterpartyIBAN: "DE75512108001245126199",
					RemittanceInfo: "SVWZ+Rechnung Nr. RE-2026-0017 Zahlung für März"},
			}
			for i, w := range want {
				if s.Entries[i] != w {
					t.Errorf("entry %d:\ngot  %+v\nwant %+v", i+1, s.Entries[i], w)
				}
			}
			s = sts[1]
			if s.ID != "STARTUMS/00004/001" || s.Account.IBAN != "DE89370400440532013000" || s.Account.Number != "" {
				t.Errorf("statement 2: got id %q, account %+v", s.ID, s.Account)
			}
			if len(s.Entries) != 2 {
				t.Fatalf("statement 2: got %d entries, want 2", len(s.Entries))
			}
			e := s.Entries[0]
			if e.Amount.String() != "-10.00" || !e.BookingDate.Equal(day(2027, 1, 2)) || !e.ValueDate.Equal(day(2026, 12, 31)) ||
				e.BankReference != "REV1" || e.RemittanceInfo != "Storno Gutschrift" {
				t.Errorf("statement 2 entry 1: got %+v", e)
			}
			if e := s.Entries[1]; e.Amount.String() != "-5.00" || !e.BookingDate.Equal(day(2026, 12, 31)) {
				t.Errorf("statement 2 entry 2: got %+v", e)
			}
		})
	}
}

func TestMT940Account(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Account
	}{
		{"37040044/0532013000", Account{Number: "37040044/0532013000"}},
		{"DE89370400440532013000", Account{IBAN: "DE89370400440532013000"}},
		{"COBADEFFXXX/DE89370400440532013000", Account{IBAN: "DE89370400440532013000", BIC: "COBADEFFXXX"}},
		{"37040044/0532013000EUR", Account{Number: "37040044/0532013000", Currency: "EUR"}},
		{"DE89370400440532013000EUR", Account{IBAN: "DE89370400440532013000", Currency: "EUR"}},
	} {
		if got := mt940Account(tc.in); got != tc.want {
			t.Errorf("mt940Account(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestEntryDate(t *testing.T) {
	for _, tc := range []struct {
		value time.Time
		mmdd  string
		want  time.Time
	}{
		{day(2026, 3, 12), "0312", day(2026, 3, 12)},
		{day(2026, 12, 31), "0102", day(2027, 1, 2)},
		{day(2027, 1, 2), "1231", day(2026, 12, 31)},
		{day(2028, 3, 1), "0229", day(2028, 2, 29)},
	} {
		if got, ok := entryDate(tc.value, tc.mmdd); !ok || !got.Equal(tc.want) {
			t.Errorf("entryDate(%v, %q) = %v, %v; want %v", tc.value, tc.mmdd, got, ok, tc.want)
		}
	}
}

// TestMT940Quirks reads what banks write beside the standard.
func TestMT940Quirks(t *testing.T) {
	head := ":20:STARTUMSE\n:25:12345678/1020304050\n:28C:00000/001\n:60F:C160229EUR1200,00\n"
	for _, tc := range []struct {
		name, data string
		want       Entry
	}{
		{"30 February", head + ":61:1602300301DR6,00N024NONREF\n:86:805?00ENTGELTABSCHLUSS?20Pauschalen\n:62F:C160301EUR1194,00\n-",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 2, 29), Amount: -600000, Currency: "EUR", RemittanceInfo: "Pauschalen"}},
		{"blank entry date", head + ":61:160301    D6,00NMSCNONREF\n:62F:C160301EUR1194,00\n-",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 3, 1), Amount: -600000, Currency: "EUR"}},
		{"leading zeros", head + ":61:160301D000000000006,00NMSCNONREF\n:62F:C160301EUR00001194,00\n-",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 3, 1), Amount: -600000, Currency: "EUR"}},
		{"time wrapped like a tag", head + ":61:160301D6,00NMSCNONREF\n:86:805?20Kartenzahlung 2016-03-01T13\n:12:11 Bäckerei\n:62F:C160301EUR1194,00\n-",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 3, 1), Amount: -600000, Currency: "EUR", RemittanceInfo: "Kartenzahlung 2016-03-01T13:12:11 Bäckerei"}},
		{"separator with the next block", head + ":61:160301D6,00NMSCNONREF\n:62F:C160301EUR1194,00\n-}\x03\x01{1:F01COBADEFFAXXX0000000000}{2:I940COBADEFFXXXXN}{4:",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 3, 1), Amount: -600000, Currency: "EUR"}},
		{"long end-to-end id", head + ":61:160301D6,00NMSCNONREF\n:86:105?20EREF+123/123/12345-----L110?21Steuer 2016 Finanzamt Muenchen\n:62F:C160301EUR1194,00\n-",
			Entry{BookingDate: day(2016, 3, 1), ValueDate: day(2016, 3, 1), Amount: -600000, Currency: "EUR",
				RemittanceInfo: "EREF+123/123/12345-----L110Steuer 2016 Finanzamt Muenchen", EndToEndID: "123/123/12345-----L110Steuer 2016 F"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts, err := Parse([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if len(sts) != 1 || len(sts[0].Entries) != 1 {
				t.Fatalf("got %+v, want one statement of one entry", sts)
			}
			if got := sts[0].Entries[0]; got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestMT940StatementDetails keeps a :86: after the closing balance off the
// last entry.
func TestMT940StatementDetails(t *testing.T) {
	data := ":20:X\n:25:12345678/1020304050\n:28C:1\n:60F:C160229EUR10,00\n:61:160301D6,00NMSCNONREF\n:62F:C160301EUR4,00\n:86:Kontostand am Monatsende\n-"
	sts, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if e := sts[0].Entries[0]; e.RemittanceInfo != "" {
		t.Errorf("got remittance %q, want none", e.RemittanceInfo)
	}
}
