package ocr

import (
	"image"
	"math"
)

// maxSkew is the largest skew, in degrees, that deskewing looks for: a
// phone photo of a page is rarely off by more, and a larger search would
// find the diagonals of tables instead.
const maxSkew = 10

// estimateSkew returns the angle in degrees of g's text lines (positive
// when they fall to the right, image y pointing down), or 0 when none
// stands out. It binarises a copy of at most about 1 megapixel and projects
// its dark pixels onto the vertical at each candidate angle: at the lines'
// angle the projection is sharpest, rows of text against empty rows, so its
// sum of squares is largest.
func estimateSkew(g *image.Gray) float64 {
	small := scaleDown(g, 1<<20)
	w, h := small.Rect.Dx(), small.Rect.Dy()
	t := otsu(small)
	var xs, ys []float64
	step := 1
	// At most some 200,000 points: the estimate needs no more.
	for dark := countBelow(small, t); dark/(step*step) > 200_000; step++ {
	}
	for y := 0; y < h; y += step {
		row := small.Pix[y*small.Stride : y*small.Stride+w]
		for x := 0; x < w; x += step {
			if row[x] < t {
				xs = append(xs, float64(x-w/2))
				ys = append(ys, float64(y-h/2))
			}
		}
	}
	// Too few dark pixels, or too many (a dark photo), tell no lines.
	if n := len(xs); n < 200 || n*step*step > w*h/2 {
		return 0
	}
	bins := make([]float64, w+h+2)
	score := func(deg float64) float64 {
		clear(bins)
		s, c := math.Sincos(deg * math.Pi / 180)
		off := float64(w+h) / 2
		for i := range xs {
			bins[int(ys[i]*c-xs[i]*s+off)]++
		}
		var sum float64
		for _, b := range bins {
			sum += b * b
		}
		return sum
	}
	best, bestScore := 0.0, score(0)
	base := bestScore
	for deg := -maxSkew; deg <= maxSkew; deg++ {
		for _, d := range []float64{float64(deg), float64(deg) + 0.5} {
			if d > maxSkew {
				continue
			}
			if s := score(d); s > bestScore {
				best, bestScore = d, s
			}
		}
	}
	coarse := best
	for d := coarse - 0.4; d <= coarse+0.4; d += 0.1 {
		if s := score(d); s > bestScore {
			best, bestScore = d, s
		}
	}
	// A flat profile at every angle (a photo, no text) must not turn the page.
	if bestScore < base*1.02 {
		return 0
	}
	return math.Round(best*10) / 10
}

func countBelow(g *image.Gray, t uint8) int {
	n := 0
	for _, v := range g.Pix {
		if v < t {
			n++
		}
	}
	return n
}

// otsu returns the threshold that best splits g's histogram into two
// classes, ink and paper.
func otsu(g *image.Gray) uint8 {
	var hist [256]float64
	for _, v := range g.Pix {
		hist[v]++
	}
	total := float64(len(g.Pix))
	var sumAll float64
	for v, n := range hist {
		sumAll += float64(v) * n
	}
	var wB, sumB, bestVar float64
	best := 128
	for v, n := range hist {
		wB += n
		if wB == 0 {
			continue
		}
		wF := total - wB
		if wF == 0 {
			break
		}
		sumB += float64(v) * n
		mB, mF := sumB/wB, (sumAll-sumB)/wF
		if bv := wB * wF * (mB - mF) * (mB - mF); bv > bestVar {
			bestVar, best = bv, v
		}
	}
	return uint8(best + 1)
}

// rotateSmall turns g so that lines at deg (as estimateSkew measures)
// become level. The canvas grows to keep the corners, filled with white.
func rotateSmall(g *image.Gray, deg float64) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	s, c := math.Sincos(deg * math.Pi / 180)
	nw := int(math.Ceil(float64(w)*math.Abs(c) + float64(h)*math.Abs(s)))
	nh := int(math.Ceil(float64(w)*math.Abs(s) + float64(h)*math.Abs(c)))
	out := image.NewGray(image.Rect(0, 0, nw, nh))
	cx, cy := float64(w)/2, float64(h)/2
	ncx, ncy := float64(nw)/2, float64(nh)/2
	for y := range nh {
		dy := float64(y) + 0.5 - ncy
		o := out.Pix[y*out.Stride : y*out.Stride+nw]
		for x := range nw {
			dx := float64(x) + 0.5 - ncx
			// The source point: the destination turned back by deg.
			sx := dx*c - dy*s + cx - 0.5
			sy := dx*s + dy*c + cy - 0.5
			if sx < -0.5 || sy < -0.5 || sx > float64(w)-0.5 || sy > float64(h)-0.5 {
				o[x] = 255
				continue
			}
			o[x] = bilinear(g, sx, sy)
		}
	}
	return out
}
