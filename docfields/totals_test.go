package docfields

import (
	"slices"
	"strings"
	"testing"

	"acctapi/document"
)

// Each step of the amount reader alone: candidates, features, choice.

func TestAmountCandidatesByLabel(t *testing.T) {
	a := analyze(newDoc([]string{`RECHNUNG Nr. 5 vom 01.02.2024
Nettobetrag      100,00
MwSt 19 %         19,00
Gesamtbetrag     119,00
Rabatt             5,00`}))
	c := a.amountCandidates()
	role := func(cs []amtCand, cents int64) (bool, bool) {
		for _, x := range cs {
			if x.x.cents == cents {
				return true, x.labled
			}
		}
		return false, false
	}
	if in, lab := role(c.net, 10000); !in || !lab {
		t.Errorf("100,00 not a labelled net: %+v", c.net)
	}
	if in, lab := role(c.tax, 1900); !in || !lab {
		t.Errorf("19,00 not a labelled tax: %+v", c.tax)
	}
	if in, _ := role(c.total, 11900); !in {
		t.Errorf("119,00 not a total: %+v", c.total)
	}
	for _, cs := range [][]amtCand{c.total, c.net, c.tax} {
		if in, _ := role(cs, 500); in {
			t.Errorf("a discount is a candidate: %+v", cs)
		}
	}
	if c.maxAbs != 11900 {
		t.Errorf("largest %d, want 11900", c.maxAbs)
	}
}

const tillSlip = `KEDAI MAJU SDN BHD
SIMPLIFIED TAX INVOICE
Date: 06/03/2018 14:22
SUSU 1L             2     6.90    13.80
Tatal Sales (lnclusive of GST)  17.30
CASH                              RM  20.00
CHANGE                            RM   2.70`

func TestPaymentRead(t *testing.T) {
	a := analyze(newDoc([]string{tillSlip}))
	p, ok := a.payment()
	if !ok || p.tendered != 2000 || p.change != 270 {
		t.Fatalf("payment %+v %v, want 20.00 tendered and 2.70 change", p, ok)
	}
	if a.kind != document.Receipt {
		t.Errorf("kind %q: a slip that gives change is a receipt whatever its title", a.kind)
	}
	if _, ok := analyze(newDoc([]string{"RECHNUNG\nSumme 20,00\nRabatt 2,70"})).payment(); ok {
		t.Error("an invoice without change has a payment")
	}
	// "CHANGE CASH" and "CASH CHANGE" give change back; neither is cash paid.
	for _, label := range []string{"CHANGE CASH", "CASH CHANGE"} {
		a := analyze(newDoc([]string{"SUBTOTAL        RM41.45\nCASH            RM50.00\n" + label + "     RM8.55"}))
		if p, ok := a.payment(); !ok || p.tendered != 5000 || p.change != 855 {
			t.Errorf("%s: payment %+v %v, want 50.00 tendered and 8.55 change", label, p, ok)
		}
	}
	// A till that prints the cash tendered as a credit.
	a = analyze(newDoc([]string{"Total RM Incl. of GST     41.00\nCash                     -51.00\nCHANGE                    10.00"}))
	if p, ok := a.payment(); !ok || p.tendered != 5100 || p.change != 1000 {
		t.Errorf("payment %+v %v, want 51.00 tendered and 10.00 change", p, ok)
	}
}

