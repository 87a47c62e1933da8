package docfields

import "testing"

func TestDiscountOf(t *testing.T) {
	for _, tc := range []struct {
		text, issued, percent, until string
	}{
		{"Zahlbar bis 31.03.2026 ohne Abzug.\n2 % Skonto bei Zahlung bis 14.03.", "2026-03-02", "2", "2026-03-14"},
		{"2% Skonto innerhalb 14 Tagen, 30 Tage netto", "2026-03-02", "2", "2026-03-16"},
		{"Bei Zahlung innerhalb von 8 Tagen gewähren wir\n3 % Skonto.", "2026-03-02", "3", "2026-03-10"},
		{"Zahlungsziel: 14 Tage abzüglich 2,5% Skonto", "2026-03-02", "", ""},
		{"2% discount if paid within 10 days", "2026-03-02", "2", "2026-03-12"},
		{"Early payment discount 1.5% if paid by 14/03/2026", "2026-03-02", "1.5", "2026-03-14"},
		{"Terms: 2/10 net 30", "2026-03-02", "2", "2026-03-12"},
		{"Escompte de 2 % pour paiement sous 8 jours", "2026-03-02", "2", "2026-03-10"},
		{"Escompte 3% si paiement avant le 15/03/2026", "2026-03-02", "3", "2026-03-15"},
		{"Pas d'escompte pour paiement anticipé.", "2026-03-02", "", ""},
		{"Kein Skonto. 19 % MwSt.", "2026-03-02", "", ""},
		{"MwSt 19 % 38,00 EUR", "2026-03-02", "", ""},
		{"2 % Skonto bei Zahlung bis 14.03.", "", "", ""},
		{"2 % Skonto bei Zahlung bis 14.01.", "2026-12-20", "2", "2027-01-14"},
	} {
		got := discountOf(newDoc([]string{tc.text}).lines, tc.issued)
		if got.Percent != tc.percent || got.Until != tc.until {
			t.Errorf("%q: got %+v, want %s%% by %s", tc.text, got, tc.percent, tc.until)
		}
	}
}
