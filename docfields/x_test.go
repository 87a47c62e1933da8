package docfields
import "testing"
func TestX(t *testing.T) {
	for _, s := range []string{"05.03.2018", "5. März 2018", "March 5, 2018", "12-Mar-2024", "2nd May 2005", "Oct0ber 29, 2015", "12 scptembre 2016"} {
		t.Log(s, datesIn(s))
	}
}
