package einvoice

import (
	"strconv"
	"strings"
	"time"
)

// percent reads a percentage between 0 and 100, exclusive, as a decimal.
func percent(s string) string {
	v := decimal(s)
	if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 || f >= 100 {
		return ""
	}
	return v
}

// days reads a whole number of days, 1 to 366.
func days(s string) string {
	s = strings.TrimSpace(s)
	if whole, frac, ok := strings.Cut(s, "."); ok && strings.Trim(frac, "0") == "" {
		s = whole
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 366 {
		return ""
	}
	return strconv.Itoa(n)
}

// daysAfter is the day n days after date, both as written; "" when either
// is missing.
func daysAfter(date, n string) string {
	d, err := time.Parse(time.DateOnly, date)
	k, kerr := strconv.Atoi(n)
	if err != nil || kerr != nil {
		return ""
	}
	return d.AddDate(0, 0, k).Format(time.DateOnly)
}

// skontoLine reads the first discount XRechnung writes into the payment
// terms' text, "#SKONTO#TAGE=14#PROZENT=2.00#" (a BASISBETRAG may follow):
// its days and its percentage.
func skontoLine(s string) (days_, pct string, ok bool) {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(strings.ToUpper(line), "#SKONTO#") {
			continue
		}
		for _, part := range strings.Split(line, "#") {
			key, value, _ := strings.Cut(part, "=")
			switch strings.ToUpper(strings.TrimSpace(key)) {
			case "TAGE":
				days_ = days(value)
			case "PROZENT":
				pct = percent(value)
			}
		}
		return days_, pct, days_ != "" && pct != ""
	}
	return "", "", false
}
