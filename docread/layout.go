package docread

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// A page's text is laid out as it is printed, as far as plain text can:
// one line of text per printed line, top to bottom, each character at the
// column its position on the page gives it, so that the gap between a label
// and its value, or between two columns of a table, stays a gap of spaces.
// PDFium's own text keeps the order of the content stream and one space for
// any gap, which loses the columns the field reader relies on.

// glyph is one character of a page with its box, in points (y grows up).
// spaced says that PDFium put a space (or a line break) before it: the boxes
// are the ink's, too tight to tell a word's gap from a narrow letter's.
type glyph struct {
	text                     string
	left, right, top, bottom float64
	spaced                   bool
}

// layout lays glyphs, in the content stream's order, out as text; a blank
// line stands for a vertical gap of about two lines or more.
func layout(glyphs []glyph) string {
	// Runs: the glyphs between two of PDFium's line breaks, in the
	// content's order. Runs that sit on one baseline are one printed line,
	// whatever the order the content drew them in (two columns drawn one
	// after the other).
	var runs []*run
	var cur *run
	spaced := false
	for _, g := range glyphs {
		if strings.ContainsAny(g.text, "\r\n") {
			cur = nil
			continue
		}
		if strings.TrimFunc(g.text, unicode.IsSpace) == "" {
			spaced = true
			continue
		}
		if g.right < g.left || g.top < g.bottom {
			continue
		}
		g.spaced, spaced = spaced, false
		if cur == nil {
			cur = &run{}
			runs = append(runs, cur)
		}
		cur.glyphs = append(cur.glyphs, g)
	}
	if len(runs) == 0 {
		return ""
	}
	var heights []float64
	for _, r := range runs {
		var bottoms []float64
		for _, g := range r.glyphs {
			bottoms = append(bottoms, g.bottom)
			heights = append(heights, g.top-g.bottom)
		}
		r.baseline = median(bottoms)
	}
	height := max(median(heights), 1)
	slices.SortStableFunc(runs, func(a, b *run) int { return cmpFloat(b.baseline, a.baseline) })
	var lines []*run
	for _, r := range runs {
		if n := len(lines); n > 0 && lines[n-1].baseline-r.baseline <= height/3 {
			lines[n-1].glyphs = append(lines[n-1].glyphs, r.glyphs...)
			continue
		}
		lines = append(lines, r)
	}

	// A column is a typical character's advance: the step from one
	// character to the next within a word.
	var advances []float64
	margin := math.Inf(1)
	for _, line := range lines {
		slices.SortStableFunc(line.glyphs, func(a, b glyph) int { return cmpFloat(a.left, b.left) })
		for j := 1; j < len(line.glyphs); j++ {
			g := line.glyphs[j]
			if step := g.left - line.glyphs[j-1].left; !g.spaced && step > 0.2*height && step < 1.2*height {
				advances = append(advances, step)
			}
		}
		margin = min(margin, line.glyphs[0].left)
	}
	unit := max(median(advances), height/2)
	var spacing []float64
	for i := 1; i < len(lines); i++ {
		spacing = append(spacing, lines[i-1].baseline-lines[i].baseline)
	}
	lineSpacing := max(median(spacing), height)

	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
			if lines[i-1].baseline-line.baseline > 1.8*lineSpacing {
				b.WriteByte('\n')
			}
		}
		col, right := 0, margin
		for _, g := range line.glyphs {
			// A gap of two columns or more puts the glyph at its column, so
			// that columns line up from line to line; a smaller one is a
			// space between words where PDFium saw one.
			switch gap := g.left - right; {
			case gap >= 1.8*unit:
				target := int(math.Round((g.left - margin) / unit))
				b.WriteString(strings.Repeat(" ", max(target-col, 2)))
				col = max(target, col+2)
			case col > 0 && (g.spaced || gap > unit):
				b.WriteByte(' ')
				col++
			}
			b.WriteString(g.text)
			col += len([]rune(g.text))
			right = max(right, g.right)
		}
	}
	return b.String()
}

// run is glyphs printed on one line, and the line's baseline.
type run struct {
	glyphs   []glyph
	baseline float64
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// median is the middle of values; 0 for none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return s[len(s)/2]
}