func TestPaidTotals(t *testing.T) {
	a := analyze(newDoc([]string{tillSlip}))
	c := amountCands{total: []amtCand{
		{x: amountTok{cents: 2000}, line: 5, labled: true, score: 1.4},
		{x: amountTok{cents: 270}, line: 6, score: 0.3},
		{x: amountTok{cents: 1730}, line: 4, score: 0.3},
		{x: amountTok{cents: 3100}, line: 3, score: 0.3},
	}}
	a.paidTotals(&c)
	want := []float64{1.4 + weights.PaidWrong, 0.3 + weights.PaidWrong, 0.3 + weights.Paid, 0.3 + weights.PaidWrong}
	for k, w := range want {
		if c.total[k].score != w {
			t.Errorf("%s scored %.2f, want %.2f", c.total[k].x, c.total[k].score, w)
		}
	}
	// With the total's line unread, the difference is the total.
	c = amountCands{total: []amtCand{{x: amountTok{cents: 2000}, line: 5, labled: true, score: 1.4}}}
	a.paidTotals(&c)
	if len(c.total) != 2 || c.total[1].x.cents != 1730 || !c.total[1].labled {
		t.Errorf("no total from the payment: %+v", c.total)
	}
	// A labelled sum keeps its word: the change may be misread.
	c = amountCands{total: []amtCand{{role: rTotal, x: amountTok{cents: 1740}, line: 4, labled: true, score: 2.4}}}
	a.paidTotals(&c)
	if len(c.total) != 1 {
		t.Errorf("a total added beside a labelled sum: %+v", c.total)
	}
}

func TestTaxSummaryRow(t *testing.T) {
	a := analyze(newDoc([]string{`SHOP SDN BHD
CASH BILL  06/03/2018 14:22
ITEM A      1   439.00
GST Summary   Amt(RM)   Tax(RM)
Total          439.00     26.34`}))
	if a.kind != document.Receipt {
		t.Fatalf("kind %q", a.kind)
	}
	c := a.amountCandidates()
	var sum *amtCand
	for k := range c.total {
		if c.total[k].x.cents == 46534 {
			sum = &c.total[k]
		}
	}
	if sum == nil || !sum.sum {
		t.Fatalf("no total 465.34 from the summary row: %+v", c.total)
	}
	// Its net and tax add up by construction: no proof beyond its label.
	n := &amtCand{x: amountTok{cents: 43900}, labled: true, score: weights.Side}
	x := &amtCand{x: amountTok{cents: 2634}, labled: true, score: weights.Side}
	s, checked, ok := combine(sum, n, x, c.maxAbs)
	if !ok || !checked || s != sum.score+weights.SideUnchecked*2*weights.Side {
		t.Errorf("combine = %.2f %v %v", s, checked, ok)
	}
}

func TestChooseAmounts(t *testing.T) {
	c := amountCands{
		total: []amtCand{
			{role: rTotal, x: amountTok{cents: 11900}, line: 3, labled: true, score: 2.4},
			{x: amountTok{cents: 12500}, line: 5, score: 0.7},
		},
		net:    []amtCand{{x: amountTok{cents: 10000}, line: 1, labled: true, score: 2}},
		tax:    []amtCand{{x: amountTok{cents: 1900}, line: 2, labled: true, score: 2}},
		maxAbs: 12500,
	}
	best, other := chooseAmounts(&c)
	if best.t == nil || best.t.x.cents != 11900 || !best.checked || best.n.x.cents != 10000 || best.x.x.cents != 1900 {
		t.Fatalf("choice %+v, want 119.00 = 100.00 + 19.00", best)
	}
	// 125.00 scores best beside the labelled net alone.
	if want := 0.7 + weights.SideUnchecked*2; other != want {
		t.Errorf("the other total scored %.2f, want 125.00's %.2f", other, want)
	}
	// Two unlabelled line items never make a net and a tax.
	if _, _, ok := combine(&c.total[0], &amtCand{x: amountTok{cents: 10000}}, &amtCand{x: amountTok{cents: 1900}}, 12500); ok {
		t.Error("two unlabelled amounts taken for net and tax")
	}
	// A net as large as the total needs a labelled zero tax on its own line.
	if _, _, ok := combine(&c.total[0], &amtCand{x: amountTok{cents: 11900}, labled: true, line: 1}, nil, 12500); ok {
		t.Error("a net equal to the total without a zero tax")
	}
}

