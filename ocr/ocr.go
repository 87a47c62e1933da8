package ocr

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Options are the engine's limits and languages; a zero field takes its
// default.
type Options struct {
	// Path is the tesseract program: a path, or a name looked up on PATH.
	// "" looks up "tesseract".
	Path string
	// Languages are Tesseract's language codes joined by "+", all of them
	// tried on every page; "deu+eng" by default.
	Languages string
	// Timeout bounds the reading of one page, every run of tesseract for
	// it included; 60s by default.
	Timeout time.Duration
	// MaxMemory is the address-space limit of each tesseract child in
	// bytes; 1 GiB by default.
	MaxMemory uint64
	// MaxPixels is the largest image given to tesseract, 40 megapixels by
	// default; a larger one is scaled down to it. An image whose header
	// claims more than 2 x MaxPixels is not decoded at all.
	MaxPixels int
	// MaxPages bounds the pages of a multi-page TIFF, 20 by default; a TIFF
	// with more is not read.
	MaxPages int
	// MaxPageBytes bounds what decoding one page may take, counted from
	// its header before anything is decoded (pixels, samples, bits a
	// sample, the decoder's buffers): 128 MiB by default, which a phone's
	// 50-megapixel JPEG (75 MiB) fits and a 16-bit 8944 × 8944 PNG (610
	// MiB) does not. A page over it is not read.
	MaxPageBytes int64
	// MaxFileBytes bounds the same over all pages of a TIFF, 1 GiB by
	// default.
	MaxFileBytes int64
	// Threads is each child's OMP_THREAD_LIMIT, 1 by default: one page per
	// core reads more pages per second than one page on all of them.
	Threads int
}

func (o Options) withDefaults() Options {
	if o.Languages == "" {
		o.Languages = "deu+eng"
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = 1 << 30
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = 40_000_000
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 20
	}
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = 128 << 20
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 1 << 30
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	return o
}

// Engine reads text from images by running tesseract, one child process
// per run. It is safe for concurrent use; each call starts its own
// children.
type Engine struct {
	opts      Options
	path      string // the tesseract program
	shell     string // sets the child's memory limit
	languages []string
	osd       bool // orientation data installed
	version   string
}

// Error is an image that could not be read, or an engine that cannot run.
// Reason says why in words for a person.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

// Page is the text read from one page.
type Page struct {
	// Text is the page's words laid out as a text layer: a line of text
	// per row, each word at its column, an empty line between rows set
	// apart.
	Text string
	// Confidence is the mean of Tesseract's word confidences, 0-100; 0 when
	// no word was read.
	Confidence float64
	// Rotated is the clockwise turn in degrees (0, 90, 180 or 270) that
	// made the page upright, after a JPEG's EXIF orientation.
	Rotated int
	// Skew is the small turn in degrees that levelled the text lines.
	Skew float64

	peakRSS uint64 // the largest child's peak resident memory, in bytes
	// lying is whether nearly all words of two letters and more lie on
	// their lines: a page turned a quarter is read as words standing on
	// end, which may come back confident.
	lying bool
}

// New finds tesseract and checks that it runs and has every language of
// opts. An engine that cannot run ends in an *Error whose Reason says why
// ("tesseract is not installed", "the OCR language data for deu is not
// installed"), for the files it would have read.
func New(opts Options) (*Engine, error) {
	opts = opts.withDefaults()
	e := &Engine{opts: opts}
	name := opts.Path
	if name == "" {
		name = "tesseract"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		reason := "tesseract is not installed"
		if opts.Path != "" {
			reason = fmt.Sprintf("the OCR program %s was not found", opts.Path)
		}
		return nil, &Error{Reason: reason, Err: err}
	}
	if e.path, err = filepath.Abs(path); err != nil {
		return nil, &Error{Reason: "tesseract is not installed", Err: err}
	}
	if e.shell, err = exec.LookPath("/bin/sh"); err != nil {
		return nil, &Error{Reason: "OCR needs /bin/sh to limit tesseract's memory", Err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.path, "--version").CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	if err != nil || !strings.HasPrefix(first, "tesseract ") {
		return nil, &Error{Reason: fmt.Sprintf("%s does not run as tesseract", e.path), Err: fmt.Errorf("%v: %q", err, first)}
	}
	e.version = strings.TrimPrefix(strings.TrimSpace(first), "tesseract ")
	out, err = exec.CommandContext(ctx, e.path, "--list-langs").CombinedOutput()
	if err != nil {
		return nil, &Error{Reason: "tesseract could not list its languages", Err: fmt.Errorf("%w: %s", err, out)}
	}
	var installed []string
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if i > 0 { // the first line names the directory
			installed = append(installed, strings.TrimSpace(line))
		}
	}
	for _, l := range strings.Split(opts.Languages, "+") {
		if l == "" || !slices.Contains(installed, l) {
			return nil, &Error{Reason: fmt.Sprintf("the OCR language data for %q is not installed (Debian: tesseract-ocr-%s)", l, l)}
		}
		e.languages = append(e.languages, l)
	}
	e.osd = slices.Contains(installed, "osd")
	return e, nil
}

