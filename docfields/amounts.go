package docfields

import (
	"strconv"
	"strings"
)

// amountTok is a money amount as printed: digits with a decimal separator
// and two decimals, thousands grouped by '.', ',', ”' or a space.
type amountTok struct {
	cents      int64
	start, end int
	currency   string // ISO code of a symbol or code printed beside it
	percent    bool   // followed by '%': a rate, not money
}

func (a amountTok) String() string { return formatCents(a.cents) }

func formatCents(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := strconv.FormatInt(c/100, 10) + "." + pad2(c%100)
	if neg {
		s = "-" + s
	}
	return s
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// amountsIn scans a line (digit-repaired) for amounts.
func amountsIn(s string) []amountTok {
	var out []amountTok
	i := 0
	for i < len(s) && len(out) < 64 {
		if !isNum(s[i]) || (i > 0 && (isNum(s[i-1]) || s[i-1] == '.' || s[i-1] == ',' || s[i-1] == '/')) {
			i++
			continue
		}
		// Maximal run of digits and separators.
		j := i
		spaced, spacedEnd := -1, -1
		for j < len(s) {
			c := s[j]
			if isNum(c) || c == '.' || c == ',' || c == '\'' {
				j++
				continue
			}
			// OCR puts a space after a decimal point ("29. 70"), several
			// after a currency's ("RM 170.   00"), or one before it ("28
			// .05"): the cents still belong to it when exactly two digits
			// end it.
			if c == ' ' && spaced < 0 {
				gap, most := j, 1
				if afterCurrency(s, i) {
					most = 3
				}
				for gap < len(s) && gap-j < most && s[gap] == ' ' {
					gap++
				}
				afterPoint := j >= i+2 && (s[j-1] == '.' || s[j-1] == ',') && isNum(s[j-2]) && centsEnd(s, gap)
				beforePoint := isNum(s[j-1]) && j+1 < len(s) && (s[j+1] == '.' || s[j+1] == ',') && centsEnd(s, j+2)
				if afterPoint || beforePoint {
					spaced, spacedEnd = j, j+1
					if afterPoint {
						spacedEnd = gap
					}
					j = spacedEnd
					continue
				}
			}
			// A space is a thousands separator only before exactly three
			// digits that end the group.
			if c == ' ' && j+3 < len(s) && isNum(s[j+1]) && isNum(s[j+2]) && isNum(s[j+3]) &&
				(j+4 >= len(s) || !isNum(s[j+4])) && groupBefore(s, i, j) {
				j++
				continue
			}
			break
		}
		run := strings.TrimRight(s[i:j], ".,' ")
		end := i + len(run)
		num := run
		if spaced >= 0 {
			num = s[i:spaced] + s[spacedEnd:end]
		}
		if c, ok := parseAmount(num); ok {
			a := amountTok{cents: c, start: i, end: end}
			// Sign: "-12,00", "- 12,00", "12,00-".
			k := i - 1
			for k >= 0 && i-k < 5 && (s[k] == ' ' || s[k] == '$' || s[k] == 0xa3 || s[k] == 0xc2 || s[k] == 0x82 || s[k] == 0xac || s[k] == 0xe2) {
				// Spaces and a currency sign ("-$12.00", "- € 12,00").
				k--
			}
			if k >= 0 && s[k] == '-' && (k == 0 || !isNum(s[k-1])) {
				a.cents, a.start = -a.cents, k
			} else if end < len(s) && s[end] == '-' && (end+1 >= len(s) || !isNum(s[end+1])) {
				a.cents = -a.cents
			}
			rest := strings.TrimLeft(s[end:], " ")
			a.percent = strings.HasPrefix(rest, "%")
			a.currency = currencyNear(s, a.start, end)
			out = append(out, a)
		}
		i = j
		if i == end && i < len(s) {
			i++
		}
	}
	return out
}

// afterCurrency says whether a currency's sign or code ("RM", "€", "EUR")
// stands right before the number at i.
func afterCurrency(s string, i int) bool {
	before := strings.TrimRight(s[:i], " ")
	if strings.HasSuffix(before, "RM") {
		return true
	}
	for _, c := range currencySigns {
		if strings.HasSuffix(before, c.sign) {
			return true
		}
	}
	return false
}

// centsEnd says whether s holds exactly two digits from k on, and then no
// more of a number.
func centsEnd(s string, k int) bool {
	return k+1 < len(s) && isNum(s[k]) && isNum(s[k+1]) && (k+2 >= len(s) || !isNum(s[k+2]) && s[k+2] != '.' && s[k+2] != ',')
}

// groupBefore reports whether s[i:j] is a group of one to three digits or
// already grouped, so that "2 100,00" joins but "19 100,00" does not.
func groupBefore(s string, i, j int) bool {
	seg := s[i:j]
	k := strings.LastIndexByte(seg, ' ')
	last := seg[k+1:]
	return len(last) >= 1 && len(last) <= 3 && strings.Trim(last, "0123456789") == ""
}

// parseAmount reads "1.234,56", "1,234.56", "1 234,56", "1234.56",
// "1'234.56" into cents. The decimal separator is the last '.' or ','
// and must be followed by exactly two digits.
func parseAmount(s string) (int64, bool) {
	if len(s) < 4 || len(s) > 20 {
		return 0, false
	}
	d := len(s) - 3
	if s[d] != '.' && s[d] != ',' {
		return 0, false
	}
	intPart, frac := s[:d], s[d+1:]
	if !isNum(frac[0]) || !isNum(frac[1]) || intPart == "" {
		return 0, false
	}
	var digits strings.Builder
	if strings.Trim(intPart, "0123456789") != "" {
		// Grouped: groups of three after a first of one to three, one
		// separator kind, not the decimal one.
		sep := byte(0)
		groups := strings.FieldsFunc(intPart, func(r rune) bool {
			if r == '.' || r == ',' || r == '\'' || r == ' ' {
				if sep == 0 {
					sep = byte(r)
				} else if sep != byte(r) {
					sep = 1
				}
				return true
			}
			return false
		})
		if sep == 1 || sep == s[d] || len(groups) < 2 {
			return 0, false
		}
		if strings.Count(intPart, string(sep)) != len(groups)-1 {
			return 0, false
		}
		if len(groups[0]) > 3 {
			return 0, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, false
			}
		}
		for _, g := range groups {
			digits.WriteString(g)
		}
	} else {
		if len(intPart) > 9 {
			return 0, false
		}
		digits.WriteString(intPart)
	}
	n, err := strconv.ParseInt(digits.String()+frac, 10, 64)
	if err != nil || n > 1e13 {
		return 0, false
	}
	return n, true
}