// A rounded total that the sum and the adjustment above it contradict
// loses to them by the fitted weights.
func TestRoundingOutvoted(t *testing.T) {
	a := analyze(newDoc([]string{`KEDAI MAJU SDN BHD
CASH BILL  06/03/2018 14:22
Total :                       9.00
Rounding Adjustment :         0.00
Rounded Total (RM) :          9.60`}))
	T := []amtCand{
		{role: rTotal, x: amountTok{cents: 900}, line: 2, labled: true, score: 2},
		{role: rGross, x: amountTok{cents: 960}, line: 4, labled: true, score: 3},
	}
	a.checkRounding(T, []bool{false, true})
	if T[0].score != 2+weights.Rounded || T[1].score != 3+weights.Contradicted {
		t.Errorf("scores %.2f and %.2f, want %.2f and %.2f", T[0].score, T[1].score, 2+weights.Rounded, 3+weights.Contradicted)
	}
	// A rounded total its sum and adjustment add up to keeps its score.
	T = []amtCand{
		{role: rTotal, x: amountTok{cents: 900}, line: 2, labled: true, score: 2},
		{role: rGross, x: amountTok{cents: 900}, line: 4, labled: true, score: 3},
	}
	a.checkRounding(T, []bool{false, true})
	if T[0].score != 2 || T[1].score != 3 {
		t.Errorf("scores %.2f and %.2f changed", T[0].score, T[1].score)
	}
}

// Paid exactly (no change), the tendered amount is the total; paid with
// change, the total is the difference even where OCR lost the total's
// line, and a summed total off by the till's rounding gives way to it.
func TestPaidExactlyOrWithChange(t *testing.T) {
	for text, want := range map[string]string{
		`SHOP SDN BHD
CASH BILL  06/03/2018 14:22
ITEM A      1    73.00
Sub Total :      68.87
CASH :           73.00
Change :          0.00`: "73.00",
		`SHOP SDN BHD
CASH BILL  06/03/2018 14:22
ITEM A      1    43.90
GST Summary   Amt(RM)   Tax(RM)
Total          43.90      2.64
CASH                    100.00
CHANGE                   53.45`: "46.55",
	} {
		if got := Read(text).Fields.TotalAmount; got != want {
			t.Errorf("total %q, want %s in\n%s", got, want, text)
		}
	}
}

// A tax summary's total row sums the items; the rounding line says what
// the till took.
func TestTaxSummaryRowRounded(t *testing.T) {
	text := `SHOP SDN BHD
CASH BILL  06/03/2018 14:22
ITEM A      1    26.00
ROUNDING                -0.01
GST Summary   Amt(RM)   Tax(RM)
TOTAL:          26.00      1.56`
	if got := Read(text).Fields.TotalAmount; got != "27.55" {
		t.Errorf("total %q, want 27.55", got)
	}
}

// "Total (Inclusive of GST)", "Total RM Incl. of GST": the total with its
// tax, not the tax; "Total (Excluding GST)" is the net.
func TestTotalInclusiveOf(t *testing.T) {
	for text, want := range map[string]string{
		`SWEET CAFE SDN BHD
Tax Invoice   14-02-2018 13:02
Smoked Duck Spaghetti    1 x   12.50
Total (Excluding GST):             28.58
GST payable (6%):                   1.72
Total (Inclusive of GST):          30.30`: "30.30",
		`POPULAR BOOK CO SDN BHD
12/01/18 16:52  Slip No.: 0020070154
70g P. Copy   2pc @ 13.69     27.38
Stat-Great Saving             -6.40
Total RM Incl. of GST         20.98`: "20.98",
		// OCR reads "Incl." as "Inel." or "Ins]".
		`POPULAR BOOK CO SDN BHD
12/01/18 16:52  Slip No.: 0020070154
2pe  @  3,50                  1.00  T
Total  RM  Inel.  of  GST        9. 65
Te  6%               9.10        0.55`: "9.65",
		`AEON CO. (M) BHD
Sub-tota |                         122,16
Rounding Adi                         0.02
Total  After  Adj  Ins]  GST       122.80
CASH                               200,00`: "122.80",
	} {
		if got := Read(text).Fields.TotalAmount; got != want {
			t.Errorf("total %q, want %s in\n%s", got, want, text)
		}
	}
}