// Available reports whether e reads images; a nil engine, OCR turned off,
// does not.
func (e *Engine) Available() bool { return e != nil }

// Languages returns the languages e reads.
func (e *Engine) Languages() []string { return slices.Clone(e.languages) }

// Version returns tesseract's version, e.g. "5.3.0".
func (e *Engine) Version() string { return e.version }

// errPageTimeout ends a page that took longer than Options.Timeout.
var errPageTimeout = errors.New("page timeout")

// Recognize reads one page. Within Options.Timeout it normalises the image
// (gray, contrast, size), turns it upright, levels its lines and reads it.
// A page that cannot be read ends in an *Error; a cancelled ctx ends it with
// ctx's error, its tesseract killed.
func (e *Engine) Recognize(ctx context.Context, img image.Image) (Page, error) {
	return e.recognize(ctx, toGray(img))
}

func (e *Engine) recognize(ctx context.Context, g *image.Gray) (Page, error) {
	if e == nil {
		return Page{}, &Error{Reason: "OCR is turned off"}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, e.opts.Timeout, errPageTimeout)
	defer cancel()
	g = prepare(g, e.opts.MaxPixels)
	var p Page
	err := context.Cause(ctx)
	if ctx.Err() == nil {
		p, err = e.orientAndRead(ctx, g)
	}
	// The deadline may pass in this process's own work, before a child ran.
	if err != nil && (errors.Is(err, errPageTimeout) || context.Cause(ctx) == errPageTimeout) {
		return Page{}, &Error{Reason: fmt.Sprintf("OCR took longer than %s", e.opts.Timeout), Err: err}
	}
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) != errPageTimeout {
			return Page{}, err
		}
		var oe *Error
		if errors.As(err, &oe) {
			return Page{}, err
		}
		return Page{}, &Error{Reason: "tesseract failed on the image", Err: err}
	}
	return p, nil
}

// noisy is the noise level (see noiseLevel) from which an image is
// smoothed before reading; a clean scan or photo is at 0-2.
const noisy = 6

// goodConfidence is the mean word confidence above which a reading is
// kept without trying other orientations.
const goodConfidence = 70

// fairConfidence is the mean word confidence above which a reading of a
// page OSD is sure is upright is kept: a noisy photo reads at some 55-70
// upright, at 35-50 turned over.
const fairConfidence = 55

// orientAndRead turns g upright and reads it. Most pages come upright (a
// photo's EXIF turn already applied): a reading of g as it is that comes
// back confident, its words lying on their lines, is kept, with no
// orientation detection, which costs about as much as a reading. Otherwise,
// with Tesseract's orientation data, OSD names the turn; without it, or
// when OSD is unsure, the page is read at each quarter turn until a
// reading is confident, and the reading with the most confidently read
// characters is kept.
func (e *Engine) orientAndRead(ctx context.Context, g *image.Gray) (Page, error) {
	best, bestScore, err := e.readAt(ctx, g, 0)
	if err != nil {
		return Page{}, err
	}
	if best.Confidence >= goodConfidence && best.lying {
		return best, nil
	}
	peak := best.peakRSS
	tries := []int{180, 90, 270}
	if e.osd {
		deg, sure, rss, err := e.detectOrientation(ctx, g)
		peak = max(peak, rss)
		if err != nil && ctx.Err() != nil {
			return Page{}, err
		}
		if err == nil && sure && deg == 0 && best.lying && best.Confidence >= fairConfidence {
			// OSD confirms the page upright, and the reading is fair: a
			// page read upside down comes back at 35-50.
			best.peakRSS = peak
			return best, nil
		}
		if err == nil && sure {
			// OSD takes a page for its upside-down self now and then
			// (serif type, a shadow): a reading it named that comes back
			// poor is checked against the page turned over.
			tries = []int{deg, (deg + 180) % 360}
		} else if err == nil {
			tries = append([]int{deg}, slices.DeleteFunc(tries, func(d int) bool { return d == deg })...)
		}
		tries = slices.DeleteFunc(tries, func(d int) bool { return d == 0 }) // read already
	}
	for _, deg := range tries {
		p, score, err := e.readAt(ctx, g, deg)
		peak = max(peak, p.peakRSS)
		if err != nil {
			return Page{}, err
		}
		if score > bestScore {
			best, bestScore = p, score
		}
		if p.Confidence >= goodConfidence && p.lying {
			break
		}
	}
	best.peakRSS = peak
	return best, nil
}

