// Package ocrtest makes images of text for tests: a printed page, and the
// photo a phone takes of it (turned a little, dim, noisy, and, if asked,
// unevenly lit and seen at a slant).
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

// Sans are the faces pages are drawn in by default, the first found: the
// shapes invoices are printed in (Arial's metrics, an unslashed zero), else
// Go's own, which every machine has but whose slashed zero OCR reads as 8
// now and then.
var Sans = []string{
	"/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
	"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
}

// Serif are faces with serifs, as letters of lawyers and authorities are
// printed in; Go's own sans face where none is installed.
var Serif = []string{
	"/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
	"/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
}

// Page draws lines of black text at size pixels (capitals about 0.7 of
// it) on a white page w pixels wide; h 0 fits the lines.
func Page(w, h int, size float64, lines []string) *image.Gray {
	return PageIn(Sans, w, h, size, lines)
}

// PageIn draws lines as Page does, in the first of faces found. On a page
// of a given height (h > 0) the type is made smaller where the lines would
// not fit the page, as a document is laid out to fit its paper.
func PageIn(faces []string, w, h int, size float64, lines []string) *image.Gray {
	ttf := goregular.TTF
	for _, path := range faces {
		if b, err := os.ReadFile(path); err == nil {
			ttf = b
			break
		}
	}
	f, err := opentype.Parse(ttf)
	if err != nil {
		panic(err)
	}
	newFace := func(size float64) font.Face {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			panic(err)
		}
		return face
	}
	face := newFace(size)
	if h > 0 {
		widest := 0
		for _, line := range lines {
			widest = max(widest, font.MeasureString(face, line).Ceil())
		}
		fit := min(float64(w)/(float64(widest)+4*size), float64(h-200)/(1.45*size*float64(len(lines))))
		if fit < 1 {
			size *= fit
			face = newFace(size)
		}
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
	return Shot{Degrees: degrees, Lo: lo, Hi: hi, Sigma: sigma, Seed: seed}.Take(g)
}

// Shot is how a phone photographs a page.
type Shot struct {
	// Degrees turns the page about its middle.
	Degrees float64
	// Lo and Hi are the levels black and white come out at.
	Lo, Hi uint8
	// Sigma is the standard deviation of the Gaussian noise added.
	Sigma float64
	// Seed draws the noise.
	Seed uint64
	// Shade darkens the page from one corner to the other, as a lamp
	// beside it or the phone's own shadow do: the far corner's white is at
	// Hi, the near one's at (1-Shade) x Hi.
	Shade float64
	// Keystone is the slant of a photo taken from below the page's
	// middle: its top edge is narrower than its bottom by this fraction
	// of the width.
	Keystone float64
}

// Take is g photographed.
func (s Shot) Take(g *image.Gray) *image.Gray {
	b := g.Bounds()
	w, h := float64(b.Dx()), float64(b.Dy())
	out := image.NewGray(b)
	sin, cos := math.Sincos(s.Degrees * math.Pi / 180)
	cx, cy := w/2, h/2
	r := rand.New(rand.NewPCG(s.Seed, 7))
	for y := range b.Dy() {
		for x := range b.Dx() {
			// The source pixel that lands here: the slant undone (the
			// rows near the top are spread wider), then turned back.
			fx, fy := float64(x), float64(y)
			if s.Keystone != 0 {
				scale := 1 - s.Keystone*(1-fy/h)
				fx = cx + (fx-cx)/scale
			}
			dx, dy := fx-cx, fy-cy
			sx, sy := int(cos*dx+sin*dy+cx), int(-sin*dx+cos*dy+cy)
			v := 255.0
			if sx >= 0 && sy >= 0 && sx < b.Dx() && sy < b.Dy() {
				v = float64(g.Pix[sy*g.Stride+sx])
			}
			white := float64(s.Hi)
			if s.Shade != 0 {
				white *= 1 - s.Shade*(1-(float64(x)/w+float64(y)/h)/2)
			}
			v = float64(s.Lo) + v*(white-float64(s.Lo))/255 + r.NormFloat64()*s.Sigma
			out.Pix[y*out.Stride+x] = uint8(math.Max(0, math.Min(255, v)))
		}
	}
	return out
}
