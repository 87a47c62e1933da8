package ocr

import (
	"image"
	"math/rand/v2"
	"testing"
)

// onSurround lays page on a larger image of level bg, noisy as a photo's
// table, at (x, y).
func onSurround(page *image.Gray, w, h, x, y int, bg uint8) *image.Gray {
	r := rand.New(rand.NewPCG(5, 6))
	out := image.NewGray(image.Rect(0, 0, w, h))
	for i := range out.Pix {
		out.Pix[i] = uint8(min(max(int(bg)+int(r.NormFloat64()*8), 0), 255))
	}
	for py := range page.Rect.Dy() {
		copy(out.Pix[(y+py)*out.Stride+x:], page.Pix[py*page.Stride:py*page.Stride+page.Rect.Dx()])
	}
	return out
}

func TestCropToPaper(t *testing.T) {
	page := renderPageSized(t, 500, 1100, 21, []string{
		"KEDAI RUNCIT MAJU", "TAX INVOICE", "Date: 21/03/2018", "Total Amt Payable   7.40", "Cash  10.00", "Change  2.60",
	})
	// A receipt on a dark table: cut to the paper and a margin, nothing of
	// the paper lost.
	photo := onSurround(page, 800, 1400, 170, 140, 30)
	got := cropToPaper(photo)
	w, h := got.Rect.Dx(), got.Rect.Dy()
	if w < 500 || w > 500+2*800/paperMargin+4 || h < 1100 || h > 1100+2*1400/paperMargin+4 {
		t.Errorf("receipt on a table cut to %dx%d, want the paper's 500x1100 and a margin", w, h)
	}
	// Paper to every edge, a light table, or white print on black: kept
	// whole.
	for name, g := range map[string]*image.Gray{
		"a scan":                    page,
		"on a white sheet":          onSurround(page, 800, 1400, 170, 140, 250),
		"gray receipt on white":     onSurround(darken(page, 70), 800, 1400, 170, 140, 250),
		"white print on black":      invert(page),
		"a dark edge of a few rows": onSurround(page, 500, 1110, 0, 10, 20),
	} {
		if got := cropToPaper(g); got != g {
			t.Errorf("%s: cut to %v of %v", name, got.Rect, g.Rect)
		}
	}
}

func darken(g *image.Gray, by uint8) *image.Gray {
	out := image.NewGray(g.Rect)
	for i, v := range g.Pix {
		out.Pix[i] = v - min(v, by)
	}
	return out
}

func invert(g *image.Gray) *image.Gray {
	out := image.NewGray(g.Rect)
	for i, v := range g.Pix {
		out.Pix[i] = 255 - v
	}
	return out
}