// readAt turns g by deg, levels it and reads it; score counts the
// confidently read letters and digits.
func (e *Engine) readAt(ctx context.Context, g *image.Gray, deg int) (Page, float64, error) {
	g = rotate90(g, deg)
	skew := estimateSkew(g)
	if skew != 0 {
		// Each step on a large page takes a while: a cancelled page
		// stops between them.
		if ctx.Err() != nil {
			return Page{}, 0, context.Cause(ctx)
		}
		g = rotateSmall(g, skew)
	}
	if ctx.Err() != nil {
		return Page{}, 0, context.Cause(ctx)
	}
	in, err := encodePNG(g)
	if err != nil {
		return Page{}, 0, err
	}
	res, err := e.run(ctx, in, "-l", e.opts.Languages, "--psm", pageLayout(g), "--dpi", "300", "tsv")
	if err != nil {
		return Page{peakRSS: res.peakRSS}, 0, err
	}
	p, score := parseTSV(res.out)
	p.Rotated, p.Skew, p.peakRSS = deg, skew, res.peakRSS
	return p, score, nil
}

// pageLayout is Tesseract's page segmentation mode for g: a slip at least
// receiptShape times as tall as it is wide (a till receipt) is one block of
// text (6), anything else a page of columns and blocks found by layout
// analysis (3). On the SROIE receipts 000-312 the block read 12 more dates
// and 3 more totals right than layout analysis (which splits a receipt's
// price column from its labels), and the right total appeared in 258
// readings against 249.
func pageLayout(g *image.Gray) string {
	if float64(g.Rect.Dy()) >= receiptShape*float64(g.Rect.Dx()) {
		return "6"
	}
	return "3"
}

// receiptShape is the height to width ratio from which a page is read as
// a receipt: an A4 page is 1.41, a till slip 1.7 and more.
const receiptShape = 1.6

// detectOrientation asks Tesseract's OSD which clockwise turn makes g
// upright; sure is false when its confidence is low, as with few letters.
func (e *Engine) detectOrientation(ctx context.Context, g *image.Gray) (deg int, sure bool, peakRSS uint64, err error) {
	// OSD needs no more than about a megapixel of text.
	in, err := encodePNG(scaleDown(g, 1<<20))
	if err != nil {
		return 0, false, 0, err
	}
	res, err := e.run(ctx, in, "--psm", "0", "--dpi", "300")
	if err != nil {
		return 0, false, res.peakRSS, err
	}
	var conf float64
	found := false
	for _, line := range strings.Split(string(res.out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Rotate":
			deg, err = strconv.Atoi(v)
			found = err == nil
		case "Orientation confidence":
			conf, _ = strconv.ParseFloat(v, 64)
		}
	}
	if !found || deg%90 != 0 {
		return 0, false, res.peakRSS, fmt.Errorf("osd: no orientation in %q", res.out)
	}
	return ((deg % 360) + 360) % 360, conf >= osdSure, res.peakRSS, nil
}

// osdSure is the OSD orientation confidence trusted without a second
// reading; pages with a few lines of text score about 2-20.
const osdSure = 2

func encodePNG(g *image.Gray) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, g); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// columnGap is the gap between two words, in letters' widths, from which
// it is a column's: a space is some 0.6 letters wide with the letters'
// margins, two spaces some 1.3.
const columnGap = 1.2

// word is one word of tesseract's TSV output, with its box.
type word struct {
	text                     string
	left, top, width, height int
	line                     string // block.paragraph.line
	conf                     float64
}

