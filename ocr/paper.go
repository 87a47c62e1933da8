package ocr

import "image"

// cropToPaper cuts away what surrounds the paper in a photo: the dark
// table a receipt lies on, the hand that holds it. Tesseract reads such a
// surround as lines of specks, and a till slip read as one block of text
// loses its lines among them. The paper spans the columns from the first
// to the last mostly brighter than Otsu's split of the page, and within
// them the rows alike; a scan, all paper, is returned as it is.
func cropToPaper(g *image.Gray) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	small := scaleDown(g, paperPixels)
	sw, sh := small.Rect.Dx(), small.Rect.Dy()
	if sw < 16 || sh < 16 {
		return g
	}
	t := otsu(small)
	cols := make([]float64, sw)
	var sum [2]int
	var n [2]int
	for y := range sh {
		for x, v := range small.Pix[y*small.Stride : y*small.Stride+sw] {
			k := 0
			if v >= t {
				cols[x]++
				k = 1
			}
			sum[k] += int(v)
			n[k]++
		}
	}
	if n[0] == 0 || n[1] == 0 {
		return g
	}
	if dark, light := sum[0]/n[0], sum[1]/n[1]; dark > maxSurround || light-dark < minPaperContrast {
		// What lies below the split is no dark surround: a light table
		// under light paper, or the ink of a scan.
		return g
	}
	for x := range cols {
		cols[x] /= float64(sh)
	}
	x0, x1 := paperBand(cols)
	if x1-x0 < sw/4 {
		return g
	}
	rows := make([]float64, sh)
	for y := range sh {
		for _, v := range small.Pix[y*small.Stride+x0 : y*small.Stride+x1] {
			if v >= t {
				rows[y]++
			}
		}
		rows[y] /= float64(x1 - x0)
	}
	y0, y1 := paperBand(rows)
	if y1-y0 < sh/4 || (x1-x0)*(y1-y0) < sw*sh/minPaperShare {
		// Too little paper found: dark print, not a dark surround.
		return g
	}
	cut := func(lo, hi, n int) bool { return lo*surround >= n || (n-hi)*surround >= n }
	if !cut(x0, x1, sw) && !cut(y0, y1, sh) {
		return g
	}
	// Back to g's pixels, a margin outwards so that no letter at the
	// paper's edge is cut.
	fx, fy := float64(w)/float64(sw), float64(h)/float64(sh)
	mx, my := w/paperMargin, h/paperMargin
	r := image.Rect(max(int(float64(x0)*fx)-mx, 0), max(int(float64(y0)*fy)-my, 0),
		min(int(float64(x1)*fx)+mx, w), min(int(float64(y1)*fy)+my, h))
	out := image.NewGray(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := range r.Dy() {
		src := (r.Min.Y+y)*g.Stride + r.Min.X
		copy(out.Pix[y*out.Stride:y*out.Stride+r.Dx()], g.Pix[src:src+r.Dx()])
	}
	return out
}

// paperBand is the span from the first to the last entry of share at
// least one half: the columns (or rows) where paper is most of what is
// seen. What is cut lies at the edges; a dark band within the paper (a
// bar of print, a fold's shadow) is kept.
func paperBand(share []float64) (lo, hi int) {
	lo, hi = 0, len(share)
	for lo < hi && share[lo] < 0.5 {
		lo++
	}
	for hi > lo && share[hi-1] < 0.5 {
		hi--
	}
	return lo, hi
}

const (
	// paperPixels is the size of the copy the paper is looked for on.
	paperPixels = 1 << 18
	// surround is the share of a side (one in surround) that must lie
	// outside the paper for the page to be cut: a scan's dark edge of a
	// few pixels is left alone.
	surround = 30
	// minPaperShare: paper must cover at least one in minPaperShare of
	// the image to be taken for it.
	minPaperShare = 5
	// maxSurround is the brightest mean level a surround is cut at, and
	// minPaperContrast how much brighter the paper must be: a receipt on
	// a white sheet is not cut to its gray paper.
	maxSurround, minPaperContrast = 110, 80
	// paperMargin: the cut keeps one in paperMargin of each side beyond
	// the paper.
	paperMargin = 100
)
