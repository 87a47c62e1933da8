package datev

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Chart is what the export needs of a chart of accounts (Kontenrahmen):
// the accounts a document is booked on by default, and which accounts are
// automatic. Accounts are written at the shortest length, 4.
type Chart struct {
	Expense           string            `json:"expense"`
	Revenue           string            `json:"revenue"`
	Bank              string            `json:"bank"`
	Cash              string            `json:"cash"`
	AutomaticAccounts []string          `json:"automatic"`
	Names             map[string]string `json:"names"`
}

//go:embed charts.json
var chartsJSON []byte

// Charts are SKR03 and SKR04, from charts.json, whose "source" names
// where the accounts are from.
var Charts = func() map[string]Chart {
	var c struct {
		Charts map[string]Chart `json:"charts"`
	}
	if err := json.Unmarshal(chartsJSON, &c); err != nil {
		panic("datev: charts.json: " + err.Error())
	}
	return c.Charts
}()

// Account writes a general-ledger account (Sachkonto) at the client's
// account length: DATEV lengthens an account by zeros on the right.
func Account(account string, length int) string {
	if len(account) >= length {
		return account
	}
	return account + strings.Repeat("0", length-len(account))
}

// Automatic reports whether the chart's account, at any length, is an
// automatic account, on which no tax key may stand.
func (c Chart) Automatic(account string) bool {
	return slices.ContainsFunc(c.AutomaticAccounts, func(a string) bool { return Account(a, len(account)) == account })
}

// The tax keys (BU-Schlüssel) by VAT rate: input tax on what was
// received, output tax on what was issued.
var (
	receivedKeys = map[int]string{19: "9", 7: "8"}
	issuedKeys   = map[int]string{19: "3", 7: "2"}
)

// RateKey reports whether key is one of the keys of 19 % or 7 % that
// TaxKey gives.
func RateKey(key string) bool {
	return slices.ContainsFunc([]map[int]string{receivedKeys, issuedKeys}, func(keys map[int]string) bool {
		return slices.Contains(slices.Collect(maps.Values(keys)), key)
	})
}

// TaxKey is the key of a rate for a document received or issued, booked
// on account: none on an automatic account or where no tax is stated
// (rate 0).
func (c Chart) TaxKey(rate int, issued bool, account string) string {
	if rate == 0 || c.Automatic(account) {
		return ""
	}
	if issued {
		return issuedKeys[rate]
	}
	return receivedKeys[rate]
}

// DefaultAccount is the chart's account for a document: its revenue
// account for one issued, its expense account for one received, neither
// automatic, so that the tax key states each row's rate; the client's own
// defaults where set.
func (c Chart) DefaultAccount(issued bool, defaultExpense, defaultRevenue string) string {
	if issued {
		if defaultRevenue != "" {
			return defaultRevenue
		}
		return c.Revenue
	}
	if defaultExpense != "" {
		return defaultExpense
	}
	return c.Expense
}

// Part is the share of a document's amounts at one VAT rate, in cents.
type Part struct {
	Rate  int
	Gross int64
}

// Split divides a document's amounts by VAT rate: one part when the tax is
// that of 19 % or 7 % of the net (to the cent, as rounding allows), or no
// tax is stated; two parts, 19 % and 7 %, when the tax lies between, each
// part's tax rounded so that the parts add up to the total exactly. ok is
// false when the amounts fit no German rate (a foreign VAT, a wrong
// reading).
func Split(net, tax, total int64, taxStated bool) (parts []Part, ok bool) {
	if total <= 0 {
		return nil, false
	}
	if !taxStated || tax == 0 {
		return []Part{{Rate: 0, Gross: total}}, true
	}
	if net <= 0 || tax < 0 || net+tax != total {
		return nil, false
	}
	for _, rate := range []int{19, 7} {
		if abs(net*int64(rate)-tax*100) <= int64(rate)+100 {
			return []Part{{Rate: rate, Gross: total}}, true
		}
	}
	// net19 + net7 = net and 19 % of net19 + 7 % of net7 = tax.
	net19 := (tax*100 - net*7 + 6) / 12
	net7 := net - net19
	if net19 <= 0 || net7 <= 0 {
		return nil, false
	}
	tax19 := (net19*19 + 50) / 100
	tax7 := tax - tax19
	if abs(net7*7-tax7*100) > 100+7 {
		return nil, false
	}
	return []Part{{Rate: 19, Gross: net19 + tax19}, {Rate: 7, Gross: net7 + tax7}}, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// GUID is the stable document GUID of a file: derived from its id, so that
// exporting the same period twice links the same rows to the same
// documents. It has the form of a name-based UUID.
func GUID(fileID string) string {
	sum := sha256.Sum256([]byte("acctapi datev document\x00" + fileID))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return strings.ToUpper(h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}
