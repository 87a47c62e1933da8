package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
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
	// Text is the page's words, a line of text per line, paragraphs
	// separated by an empty line.
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
	p, err := e.orientAndRead(ctx, g)
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

// prepare scales g into the pixel budget, smooths a noisy image,
// stretches its contrast and doubles a small image, so that text is some
// 300 dpi.
func prepare(g *image.Gray, maxPixels int) *image.Gray {
	g = scaleDown(g, maxPixels)
	// Each pass divides Gaussian noise by about three.
	for range min(noiseLevel(g)/noisy, 2) {
		g = blur3(g)
	}
	stretch(g)
	if w, h := g.Rect.Dx(), g.Rect.Dy(); max(w, h) < 1500 && 4*w*h <= maxPixels {
		g = upscale2(g)
	}
	return g
}

// noisy is the noise level (see noiseLevel) from which an image is
// smoothed before reading; a clean scan or photo is at 0-2.
const noisy = 6

// goodConfidence is the mean word confidence above which a reading at the
// first orientation tried is kept without trying the others.
const goodConfidence = 70

// orientAndRead turns g upright and reads it. With Tesseract's orientation
// data, OSD names the turn; without it, or when OSD is unsure, the page is
// read at each quarter turn and the reading with the most confidently
// read characters is kept.
func (e *Engine) orientAndRead(ctx context.Context, g *image.Gray) (Page, error) {
	var peak uint64
	tries := []int{0, 180, 90, 270}
	if e.osd {
		deg, sure, rss, err := e.detectOrientation(ctx, g)
		peak = rss
		if err != nil && ctx.Err() != nil {
			return Page{}, err
		}
		if err == nil && sure {
			tries = []int{deg}
		} else if err == nil {
			tries = append([]int{deg}, slices.DeleteFunc(tries, func(d int) bool { return d == deg })...)
		}
	}
	var best Page
	bestScore := -1.0
	for i, deg := range tries {
		p, score, err := e.readAt(ctx, g, deg)
		peak = max(peak, p.peakRSS)
		if err != nil {
			return Page{}, err
		}
		if score > bestScore {
			best, bestScore = p, score
		}
		if i == 0 && (len(tries) == 1 || p.Confidence >= goodConfidence) {
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
		g = rotateSmall(g, skew)
	}
	in, err := encodePNG(g)
	if err != nil {
		return Page{}, 0, err
	}
	res, err := e.run(ctx, in, "-l", e.opts.Languages, "--psm", "3", "--dpi", "300", "tsv")
	if err != nil {
		return Page{peakRSS: res.peakRSS}, 0, err
	}
	p, score := parseTSV(res.out)
	p.Rotated, p.Skew, p.peakRSS = deg, skew, res.peakRSS
	return p, score, nil
}

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

// parseTSV turns tesseract's TSV output into a page: words joined into
// lines and paragraphs, with their mean confidence. score sums, over the
// words, their confidence times their letters and digits.
func parseTSV(out []byte) (Page, float64) {
	var text strings.Builder
	var sum, score float64
	var n int
	var lastPar, lastLine string
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		if i == 0 || len(f) < 12 || f[0] != "5" {
			continue
		}
		word := strings.TrimSpace(f[11])
		conf, err := strconv.ParseFloat(f[10], 64)
		if word == "" || err != nil || conf < 0 {
			continue
		}
		par, ln := f[2]+"."+f[3], f[2]+"."+f[3]+"."+f[4]
		switch {
		case text.Len() == 0:
		case par != lastPar:
			text.WriteString("\n\n")
		case ln != lastLine:
			text.WriteString("\n")
		default:
			text.WriteString(" ")
		}
		lastPar, lastLine = par, ln
		text.WriteString(word)
		sum += conf
		n++
		for _, r := range word {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				score += conf / 100
			}
		}
	}
	p := Page{Text: text.String()}
	if n > 0 {
		p.Confidence = sum / float64(n)
	}
	return p, score
}