// A rounded total no label calls rounded: the amount below a sum that is
// the sum plus the rounding line's adjustment.
func TestRoundedBelow(t *testing.T) {
	for text, want := range map[string]string{
		`SUSHI MENTAI SDN BHD
Tax Invoice   31-03-2018 18:12
Unagi Don                1x   19.80
Total (Excluding GST):        61.82
GST Payable:                   3.71
Total (Inclusive of GST):     65.53
Rounding Adj:                  0.02
VISA                          65.55`: "65.55",
		`BANH MI CAFE
Guest Check   29-10-2017 18:31
Pork Ribs                      9.90
Total (Inclusive of GST):     23.26
Rounding Adj:                 -0.01
TOTAL:                        23.25`: "23.25",
	} {
		if got := Read(text).Fields.TotalAmount; got != want {
			t.Errorf("total %q, want %s in\n%s", got, want, text)
		}
	}
}

// A charge its line names in words no label holds ("Serv. Charge") is
// not the tax that makes a net add up to a total.
func TestNamedChargeIsNoTax(t *testing.T) {
	text := `TOKYO KITCHEN SDN BHD
Tax Invoice   23-04-2017 21:04
Salmon Teriyaki Wazen    1x   25.90
Total (Excluding GST):        97.60
Serv. Charge (10%):            9.76
GST Payable:                   6.44
Total (Inclusive of GST):    113.80
GST Summary   Amount(RM)   Tax(RM)
SR (@ 6%)       107.36       6.44`
	if got := Read(text).Fields.TotalAmount; got != "113.80" {
		t.Errorf("total %q, want 113.80", got)
	}
}

// The sum printed right after the rounding line is the rounded total,
// whatever its label calls it ("NET TOTAL").
func TestNetAfterRoundingIsTotal(t *testing.T) {
	text := `B & BEST RESTAURANT
TAX INVOICE   10/02/2017 13:09
1 FISHBALL NOODLE             7.00
SUB TOTAL                     7.00
GST 6%                        0.42
ROUNDING ADJ                 -0.02
NET TOTAL                     7.40`
	if got := Read(text).Fields.TotalAmount; got != "7.40" {
		t.Errorf("total %q, want 7.40", got)
	}
}

// OCR spaces a label's words out ("Total   Amount"); beside its value, or
// starting a line that ends in one, it is still one label, but a table's
// header of columns stays words apart.
func TestSpacedLabel(t *testing.T) {
	canon := func(s string) []string {
		var out []string
		for _, l := range labelsIn(s) {
			out = append(out, l.canon)
		}
		return out
	}
	for line, want := range map[string][]string{
		"Total   Amount:      57.80":     {"total amount"},
		"  Tax     Amount :  RM 3.27":    {"tax amount"},
		"Qty  Description   Total   Tax": {"qty", "description", "total", "tax"},
		"Total  .  Amount      57.80":    {"total", "amount"},
	} {
		if got := canon(line); !slices.Equal(got, want) {
			t.Errorf("labels of %q: %q, want %q", line, got, want)
		}
	}
}

// "Total" heading a column of item amounts labels each row's total, not
// the page's.
func TestTotalColumnHeader(t *testing.T) {
	text := `WARAKUYA SDN BHD
TAX INVOICE   10/03/2018 5:41
Qty Code/Desc                  Total RM
 3  SABA SHIO YAKI SET            63.70
 1  SALMON SHIO SET               21.90
 4  ICED GREEN TEA                 4.00
                DISCOUNT         -30.06
TOTAL:                      RM 57.80`
	if got := Read(text).Fields.TotalAmount; got != "57.80" {
		t.Errorf("total %q, want 57.80", got)
	}
}

