package docfields

import (
	"os"
	"testing"
)

func TestDev(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("DOC"))
	if err != nil {
		t.Skip()
	}
	t.Logf("%+v", Read(string(b)))
	d := newDoc(splitPages(string(b)))
	k, s := kindScores(d)
	t.Log(k, s)
	for _, l := range d.lines {
		for _, h := range kindMatcher.find(l.raw, fold(l.raw)) {
			t.Logf("%q %s %v", kindWords[h.id].text, kindWords[h.id].kind, kindWords[h.id].w)
		}
	}
}
