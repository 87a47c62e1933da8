package ocr

import (
	"image"
	"math"
	"slices"
)

// prepare makes g look like a scan of some 300 dpi: scaled into the pixel
// budget, cut to its paper, smoothed where noisy, its lighting evened and its contrast
// stretched (flatten), and, unless noise drowns its letters, scaled so
// that they are some glyphTarget pixels high.
func prepare(g *image.Gray, maxPixels int) *image.Gray {
	g = cropToPaper(scaleDown(g, maxPixels))
	// Each pass divides Gaussian noise by about three.
	for range min(noiseLevel(g)/noisy, 2) {
		g = blur3(g)
	}
	clarity := flatten(g)
	w, h := g.Rect.Dx(), g.Rect.Dy()
	s := 0.0
	if clarity >= minClarity {
		s = glyphSize(g)
	}
	if s == 0 {
		// Too few letters to measure: a small image is doubled.
		if max(w, h) < 1500 && 4*w*h <= maxPixels {
			g = upscale2(g)
		}
		return g
	}
	f := min(glyphTarget/s, maxEnlarge)
	if budget := float64(min(maxPixels, maxEnlarged)); f > 1 && f*f*float64(w*h) > budget {
		f = max(math.Sqrt(budget/float64(w*h)), 1)
	}
	// Near the target, scaling costs time and sharpness for nothing.
	if f > 1.15 || f < 0.7 {
		g = resize(g, max(int(float64(w)*f), 1), max(int(float64(h)*f), 1))
	}
	return g
}

const (
	// glyphTarget is the size, in pixels, that prepare scales letters to
	// (as glyphSize measures them): x-heights of some 22 pixels, where
	// Tesseract reads best. 22 read 8-point type at 150 dpi worse (3 of
	// 12 document numbers lost), 34 read no better and took 15% longer.
	glyphTarget = 28
	// glyphPixels is the largest image whose letters glyphSize measures
	// as they are; a larger one is measured on a copy this size.
	glyphPixels = 6_000_000
	// minClarity is the clarity (see flatten) under which letters are
	// not measured nor the page enlarged: in that much noise the shapes
	// measured are specks, and an enlarged page only takes tesseract
	// longer to find nothing. A dim photo is at some 20, a page under
	// noise of 90 levels at 9.
	minClarity = 12
	// maxEnlarged bounds the pixels of an enlarged page: an A4 page at
	// some 450 dpi, more than letters of 28 pixels need, and a time and
	// memory tesseract keeps within its limits.
	maxEnlarged = 20_000_000
	// maxEnlarge bounds the enlarging: a photo whose letters are smaller
	// than a third of the target has too little detail to make up.
	maxEnlarge = 3
)

// flatten evens a photo's lighting and gives it a scan's contrast, in
// place: each pixel is divided by the brightness of the paper around it
// (the 90th percentile of its block, the blocks some 1/32 of the page
// across, interpolated between their middles), so that a shadow or a lamp's
// falloff leaves the paper white; then the ink, as Otsu's threshold tells it
// from the paper, is stretched to black. The stretch is measured on the ink
// itself, not on a percentile of the page, which on a sparse page (a
// letterhead and an address) lies in the paper's noise. clarity is the
// ink's distance from the paper in the paper's noise (its median distance
// from its median): some 20 and more on a photo of a page, a few where
// noise drowns the letters; 0 on a blank page.
func flatten(g *image.Gray) (clarity float64) {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	if w < 16 || h < 16 {
		stretch(g)
		return 0
	}
	bs := max(max(w, h)/32, 8)
	gw, gh := (w+bs-1)/bs, (h+bs-1)/bs
	bg := make([]float64, gw*gh)
	var hist [256]int
	for by := range gh {
		for bx := range gw {
			clear(hist[:])
			n := 0
			for y := by * bs; y < min((by+1)*bs, h); y++ {
				for _, v := range g.Pix[y*g.Stride+bx*bs : y*g.Stride+min((bx+1)*bs, w)] {
					hist[v]++
					n++
				}
			}
			bg[by*gw+bx] = float64(percentile(&hist, n*9/10))
		}
	}
	// A block all ink (a heading in bold, a black bar) has no paper: it
	// takes the brightest of its neighbours.
	src := slices.Clone(bg)
	for by := range gh {
		for bx := range gw {
			m := src[by*gw+bx]
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if x, y := bx+dx, by+dy; x >= 0 && y >= 0 && x < gw && y < gh {
						m = max(m, src[y*gw+x])
					}
				}
			}
			bg[by*gw+bx] = max(m-12, src[by*gw+bx])
		}
	}
	row := make([]float64, w)
	for y := range h {
		fy := min(max((float64(y)+0.5)/float64(bs)-0.5, 0), float64(gh-1))
		y0 := int(fy)
		y1, ay := min(y0+1, gh-1), fy-float64(y0)
		for x := range w {
			fx := min(max((float64(x)+0.5)/float64(bs)-0.5, 0), float64(gw-1))
			x0 := int(fx)
			x1, ax := min(x0+1, gw-1), fx-float64(x0)
			top := bg[y0*gw+x0]*(1-ax) + bg[y0*gw+x1]*ax
			bot := bg[y1*gw+x0]*(1-ax) + bg[y1*gw+x1]*ax
			row[x] = max(top*(1-ay)+bot*ay, 1)
		}
		p := g.Pix[y*g.Stride : y*g.Stride+w]
		for x, v := range p {
			p[x] = uint8(min(float64(v)*255/row[x], 255))
		}
	}
	// The paper's level and noise: the median, and the median distance
	// from it, of the whole page, which is mostly paper. Ink is what lies
	// well below the paper's noise; its median is stretched to black.
	// (Otsu's threshold would split the paper's noise on a page with
	// little ink.)
	clear(hist[:])
	for _, v := range g.Pix {
		hist[v]++
	}
	n := len(g.Pix)
	hi := percentile(&hist, n/2)
	var dev [256]int
	for v, c := range hist {
		dev[max(v-hi, hi-v)] += c
	}
	spread := percentile(&dev, n/2)
	t := hi - max(6*spread, 40)
	var ink [256]int
	ni := 0
	for v := range max(t, 0) {
		ink[v] = hist[v]
		ni += hist[v]
	}
	if ni == 0 {
		return 0 // no ink that stands out: a blank page
	}
	lo := percentile(&ink, ni/2)
	var lut [256]uint8
	for v := range lut {
		s := (v - lo) * 255 / (hi - lo)
		lut[v] = uint8(min(max(s, 0), 255))
	}
	for i, v := range g.Pix {
		g.Pix[i] = lut[v]
	}
	return float64(hi-lo) / float64(max(spread, 1))
}

