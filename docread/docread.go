package docread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"
)

// Limits bound the reading of one document. A zero field takes its default.
type Limits struct {
	// MaxPages is the most pages a PDF may have (default 500); a PDF with
	// more ends in an *Error.
	MaxPages int
	// Timeout bounds the reading of one document (default 60s).
	Timeout time.Duration
	// MaxMemory bounds the memory of one PDFium instance, in bytes (default
	// 256 MiB, rounded down to 64 KiB pages).
	MaxMemory uint64
	// MaxText is the most bytes of text kept per document (default 4 MiB).
	MaxText int
	// MaxAttachmentBytes is the most bytes of embedded files kept per
	// document, all together (default 10 MiB).
	MaxAttachmentBytes int64
}

// Default limits.
const (
	DefaultMaxPages           = 500
	DefaultTimeout            = 60 * time.Second
	DefaultMaxMemory          = 256 << 20
	DefaultMaxText            = 4 << 20
	DefaultMaxAttachmentBytes = 10 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxMemory == 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	if l.MaxText <= 0 {
		l.MaxText = DefaultMaxText
	}
	if l.MaxAttachmentBytes <= 0 {
		l.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	return l
}

// Options configure a Reader.
type Options struct {
	Limits Limits
	// Instances is how many PDFs are read at once (default 1). Each
	// instance may use up to Limits.MaxMemory.
	Instances int
	// CacheDir, when set, keeps the compiled PDFium module between starts
	// of the process (about 20 MB), cutting NewReader from seconds to a
	// fraction of one.
	CacheDir string
	// IdleClose is how long the PDF engine stays loaded with nothing to
	// read; DefaultIdleClose when 0.
	IdleClose time.Duration
	// Compile, when set with CacheDir, fills the compilation cache in
	// CacheDir in another process before the engine first starts. Compiling
	// PDFium holds some 300 MB for seconds; done elsewhere, this process
	// only loads the compiled code (some 70 MB), and a stop ends the compile
	// by cancelling ctx. When it fails, the engine compiles here.
	Compile func(ctx context.Context, cacheDir string) error
}

// Format names, as in Document.Format.
const (
	FormatPDF  = "pdf"
	FormatText = "text"
	FormatXML  = "xml"
)

// Document is what was read from one file.
type Document struct {
	Format string
	// Pages holds the text of each page in order; a text or XML file is one
	// page. When Truncated, it ends at the page where the text was cut.
	Pages []Page
	// PageCount is the number of pages of the document.
	PageCount int
	// Attachments are the files embedded in a PDF, in the PDF's order.
	Attachments []Attachment
	// Truncated is set when the text was cut at Limits.MaxText.
	Truncated bool
}

// Text returns the text of all pages, a form feed between two pages.
func (d *Document) Text() string {
	var b strings.Builder
	for i, p := range d.Pages {
		if i > 0 {
			b.WriteByte('\f')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// Page is the text of one page. HasText is false when the page has no
// letter or digit in its text layer: a scan, for OCR.
type Page struct {
	Text    string
	HasText bool
}

// Attachment is a file embedded in a PDF. Data is nil when the file did not
// fit in Limits.MaxAttachmentBytes or could not be decoded; Size is its size
// then too, when PDFium knows it.
type Attachment struct {
	Name string
	// MIME is the type the PDF declares for the file ("text/xml"), or "".
	MIME string
	Size int64
	Data []byte
}

// Error is a document that could not be read. Reason says why, in a
// sentence for a person.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Err != ErrUnsupported {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnsupported is wrapped by the *Error of a file in a format this package
// does not read (images, archives, office files).
var ErrUnsupported = errors.New("format not read")

// sniffLen is how much of the start of a file tells its format.
const sniffLen = 1024

// Read reads one document of size bytes. name and mimeType are what the
// uploader said; the bytes decide first. A document that cannot be read ends
// in an *Error; when ctx ends first, ctx's error is returned.
func (r *Reader) Read(ctx context.Context, src io.ReaderAt, size int64, name, mimeType string) (*Document, error) {
	head := make([]byte, min(size, sniffLen))
	if _, err := src.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read document start: %w", err)
	}
	format, err := detect(head, name, mimeType)
	if err != nil {
		return nil, err
	}
	if format == FormatPDF {
		if err := r.awaitEngine(ctx); err != nil {
			return nil, err
		}
	}
	tctx, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	defer cancel()
	var doc *Document
	switch format {
	case FormatPDF:
		doc, err = r.readPDF(tctx, src, size)
	case FormatText:
		doc, err = readText(io.NewSectionReader(src, 0, size), r.limits.MaxText)
	case FormatXML:
		doc, err = readXML(tctx, io.NewSectionReader(src, 0, size), r.limits.MaxText)
	}
	if err != nil {
		return nil, r.stopped(ctx, tctx, err)
	}
	return doc, nil
}

// stopped tells a read stopped by its caller from one stopped by the time
// limit; other errors pass unchanged.
func (r *Reader) stopped(ctx, tctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if tctx.Err() != nil {
		return &Error{Reason: fmt.Sprintf("reading took longer than %s", r.limits.Timeout), Err: err}
	}
	return err
}

// signatures are the starts of formats that are not read here.
var signatures = []struct {
	prefix []byte
	what   string
}{
	{[]byte("\xff\xd8\xff"), "a JPEG image"},
	{[]byte("\x89PNG\r\n\x1a\n"), "a PNG image"},
	{[]byte("GIF8"), "a GIF image"},
	{[]byte("II*\x00"), "a TIFF image"},
	{[]byte("MM\x00*"), "a TIFF image"},
	{[]byte("PK\x03\x04"), "a ZIP archive or office document"},
	{[]byte("\xd0\xcf\x11\xe0"), "an old office document"},
}

func detect(head []byte, name, mimeType string) (string, error) {
	if bytes.Contains(head, []byte("%PDF-")) {
		return FormatPDF, nil
	}
	if len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
		return "", unsupported("a WebP image")
	}
	for _, s := range signatures {
		if bytes.HasPrefix(head, s.prefix) {
			return "", unsupported(s.what)
		}
	}
	mt, _, _ := mime.ParseMediaType(mimeType)
	ext := strings.ToLower(path.Ext(name))
	switch {
	case mt == "application/pdf" || ext == ".pdf":
		return "", &Error{Reason: "the file is not a PDF it claims to be"}
	case mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml"):
		return FormatXML, nil
	case mt == "text/plain" || mt == "text/csv":
		return FormatText, nil
	case strings.HasPrefix(mt, "image/"):
		return "", unsupported("an image")
	case ext == ".xml":
		return FormatXML, nil
	case ext == ".txt" || ext == ".csv":
		return FormatText, nil
	case bytes.HasPrefix(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), []byte("<?xml")):
		return FormatXML, nil
	}
	return "", unsupported("a file of a type that is not read")
}

func unsupported(what string) error {
	return &Error{Reason: "the file is " + what + ", which is not read as text", Err: ErrUnsupported}
}
