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

func TestDevLines(t *testing.T) {
	b, err := os.ReadFile(os.Getenv("DOC"))
	if err != nil {
		t.Skip()
	}
	a := analyze(newDoc(splitPages(string(b))))
	for i, l := range a.d.lines {
		t.Logf("%2d rec=%v %q labels=%v am=%v", i, a.recip[i], l.raw, a.labels[i], a.amounts[i])
	}
}
