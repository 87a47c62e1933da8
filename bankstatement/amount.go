package bankstatement

import (
	"strconv"
	"strings"
)

// Amount is an exact signed decimal in units of 10^-5 (the most fraction
// digits ISO 20022 allows), so that sums are exact.
type Amount int64

// AmountScale is the Amount of one unit of currency.
const AmountScale = 100_000

// maxIntDigits keeps an Amount's integer part within int64 with room for
// sums.
const maxIntDigits = 13

// ParseAmount reads a decimal with a dot, optionally signed: "1234.5",
// "-49.99", "0.00". More than 5 fraction digits (other than zeros), more
// than 13 integer digits, thousands separators or a comma are refused.
func ParseAmount(s string) (Amount, error) {
	a, ok := parseDecimal(s, '.')
	if !ok {
		return 0, refuse("%q is not an amount (digits with a dot, at most 13 before it and 5 after)", truncate(s, 40))
	}
	return a, nil
}

// parseDecimal reads an optionally signed decimal whose fraction follows
// sep; a trailing sep without digits is allowed, as MT940 writes "100,".
func parseDecimal(s string, sep byte) (Amount, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	whole, frac, hasSep := strings.Cut(s, string(sep))
	if len(whole) > 1 {
		// MT940 pads amounts with leading zeros.
		whole = strings.TrimLeft(whole[:len(whole)-1], "0") + whole[len(whole)-1:]
	}
	if whole == "" || len(whole) > maxIntDigits || !allDigits(whole) || !allDigits(frac) || (hasSep && sep == '.' && frac == "") {
		return 0, false
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 5 {
		return 0, false
	}
	w, _ := strconv.ParseInt(whole, 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 5-len(frac)), 10, 64)
	}
	v := Amount(w*AmountScale + f)
	if neg {
		v = -v
	}
	return v, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// minorDigits are the ISO 4217 currencies whose minor unit is not 2 digits.
var minorDigits = map[string]int{
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
}

// Format writes a as a decimal string with a dot and the currency's minor
// digits (2 unless ISO 4217 says otherwise), more only where non-zero
// digits need them: "-49.99", "1200.00", "1500" for JPY, "0.12345".
func (a Amount) Format(currency string) string {
	digits, ok := minorDigits[strings.ToUpper(currency)]
	if !ok {
		digits = 2
	}
	u := uint64(a)
	sign := ""
	if a < 0 {
		sign, u = "-", uint64(-a)
	}
	whole, frac := u/AmountScale, u%AmountScale
	fs := strconv.FormatUint(frac+AmountScale, 10)[1:]
	fs = strings.TrimRight(fs, "0")
	if len(fs) < digits {
		fs += strings.Repeat("0", digits-len(fs))
	}
	s := sign + strconv.FormatUint(whole, 10)
	if fs != "" {
		s += "." + fs
	}
	return s
}

// String writes a with two or more fraction digits.
func (a Amount) String() string { return a.Format("") }

// add sums two amounts and reports false on overflow.
func (a Amount) add(b Amount) (Amount, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
