package docfields
import ("testing";"os")
func TestX(t *testing.T) {
	b, _ := os.ReadFile(os.Getenv("DOC"))
	a := analyze(newDoc(splitPages(string(b))))
	for i, xs := range a.amounts {
		for _, x := range xs {
			l, d := a.governing(i, x.start, amountFamily, a.amountsBetween)
			t.Log(i, x, x.currency, l, d, x.percent)
		}
	}
}
