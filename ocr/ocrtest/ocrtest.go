// Package ocrtest makes images of text for tests: a printed page, and the
// photo a phone takes of it (turned a little, dim, noisy).
package ocrtest

import (
	"image"
	"image/draw"
	"math"
	"math/rand/v2"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// fonts are the faces pages are drawn in, the first found: the shapes
// invoices are printed in (Arial's metrics, an unslashed zero), else Go's
// own, which every machine has but whose slashed zero OCR reads as 8 now
// and then.
var fonts = []string{
	"/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
	"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}

// Page draws lines of black text at size pixels (capitals about 0.7 of
// it) on a white page w pixels wide; h 0 fits the lines.
func Page(w, h int, size float64, lines []string) *image.Gray {
	ttf := goregular.TTF
	for _, path := range fonts {
		if b, err := os.ReadFile(path); err == nil {
			ttf = b
			break
		}
	}
	f, err := opentype.Parse(ttf)
	if err != nil {
		panic(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(err)
	}
	lineHeight := int(size * 1.45)
	if h == 0 {
		h = 120 + lineHeight*len(lines) + 80
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.Black, Face: face}
	for i, line := range lines {
		d.Dot = fixed.P(int(size*2), 120+lineHeight*i)
		d.DrawString(line)
	}
	return img
}

// Photo is g as a phone photographs it: turned by degrees about its
// middle, its black at lo and its white at hi, with Gaussian noise of
// standard deviation sigma, drawn from seed.
func Photo(g *image.Gray, degrees float64, lo, hi uint8, sigma float64, seed uint64) *image.Gray {
	b := g.Bounds()
	out := image.NewGray(b)
	sin, cos := math.Sincos(degrees * math.Pi / 180)
	cx, cy := float64(b.Dx())/2, float64(b.Dy())/2
	r := rand.New(rand.NewPCG(seed, 7))
	for y := range b.Dy() {
		for x := range b.Dx() {
			// The source pixel that lands here, turned back.
			dx, dy := float64(x)-cx, float64(y)-cy
			sx, sy := int(cos*dx+sin*dy+cx), int(-sin*dx+cos*dy+cy)
			v := 255.0
			if sx >= 0 && sy >= 0 && sx < b.Dx() && sy < b.Dy() {
				v = float64(g.Pix[sy*g.Stride+sx])
			}
			v = float64(lo) + v*float64(hi-lo)/255 + r.NormFloat64()*sigma
			out.Pix[y*out.Stride+x] = uint8(math.Max(0, math.Min(255, v)))
		}
	}
	return out
}