var currencySigns = []struct{ sign, code string }{
	{"EUR", "EUR"}, {"€", "EUR"}, {"Euro", "EUR"}, {"USD", "USD"}, {"US$", "USD"}, {"$", "USD"},
	{"GBP", "GBP"}, {"£", "GBP"}, {"CHF", "CHF"}, {"SFr", "CHF"}, {"Fr.", "CHF"}, {"SEK", "SEK"},
	{"NOK", "NOK"}, {"DKK", "DKK"}, {"PLN", "PLN"}, {"zł", "PLN"}, {"CZK", "CZK"}, {"Kč", "CZK"},
	{"JPY", "JPY"}, {"¥", "JPY"}, {"CAD", "CAD"}, {"AUD", "AUD"}, {"HUF", "HUF"}, {"Ft", "HUF"},
}

// currencyNear returns the currency printed right before or after an amount.
func currencyNear(s string, start, end int) string {
	before := strings.TrimRight(s[max(0, start-6):start], " ")
	after := strings.TrimLeft(s[end:min(len(s), end+7)], " ")
	for _, c := range currencySigns {
		if strings.HasSuffix(before, c.sign) || strings.HasPrefix(after, c.sign) {
			if c.sign == "Fr." && !strings.HasSuffix(before, c.sign) {
				continue
			}
			return c.code
		}
	}
	return ""
}

// currencyCodes are the ISO 4217 codes and signs counted over a whole page.
var currencyWords = map[string]string{
	"EUR": "EUR", "€": "EUR", "Euro": "EUR", "USD": "USD", "$": "USD", "GBP": "GBP", "£": "GBP", "CHF": "CHF",
	"SEK": "SEK", "NOK": "NOK", "DKK": "DKK", "PLN": "PLN", "CZK": "CZK", "JPY": "JPY", "CAD": "CAD", "AUD": "AUD",
	"HUF": "HUF",
}