// glyphSize estimates the size of g's letters in pixels, g flattened: the
// median of the larger side of its dark connected shapes, which
// for text in any quarter turn lies between its x-height and its
// capitals' height. 0 when there are too few shapes to tell.
func glyphSize(g *image.Gray) float64 {
	if w, h := g.Rect.Dx(), g.Rect.Dy(); w*h > glyphPixels {
		// A large photo's letters are large: measured on a smaller copy,
		// in bounded time and memory.
		small := scaleDown(g, glyphPixels)
		return glyphSize(small) * float64(w) / float64(small.Rect.Dx())
	}
	w, h := g.Rect.Dx(), g.Rect.Dy()
	const t = 128 // flatten made the ink black and the paper white
	// Union-find over runs of dark pixels, row by row.
	parent := []int32{}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	type box struct{ x0, y0, x1, y1, n int32 }
	prev := make([]int32, w)
	cur := make([]int32, w)
	for i := range prev {
		prev[i] = -1
	}
	var boxes []box
	for y := range h {
		p := g.Pix[y*g.Stride : y*g.Stride+w]
		for x, v := range p {
			cur[x] = -1
			if v >= t {
				continue
			}
			id := int32(-1)
			if x > 0 && cur[x-1] >= 0 {
				id = find(cur[x-1])
			}
			for dx := -1; dx <= 1; dx++ {
				if xx := x + dx; xx >= 0 && xx < w && prev[xx] >= 0 {
					r := find(prev[xx])
					if id < 0 {
						id = r
					} else if r != id {
						parent[r] = id
						b, a := &boxes[id], boxes[r]
						b.x0, b.y0, b.x1, b.y1, b.n = min(b.x0, a.x0), min(b.y0, a.y0), max(b.x1, a.x1), max(b.y1, a.y1), b.n+a.n
					}
				}
			}
			if id < 0 {
				id = int32(len(parent))
				parent = append(parent, id)
				boxes = append(boxes, box{int32(x), int32(y), int32(x), int32(y), 0})
				if len(parent) > 1_000_000 {
					return 0 // noise, not text
				}
			}
			b := &boxes[id]
			b.x0, b.y0, b.x1, b.y1, b.n = min(b.x0, int32(x)), min(b.y0, int32(y)), max(b.x1, int32(x)), max(b.y1, int32(y)), b.n+1
			cur[x] = id
		}
		prev, cur = cur, prev
	}
	var sizes []int
	for i := range parent {
		if find(int32(i)) != int32(i) {
			continue
		}
		b := boxes[i]
		bw, bh := int(b.x1-b.x0+1), int(b.y1-b.y0+1)
		s := max(bw, bh)
		// Specks, and rules and frames, are no letters.
		if s < 5 || b.n < 8 || s > max(w, h)/12 || bw > 6*bh || bh > 6*bw {
			continue
		}
		sizes = append(sizes, s)
	}
	if len(sizes) < 40 {
		return 0
	}
	slices.Sort(sizes)
	return float64(sizes[len(sizes)/2])
}

// resize scales g to nw x nh: by averaging areas when it shrinks, by
// bilinear interpolation when it grows.
func resize(g *image.Gray, nw, nh int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	if nw <= w && nh <= h {
		return resizeArea(g, nw, nh)
	}
	out := image.NewGray(image.Rect(0, 0, nw, nh))
	sx, sy := float64(w)/float64(nw), float64(h)/float64(nh)
	for y := range nh {
		fy := (float64(y)+0.5)*sy - 0.5
		o := out.Pix[y*out.Stride : y*out.Stride+nw]
		for x := range nw {
			o[x] = bilinear(g, (float64(x)+0.5)*sx-0.5, fy)
		}
	}
	return out
}
