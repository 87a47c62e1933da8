package ocr

import (
	"encoding/binary"
	"image"
	"math"
)

// toGray copies img into a new gray image, transparent parts on white (a
// scan with an alpha channel would otherwise turn black). The caller's image
// is never changed.
func toGray(img image.Image) *image.Gray {
	b := img.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	w, h := b.Dx(), b.Dy()
	switch src := img.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			copy(g.Pix[y*g.Stride:y*g.Stride+w], src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):])
		}
	case *image.YCbCr:
		// The luma plane is the gray image already.
		for y := 0; y < h; y++ {
			copy(g.Pix[y*g.Stride:y*g.Stride+w], src.Y[src.YOffset(b.Min.X, b.Min.Y+y):])
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			out := g.Pix[y*g.Stride:]
			for x := 0; x < w; x++ {
				p := row[4*x : 4*x+4 : 4*x+4]
				// Premultiplied: add the white that shows through.
				out[x] = luma(p[0], p[1], p[2]) + 255 - p[3]
			}
		}
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			row := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+y):]
			out := g.Pix[y*g.Stride:]
			for x := 0; x < w; x++ {
				p := row[4*x : 4*x+4 : 4*x+4]
				a := uint32(p[3])
				out[x] = uint8((uint32(luma(p[0], p[1], p[2]))*a + 255*(255-a)) / 255)
			}
		}
	default:
		for y := 0; y < h; y++ {
			out := g.Pix[y*g.Stride:]
			for x := 0; x < w; x++ {
				r, gg, bb, a := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				white := 0xffff - a
				out[x] = luma(uint8((r+white)>>8), uint8((gg+white)>>8), uint8((bb+white)>>8))
			}
		}
	}
	return g
}

func luma(r, g, b uint8) uint8 {
	return uint8((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}

// scaleDown shrinks g by averaging areas so that it has at most maxPixels
// pixels; a smaller image is returned as it is.
func scaleDown(g *image.Gray, maxPixels int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	if w*h <= maxPixels {
		return g
	}
	f := math.Sqrt(float64(maxPixels) / float64(w*h))
	nw, nh := max(1, int(float64(w)*f)), max(1, int(float64(h)*f))
	return resizeArea(g, nw, nh)
}

// resizeArea averages each destination pixel's source rectangle.
func resizeArea(g *image.Gray, nw, nh int) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	out := image.NewGray(image.Rect(0, 0, nw, nh))
	col := make([]int, w) // destination column of each source column
	for x := range w {
		col[x] = x * nw / w
	}
	perCol := make([]uint32, nw)
	for x := range w {
		perCol[col[x]]++
	}
	sum := make([]uint32, nw)
	sy := 0
	for dy := range nh {
		clear(sum)
		y1 := (dy + 1) * h / nh
		rows := uint32(y1 - sy)
		for ; sy < y1; sy++ {
			row := g.Pix[sy*g.Stride : sy*g.Stride+w]
			for x, v := range row {
				sum[col[x]] += uint32(v)
			}
		}
		o := out.Pix[dy*out.Stride:]
		for dx := range nw {
			if n := perCol[dx] * rows; n > 0 {
				o[dx] = uint8(sum[dx] / n)
			}
		}
	}
	return out
}

// upscale2 doubles g's size with bilinear interpolation: Tesseract reads
// text best with glyphs some 20-40 pixels high, which a small photo lacks.
func upscale2(g *image.Gray) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	out := image.NewGray(image.Rect(0, 0, 2*w, 2*h))
	for y := range 2 * h {
		fy := (float64(y)+0.5)/2 - 0.5
		for x := range 2 * w {
			fx := (float64(x)+0.5)/2 - 0.5
			out.Pix[y*out.Stride+x] = bilinear(g, fx, fy)
		}
	}
	return out
}

// bilinear samples g at (fx, fy), clamped to its edges.
func bilinear(g *image.Gray, fx, fy float64) uint8 {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	fx = min(max(fx, 0), float64(w-1))
	fy = min(max(fy, 0), float64(h-1))
	x0, y0 := int(fx), int(fy)
	x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
	ax, ay := fx-float64(x0), fy-float64(y0)
	p := g.Pix
	s := g.Stride
	top := float64(p[y0*s+x0])*(1-ax) + float64(p[y0*s+x1])*ax
	bot := float64(p[y1*s+x0])*(1-ax) + float64(p[y1*s+x1])*ax
	return uint8(top*(1-ay) + bot*ay + 0.5)
}