// OCR puts a space after a decimal point ("29. 70") or before it ("28
// .05"); the cents still belong to it, but not where a date or another
// number goes on.
func TestSpacedDecimals(t *testing.T) {
	for line, want := range map[string][]int64{
		"Total Sales          RM  29. 70": {2970},
		"Discount              -30. 06":   {-3006},
		"Total  49, 80 paid":              {4980},
		"het  Total        RM28 .05":      {2805},
		"  RM       170.   00":            {17000},
		"Pos. 1.   25 Stk":                nil,
		"Qty 2 3.50":                      {350},
		"am 12. 03. 2018":                 nil,
		"Nr. 12. 500":                     nil,
	} {
		var got []int64
		for _, x := range amountsIn(repairDigits(line)) {
			got = append(got, x.cents)
		}
		if !slices.Equal(got, want) {
			t.Errorf("amounts of %q: %v, want %v", line, got, want)
		}
	}
}

// A rounding line's amount too large to adjust a total, near a sum above
// it, prints the total rounded; one near no sum is an adjustment misread.
func TestRoundingLinePrintsTotal(t *testing.T) {
	for text, want := range map[string]string{
		`99 SPEED MART S/B
INVOICE NO : 18301/102/T0305   07-02-18
270 CSR GULA 1KG             RM35.20
2471 LYCHEES IN SYRUP        RM10.14
Total Sales (Inclusive GST)  RM  45.34
Rounding RM   45.35`: "45.35",
		`KEDAI MAJU SDN BHD
CASH BILL  06/03/2018 14:22
ITEM A      1               19.20
Total Sales (Inclusive GST)  19.20
Rounding  Adj   9.00`: "19.20",
	} {
		if got := Read(text).Fields.TotalAmount; got != want {
			t.Errorf("total %q, want %s in\n%s", got, want, text)
		}
	}
}

// A sum and the rounding line that make the payment vouch for a tendered
// line OCR lost the label of, where the rounded total's line is misread.
func TestPaidRoundedSum(t *testing.T) {
	text := `GIANT SUPERMARKET
TAX INVOICE   13/05/18 16:08
SA GRANNY SMITH 10s            15.98
Total with GST                 41.48
Rounding                        0.02
Tatal 5 vt     Total       4i  50
                         Tender
Master  5148 App  83550        41.50
Change                          0.00`
	if got := Read(text).Fields.TotalAmount; got != "41.50" {
		t.Errorf("total %q, want 41.50", got)
	}
}

// A total under a label the reader does not know is governed by the tax's
// label above it; net and tax adding up to it make it the total. (The page
// is a real one's end, its "Net amout" as printed.)
func TestTotalUnderTaxLabel(t *testing.T) {
	page := "INVOICE 2018-7\n400.00   Ballons          19%    0.79 €    316.00 €\n800.00   Hot air          19%   0.025 €     20.00 €\n" +
		"Net total: 496.00 €\n\nplus VAT\nVAT              Net amout      VAT amount\n7%               160.00 €       11.20 €\n19%              336.00 €       63.84 €\n" +
		"                 VAT total: 75.04 €\nDue payable: 571.04 €"
	if got := Read(page).Fields; got.TotalAmount != "571.04" || got.TaxAmount != "75.04" {
		t.Errorf("total %q, tax %q; want 571.04 and 75.04", got.TotalAmount, got.TaxAmount)
	}
}