// parseTSV turns tesseract's TSV output into a page laid out as a text
// layer is: see layout. score sums, over the words lying on their lines,
// their confidence times their letters and digits.
func parseTSV(out []byte) (Page, float64) {
	var words []word
	var sum, score float64
	var long, standing int
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 12 || f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(f[11])
		conf, err := strconv.ParseFloat(f[10], 64)
		if text == "" || err != nil || conf < 0 {
			continue
		}
		var box [4]int
		for k := range box {
			box[k], _ = strconv.Atoi(f[6+k])
		}
		words = append(words, word{text: text, left: box[0], top: box[1], width: max(box[2], 1), height: max(box[3], 1),
			line: f[2] + "." + f[3] + "." + f[4], conf: conf})
		sum += conf
		if utf8.RuneCountInString(text) >= 2 {
			long++
		}
		if utf8.RuneCountInString(text) >= 2 && box[3] > box[2] {
			// A word standing on end: tesseract read the lines of a page
			// turned a quarter as vertical text, and their boxes do not
			// lay out. Such a reading scores nothing for it.
			standing++
			continue
		}
		for _, r := range text {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				score += conf / 100
			}
		}
	}
	p := Page{Text: layout(words), lying: standing*10 <= long}
	if len(words) > 0 {
		p.Confidence = sum / float64(len(words))
	}
	return p, score
}

// layout writes words as a text layer with its layout kept shows them: the
// lines tesseract found in different blocks but at the same height (a
// label and its value, the cells of a table's row) joined into one row,
// each word at the column its left edge is at, in widths of the page's
// average letter, and an empty line where rows are further apart than
// text lines are.
func layout(words []word) string {
	if len(words) == 0 {
		return ""
	}
	// Tesseract's lines, each with its vertical extent: that of its words
	// of a letter's height, not of a rule or a speck read as one.
	hs := make([]int, len(words))
	for i, w := range words {
		hs[i] = w.height
	}
	slices.Sort(hs)
	tall := 2 * hs[len(hs)/2]
	type tline struct {
		words       []word
		top, bottom int
	}
	var lines []*tline
	byID := map[string]*tline{}
	var widths []float64
	for _, w := range words {
		l := byID[w.line]
		if l == nil {
			l = &tline{top: -1}
			byID[w.line] = l
			lines = append(lines, l)
		}
		l.words = append(l.words, w)
		if w.height <= tall {
			if l.top < 0 {
				l.top, l.bottom = w.top, w.top+w.height
			}
			l.top, l.bottom = min(l.top, w.top), max(l.bottom, w.top+w.height)
		}
		if n := utf8.RuneCountInString(w.text); n >= 3 {
			widths = append(widths, float64(w.width)/float64(n))
		}
	}
	for _, l := range lines {
		if l.top < 0 {
			l.top, l.bottom = l.words[0].top, l.words[0].top+min(l.words[0].height, tall)
		}
	}
	// Rows: lines whose middles lie within each other's extent, measured
	// against the row's first line, so that a row never grows to swallow
	// the next.
	slices.SortStableFunc(lines, func(a, b *tline) int { return cmp.Compare(a.top+a.bottom, b.top+b.bottom) })
	type row struct {
		words       []word
		top, bottom int
	}
	var rows []*row
	for _, l := range lines {
		mid := (l.top + l.bottom) / 2
		if n := len(rows); n > 0 {
			r := rows[n-1]
			if rmid := (r.top + r.bottom) / 2; mid > r.top && mid < r.bottom && rmid > l.top && rmid < l.bottom {
				r.words = append(r.words, l.words...)
				continue
			}
		}
		rows = append(rows, &row{words: slices.Clone(l.words), top: l.top, bottom: l.bottom})
	}
	charW := 10.0
	if len(widths) > 0 {
		slices.Sort(widths)
		charW = max(widths[len(widths)/2], 1)
	}
	var heights []int
	margin := words[0].left
	for _, r := range rows {
		heights = append(heights, r.bottom-r.top)
		for _, w := range r.words {
			margin = min(margin, w.left)
		}
	}
	slices.Sort(heights)
	lineH := max(heights[len(heights)/2], 1)
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteString("\n")
			// Rows of text are some 1.2-1.5 heights apart; more is a gap.
			if gap := r.top - rows[i-1].bottom; gap > lineH {
				b.WriteString("\n")
			}
		}
		slices.SortStableFunc(r.words, func(a, b word) int { return cmp.Compare(a.left, b.left) })
		col := 0
		for k, w := range r.words {
			at := int(math.Round(float64(w.left-margin) / charW))
			if k > 0 {
				// Words of one phrase keep one space (a space is some
				// 0.6 letters wide, with the letters' margins); a wider
				// gap is a column's, two spaces at least.
				if prev := r.words[k-1]; float64(w.left-(prev.left+prev.width)) < columnGap*charW {
					at = col + 1
				} else {
					at = max(at, col+2)
				}
			}
			b.WriteString(strings.Repeat(" ", max(at-col, 0)))
			b.WriteString(w.text)
			col = max(at, col) + utf8.RuneCountInString(w.text)
		}
	}
	return b.String()
}
