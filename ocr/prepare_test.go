package ocr

import (
	"context"
	"image"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLayout(t *testing.T) {
	// Tesseract found the label and its value in two blocks, and a
	// table's header and row with column gaps; the letters are 10 pixels
	// wide and the lines 20 high.
	w := func(text string, left, top int, line string) word {
		return word{text: text, left: left, top: top, width: 10 * len(text), height: 20, line: line, conf: 90}
	}
	words := []word{
		w("Rechnung", 100, 100, "1.1.1"), w("Nr.", 187, 102, "1.1.1"),
		w("Datum", 100, 130, "1.1.2"),
		w("RE-2026-0042", 600, 98, "2.1.1"),
		w("05.03.2026", 600, 131, "2.1.2"),
		w("Netto", 100, 250, "3.1.1"), w("Steuer", 300, 250, "3.1.1"), w("Gesamt", 500, 251, "3.1.1"),
		w("47,16", 100, 280, "3.1.2"), w("8,96", 300, 280, "3.1.2"), w("56,12", 500, 281, "3.1.2"),
	}
	want := "Rechnung Nr.                                      RE-2026-0042\n" +
		"Datum                                             05.03.2026\n" +
		"\n" +
		"Netto               Steuer              Gesamt\n" +
		"47,16               8,96                56,12"
	if got := layout(words); got != want {
		t.Errorf("layout:\n%s\nwant:\n%s", got, want)
	}
	if got := layout(nil); got != "" {
		t.Errorf("layout of no words: %q", got)
	}
}

// sparsePhoto is a letterhead and an address, a few lines in 10-point type
// at 150 dpi on an A4 page otherwise empty, photographed dim and noisy
// with a shadow across it: on such a page the ink is far fewer than one
// pixel in a hundred.
func sparsePhoto(tb testing.TB) *image.Gray {
	tb.Helper()
	page := renderPageSized(tb, 1240, 1754, 21, []string{
		"Muster Elektro GmbH, Hauptstraße 5, 04109 Leipzig",
		"Rechnung Nr. RE-2026-0042",
		"Rechnungsdatum 05.03.2026",
		"Gesamtbetrag 59,90 EUR",
	})
	r := rand.New(rand.NewPCG(3, 4))
	out := image.NewGray(page.Rect)
	w, h := float64(page.Rect.Dx()), float64(page.Rect.Dy())
	for y := range page.Rect.Dy() {
		for x := range page.Rect.Dx() {
			white := 215 * (1 - 0.35*(1-(float64(x)/w+float64(y)/h)/2))
			v := 50 + float64(page.Pix[y*page.Stride+x])*(white-50)/255 + r.NormFloat64()*10
			out.Pix[y*out.Stride+x] = uint8(math.Max(0, math.Min(255, v)))
		}
	}
	return out
}

func TestFlatten(t *testing.T) {
	g := sparsePhoto(t)
	ink := renderPageSized(t, 1240, 1754, 21, []string{
		"Muster Elektro GmbH, Hauptstraße 5, 04109 Leipzig",
		"Rechnung Nr. RE-2026-0042",
		"Rechnungsdatum 05.03.2026",
		"Gesamtbetrag 59,90 EUR",
	})
	flatten(g)
	// Paper, in the shadow's darkest corner and its lightest, comes out
	// near white; ink, black.
	var paper, dark [2]float64
	for i, v := range ink.Pix {
		k := 0
		if v < 64 {
			k = 1
		}
		if v < 64 || v == 255 {
			if k == 1 {
				dark[0] += float64(g.Pix[i])
				dark[1]++
			} else {
				paper[0] += float64(g.Pix[i])
				paper[1]++
			}
		}
	}
	if m := paper[0] / paper[1]; m < 230 {
		t.Errorf("paper's mean level %.0f, want near white", m)
	}
	if m := dark[0] / dark[1]; m > 60 {
		t.Errorf("ink's mean level %.0f, want near black", m)
	}
}

func TestGlyphSize(t *testing.T) {
	for _, size := range []float64{21, 26, 44} {
		page := renderPageSized(t, 1240, 0, size, invoiceLines)
		s := glyphSize(page)
		// Between the x-height (about half the size) and the capitals'
		// height (about 0.7).
		if s < 0.45*size || s > 0.8*size {
			t.Errorf("glyph size of %v-pixel type: %v", size, s)
		}
		if s2 := glyphSize(rotate90(page, 90)); s2 != s {
			t.Errorf("glyph size of %v-pixel type turned 90°: %v, upright %v", size, s2, s)
		}
	}
	if s := glyphSize(image.NewGray(image.Rect(0, 0, 100, 100))); s != 0 {
		t.Errorf("glyph size of a blank page: %v", s)
	}
}

// TestRecognizeSparsePhoto reads the page that came back empty when the
// contrast was stretched between the page's 1st and 99th percentiles:
// with so little ink, the 1st lay in the paper's noise, and the paper
// turned to speckle.
func TestRecognizeSparsePhoto(t *testing.T) {
	e := mustEngine(t, Options{})
	p, err := e.Recognize(context.Background(), sparsePhoto(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"RE-2026-0042", "05.03.2026", "59,90"} {
		if !strings.Contains(p.Text, tok) {
			t.Errorf("text lacks %q:\n%s", tok, p.Text)
		}
	}
}

// TestPrepareBounds: small type on a large image is enlarged only within
// maxEnlarged pixels; large type is shrunk towards glyphTarget.
func TestPrepareBounds(t *testing.T) {
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = "Rechnung Nr. RE-2026-0042 vom 05.03.2026 über 59,90 EUR"
	}
	small := renderPageSized(t, 4000, 2200, 10, lines)
	if g := prepare(small, 40_000_000); g.Rect.Dx()*g.Rect.Dy() > maxEnlarged {
		t.Errorf("small type on %v enlarged to %v", small.Rect.Size(), g.Rect.Size())
	}
	large := renderPageSized(t, 3000, 0, 120, invoiceLines)
	g := prepare(large, 40_000_000)
	if g.Rect.Dx() >= large.Rect.Dx() {
		t.Errorf("large type on %v not shrunk: %v", large.Rect.Size(), g.Rect.Size())
	}
	if s := glyphSize(g); s < glyphTarget*0.7 || s > glyphTarget*1.3 {
		t.Errorf("large type's letters %v pixels after prepare, want some %d", s, glyphTarget)
	}
}

func TestPageLayout(t *testing.T) {
	for _, c := range []struct {
		w, h int
		want string
	}{
		{1240, 1754, "3"}, // A4
		{1754, 1240, "3"}, // A4 lying
		{439, 1004, "6"},  // a till slip
		{800, 1280, "6"},
	} {
		if got := pageLayout(image.NewGray(image.Rect(0, 0, c.w, c.h))); got != c.want {
			t.Errorf("%dx%d: layout %s, want %s", c.w, c.h, got, c.want)
		}
	}
}
