package bankstatement

import "time"

// A bank keeps an account's days in its own time zone. CAMT may write a
// booking as a time in UTC ("2026-03-12T23:00:00Z"); the bank's day of it
// is the day in the zone of the account's country, which the IBAN names.
// The European zones are kept here rather than in the system's time zone
// database, which a small container may lack: their offsets from UTC and
// the EU summer time, from 01:00 UTC on the last Sunday of March to 01:00
// UTC on the last Sunday of October.

// standardOffset is each European country's offset from UTC outside
// summer time, in hours; summer says it keeps summer time.
var standardOffset = map[string]struct {
	hours  int
	summer bool
}{
	"IS": {0, false},
	"PT": {0, true}, "IE": {0, true}, "GB": {0, true}, "FO": {0, true},
	"DE": {1, true}, "AT": {1, true}, "CH": {1, true}, "LI": {1, true}, "NL": {1, true}, "BE": {1, true},
	"LU": {1, true}, "FR": {1, true}, "MC": {1, true}, "IT": {1, true}, "SM": {1, true}, "VA": {1, true},
	"ES": {1, true}, "AD": {1, true}, "MT": {1, true}, "DK": {1, true}, "NO": {1, true}, "SE": {1, true},
	"PL": {1, true}, "CZ": {1, true}, "SK": {1, true}, "HU": {1, true}, "SI": {1, true}, "HR": {1, true},
	"BA": {1, true}, "RS": {1, true}, "ME": {1, true}, "MK": {1, true}, "AL": {1, true}, "XK": {1, true},
	"GI": {1, true},
	"FI": {2, true}, "EE": {2, true}, "LV": {2, true}, "LT": {2, true}, "BG": {2, true}, "RO": {2, true},
	"GR": {2, true}, "CY": {2, true}, "MD": {2, true}, "UA": {2, true},
}

// bankDay is the day of the UTC time t where the account with the IBAN is
// kept; the UTC day when the IBAN is empty or of a country not listed.
func bankDay(t time.Time, iban string) time.Time {
	if len(iban) >= 2 {
		if z, ok := standardOffset[iban[:2]]; ok {
			offset := time.Duration(z.hours) * time.Hour
			if z.summer && summerTime(t) {
				offset += time.Hour
			}
			t = t.Add(offset)
		}
	}
	return day(t.Year(), t.Month(), t.Day())
}

// summerTime reports whether the EU's summer time is on at the UTC time t.
func summerTime(t time.Time) bool {
	start := lastSunday(t.Year(), time.March).Add(time.Hour)
	end := lastSunday(t.Year(), time.October).Add(time.Hour)
	return !t.Before(start) && t.Before(end)
}

// lastSunday is the UTC midnight of the month's last Sunday.
func lastSunday(y int, m time.Month) time.Time {
	last := day(y, m+1, 0)
	return last.AddDate(0, 0, -int(last.Weekday()))
}