// A sum just below a receipt's rounding line is what the till rounded,
// though a larger-weighted label ("Total Amount") sums above it before
// the service charge.
func TestSumAfterRoundingLine(t *testing.T) {
	text := `SUSHI KING
TAX INVOICE   12/03/2018 19:40
3  SABA SHIO YAKI SET          33.70
1  SALMON SHIO SET             21.90
Total  Amount                  49.80
Serv  Charge  10%               4.98
GST @ 6%                        3.29
Rounding Adj  :                -0.27
TOTAL:                      RM 57.80`
	if got := Read(text).Fields.TotalAmount; got != "57.80" {
		t.Errorf("total %q, want 57.80", got)
	}
}

// Where no total is read ("Total incl of GST 700", its point lost), a
// till's subtotal is what was paid, not an item's quantity; where a total
// is read, the subtotal stays the net.
func TestReceiptSubtotalWithoutTotal(t *testing.T) {
	slip := `LIM SENG THO HARDWARE TRADING
TAX INVOICE
Date -       03/02/2018 15:28
    10.00 NOS   x   0.70       7.00     SR
           Subtotal :         7.00
     Total incl of GST        700
     Change Due :           0.00`
	if got := Read(slip).Fields.TotalAmount; got != "7.00" {
		t.Errorf("total %q, want the subtotal 7.00", got)
	}
	withTotal := strings.Replace(slip, "700", "7.42", 1)
	if got := Read(withTotal).Fields.TotalAmount; got != "7.42" {
		t.Errorf("total %q, want the total 7.42", got)
	}
}

// "Total After Adj Incl GST" is the rounded total, and with the
// adjustment the tax summary's net and tax add up to it, not to the sum
// before it. OCR reads "Incl" as "Inc]".
func TestTotalAfterAdjustment(t *testing.T) {
	text := `AEON CO. (M) BHD
1x 000008204363                14,99SR
1x 000001018506                83.38SR
Sub-total                           98,37
Total  Sales  Inc]  GST             98.37
Rounding Adj                        -0.02
Total  After Adj  Incl  GST         98,35
CASH                               100,00
Item Count  6      Change Amt         1.65
GST Summary          Amount           Tax
SR @ 6%               92.80          5,57
Total                 92.80          5,57
22/04/2018  19:26`
	got := Read(text).Fields
	if got.TotalAmount != "98.35" || got.NetAmount != "92.80" || got.TaxAmount != "5.57" {
		t.Errorf("total, net, tax %q %q %q, want 98.35 92.80 5.57", got.TotalAmount, got.NetAmount, got.TaxAmount)
	}
	beforePayment, _, _ := strings.Cut(text, "CASH")
	if got := Read(beforePayment).Fields.TotalAmount; got != "98.35" {
		t.Errorf("without payment and summary: total %q, want 98.35", got)
	}
}

// Paid with no change, the payment outweighs a printed total one misread
// digit away, unless the net and tax add up to the total; a payment more
// than a digit away does not ("CASH 98.20" misread for 8.20).
func TestPaidExactly(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"a digit misread", `      Total Sales (Excluding GST)   60.00
                      Discount       0.00
      Total Sales (Inclusive of GST)  :  63.50
                           CASH  :     63.60
                         Change  :      0.00`, "63.60"},
		{"checked by net and tax", `   Total Sales (Excluding GST)  :  89.50
                     Total GST  :   5.37
Total Sales (Inclusive of GST)  :  94.87
                          CASH  :  84.87
                        Change  :   0.00`, "94.87"},
		{"more than a digit", `Total Amount: $8.20
Nett Total: $8.20
CASH    98.20
Change   $0.00`, "8.20"},
	} {
		if got := Read("TAX INVOICE\n" + c.text).Fields.TotalAmount; got != c.want {
			t.Errorf("%s: total %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b int64
		want bool
	}{{6350, 6360, true}, {9487, 8487, true}, {820, 9820, false}, {11825, 11835, true}, {6350, 6350, false}, {1234, 4321, false}} {
		if got := oneDigitApart(c.a, c.b); got != c.want {
			t.Errorf("oneDigitApart(%d, %d) = %v", c.a, c.b, got)
		}
	}
}