// stretch maps the 1st percentile of g's brightness to black and the 99th
// to white, in place: a dim or grey photo gets the contrast of a scan, and a
// few specks of pure black or white do not stop it.
func stretch(g *image.Gray) {
	var hist [256]int
	for _, v := range g.Pix {
		hist[v]++
	}
	n := len(g.Pix)
	lo, hi := percentile(&hist, n/100), percentile(&hist, n-n/100-1)
	if hi-lo < 8 {
		return // a blank page: stretching would only amplify noise
	}
	var lut [256]uint8
	for v := range lut {
		s := (v - lo) * 255 / (hi - lo)
		lut[v] = uint8(min(max(s, 0), 255))
	}
	for i, v := range g.Pix {
		g.Pix[i] = lut[v]
	}
}

// percentile returns the value below which fewer than k+1 pixels lie.
func percentile(hist *[256]int, k int) int {
	c := 0
	for v, n := range hist {
		c += n
		if c > k {
			return v
		}
	}
	return 255
}

// rotate90 turns g clockwise by deg, a multiple of 90.
func rotate90(g *image.Gray, deg int) *image.Gray {
	deg = ((deg % 360) + 360) % 360
	if deg == 0 {
		return g
	}
	w, h := g.Rect.Dx(), g.Rect.Dy()
	var out *image.Gray
	if deg == 180 {
		out = image.NewGray(image.Rect(0, 0, w, h))
	} else {
		out = image.NewGray(image.Rect(0, 0, h, w))
	}
	for y := range h {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		for x, v := range row {
			switch deg {
			case 90:
				out.Pix[x*out.Stride+h-1-y] = v
			case 180:
				out.Pix[(h-1-y)*out.Stride+w-1-x] = v
			case 270:
				out.Pix[(w-1-x)*out.Stride+y] = v
			}
		}
	}
	return out
}

// orientEXIF applies a JPEG's EXIF orientation (1-8), so that g looks as
// the camera showed it.
func orientEXIF(g *image.Gray, o int) *image.Gray {
	switch o {
	case 3:
		return rotate90(g, 180)
	case 6:
		return rotate90(g, 90)
	case 8:
		return rotate90(g, 270)
	case 2, 4, 5, 7:
		// Mirrored: flip horizontally first, then turn.
		w, h := g.Rect.Dx(), g.Rect.Dy()
		f := image.NewGray(g.Rect)
		for y := range h {
			for x := range w {
				f.Pix[y*f.Stride+w-1-x] = g.Pix[y*g.Stride+x]
			}
		}
		return rotate90(f, map[int]int{2: 0, 4: 180, 5: 270, 7: 90}[o])
	}
	return g
}

// exifOrientation returns the orientation tag of a JPEG's EXIF block, 1
// when there is none or it cannot be read.
func exifOrientation(data []byte) int {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return 1
	}
	i := 2
	for i+4 <= len(data) && data[i] == 0xFF {
		marker := data[i+1]
		size := int(binary.BigEndian.Uint16(data[i+2:]))
		if marker == 0xDA || size < 2 || i+2+size > len(data) {
			break // the image data starts: no EXIF after it
		}
		seg := data[i+4 : i+2+size]
		if marker == 0xE1 && len(seg) > 14 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		i += 2 + size
	}
	return 1
}

func tiffOrientation(t []byte) int {
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	n := int(bo.Uint16(t[off:]))
	for k := range n {
		e := off + 2 + 12*k
		if e+12 > len(t) {
			break
		}
		if bo.Uint16(t[e:]) == 0x0112 {
			if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
				return o
			}
			return 1
		}
	}
	return 1
}

// noiseLevel estimates g's pixel noise: the median difference between
// horizontal neighbours, 0 on a clean scan, where most neighbours are
// equal paper.
func noiseLevel(g *image.Gray) int {
	var hist [256]int
	w, h := g.Rect.Dx(), g.Rect.Dy()
	n := 0
	for y := 0; y < h; y += 4 {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		for x := 1; x < w; x += 2 {
			d := int(row[x]) - int(row[x-1])
			hist[max(d, -d)]++
			n++
		}
	}
	return percentile(&hist, n/2)
}

// blur3 averages each pixel with its eight neighbours: noise that would
// make Tesseract see specks as letters (and spend seconds on them) fades,
// while glyphs some 20 pixels and more high keep their shape.
func blur3(g *image.Gray) *image.Gray {
	w, h := g.Rect.Dx(), g.Rect.Dy()
	tmp := make([]uint16, w*h)
	for y := range h {
		row := g.Pix[y*g.Stride : y*g.Stride+w]
		for x := range w {
			tmp[y*w+x] = uint16(row[max(x-1, 0)]) + uint16(row[x]) + uint16(row[min(x+1, w-1)])
		}
	}
	out := image.NewGray(g.Rect)
	for y := range h {
		up, down := tmp[max(y-1, 0)*w:], tmp[min(y+1, h-1)*w:]
		mid := tmp[y*w:]
		o := out.Pix[y*out.Stride:]
		for x := range w {
			o[x] = uint8((up[x] + mid[x] + down[x] + 4) / 9)
		}
	}
	return out
}
