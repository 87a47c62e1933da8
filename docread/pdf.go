package docread

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	pdfiumerrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// retainMemory is the memory an instance may keep between documents; one
// that grew past it is replaced, so that its memory goes back to Go.
const retainMemory = 64 << 20

// maxAttachments bounds the embedded files listed per document.
const maxAttachments = 100

// DefaultIdleClose is how long the PDF engine stays loaded with no PDF to
// read: its compiled code and instances take tens of MiB that an idle
// server gives back. Loading it again from the compilation cache takes a
// fraction of a second.
const DefaultIdleClose = time.Minute

// Reader reads documents. It is safe for concurrent use; at most
// Options.Instances PDFs are read at once, the others wait.
type Reader struct {
	limits    Limits
	start     func() (*engine, error)
	idleClose time.Duration

	// compile fills the compilation cache in another process before the
	// first start; nil when there is none or it has run. stop ends it.
	compile func() error
	stop    context.CancelFunc

	// warmed is closed when Warm has returned.
	warmed   chan struct{}
	warmOnce sync.Once
	warmErr  error

	mu      sync.Mutex
	engine  *engine     // nil while unloaded
	loading *load       // the engine being started, nil when no start runs
	active  int         // PDFs being read
	idle    *time.Timer // unloads the engine once nothing was read for idleClose
	closed  bool
}

// load is one start of the engine. Starting compiles PDFium for seconds
// when the compilation cache is empty, so it runs outside the Reader's
// mutex: a read that waits for it gives way to its context, and Close does
// not wait for it at all.
type load struct {
	done chan struct{}
	err  error // the start's error, set before done is closed
}

// engine is PDFium loaded: its instances, and the compilation cache that
// holds its compiled code in memory while it is open.
type engine struct {
	pool  pdfium.Pool
	cache wazero.CompilationCache // nil without Options.CacheDir
}

func (e *engine) close() error {
	err := e.pool.Close()
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(context.Background()))
	}
	return err
}

// NewReader compiles PDFium once for all the documents the Reader will
// read, by OpenReader and Warm. It takes seconds without Options.CacheDir.
func NewReader(ctx context.Context, opts Options) (*Reader, error) {
	r := OpenReader(ctx, opts)
	if err := r.Warm(); err != nil {
		return nil, err
	}
	return r, nil
}

// OpenReader returns a Reader that compiles PDFium when it first needs it,
// or when Warm is called: a server calls Warm in the background after it
// listens, and a PDF that arrives meanwhile waits for the compile.
func OpenReader(ctx context.Context, opts Options) *Reader {
	limits := opts.Limits.withDefaults()
	instances := max(opts.Instances, 1)
	rc := wazero.NewRuntimeConfig().
		// PDFium's setjmp/longjmp are WebAssembly exceptions.
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		// Killing an instance must stop the code it runs.
		WithCloseOnContextDone(true).
		WithMemoryLimitPages(uint32(min(limits.MaxMemory>>16, math.MaxUint16+1)))
	r := &Reader{limits: limits, idleClose: cmp.Or(opts.IdleClose, DefaultIdleClose), warmed: make(chan struct{})}
	compileCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stop = stop
	if opts.Compile != nil && opts.CacheDir != "" {
		r.compile = func() error { return opts.Compile(compileCtx, opts.CacheDir) }
	}
	// The pool's context lives as long as the Reader; it carries the
	// allocator to every instance.
	poolCtx := experimental.WithMemoryAllocator(context.WithoutCancel(ctx), experimental.MemoryAllocatorFunc(allocateMapped))
	r.start = func() (*engine, error) {
		// The cache is opened with the engine and closed with it: it keeps
		// the compiled code in memory for as long as it is open.
		e := &engine{}
		rc := rc
		if opts.CacheDir != "" {
			cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
			if err != nil {
				return nil, fmt.Errorf("open compilation cache: %w", err)
			}
			e.cache = cache
			rc = rc.WithCompilationCache(cache)
		}
		pool, err := webassembly.Init(webassembly.Config{
			Context:  poolCtx,
			MaxIdle:  instances,
			MaxTotal: instances,
			// No file system: a document reaches nothing beyond its bytes.
			FSConfig:      wazero.NewFSConfig(),
			RuntimeConfig: rc,
			Stdout:        io.Discard,
			Stderr:        io.Discard,
			ReuseWorkers:  true,
		})
		if err != nil {
			if e.cache != nil {
				e.cache.Close(context.Background())
			}
			return nil, fmt.Errorf("start pdfium: %w", err)
		}
		e.pool = pool
		return e, nil
	}
	return r
}

// Warm starts the engine once, so that a broken engine shows at once and
// the compilation cache is filled, and returns its error; later calls
// return the first's. Warmed is closed when it returns.
func (r *Reader) Warm() error {
	r.warmOnce.Do(func() {
		defer close(r.warmed)
		if _, r.warmErr = r.acquire(context.Background()); r.warmErr != nil {
			return
		}
		r.release()
		// Compiling PDFium without a cache leaves hundreds of MB of
		// garbage, which Go would give back to the system only over many
		// minutes.
		debug.FreeOSMemory()
	})
	return r.warmErr
}

// Warmed is closed once Warm has returned.
func (r *Reader) Warmed() <-chan struct{} { return r.warmed }

// acquire returns the engine, starting it when it was unloaded, and counts
// a PDF being read until release. It waits for a start as long as ctx
// lives.
func (r *Reader) acquire(ctx context.Context) (pdfium.Pool, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, errClosed
		}
		if r.engine != nil {
			r.active++
			pool := r.engine.pool
			r.mu.Unlock()
			return pool, nil
		}
		l := r.loading
		if l == nil {
			l = &load{done: make(chan struct{})}
			r.loading = l
			go r.startEngine(l)
		}
		r.mu.Unlock()
		select {
		case <-l.done:
			if l.err != nil {
				return nil, l.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// awaitEngine waits until the engine is started, for as long as ctx lives.
// A first start compiles PDFium for seconds: that wait is the caller's, not
// the document's, so it comes before a document's time limit starts.
func (r *Reader) awaitEngine(ctx context.Context) error {
	r.mu.Lock()
	loaded := r.engine != nil
	r.mu.Unlock()
	if loaded {
		// The common case: no count taken and given back, no idle timer
		// set again for nothing.
		return nil
	}
	if _, err := r.acquire(ctx); err != nil {
		return err
	}
	r.release()
	return nil
}

// errClosed is what a read gets once Close was called.
var errClosed = errors.New("the document reader is closed")

// startEngine runs one start and hands the engine to the Reader, or closes
// it again when the Reader was closed meanwhile. A failed start is not
// kept: the next read tries again.
func (r *Reader) startEngine(l *load) {
	if r.compile != nil {
		// Only the first start can find the cache empty. Should the other
		// process fail (its hook says why), start compiles here.
		_ = r.compile()
		r.compile = nil
	}
	e, err := r.start()
	r.mu.Lock()
	r.loading = nil
	switch {
	case err != nil:
		l.err = err
	case r.closed:
		l.err = errClosed
		e.close()
	default:
		r.engine = e
	}
	r.mu.Unlock()
	close(l.done)
}

// release ends what acquire counted; the engine is unloaded once nothing
// was read for Options.IdleClose.
func (r *Reader) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active--
	if r.active > 0 || r.closed {
		return
	}
	if r.idle != nil {
		r.idle.Stop()
	}
	r.idle = time.AfterFunc(r.idleClose, func() {
		r.mu.Lock()
		unloaded := r.active == 0 && r.engine != nil && !r.closed
		if unloaded {
			r.engine.close()
			r.engine = nil
		}
		r.mu.Unlock()
		if unloaded {
			// The engine's memory goes back to the system now, not over
			// the minutes Go's scavenger would take: an idle server is
			// small again.
			debug.FreeOSMemory()
		}
	})
}

// Close stops the engine. It is called once, after the last Read returns,
// and returns at once even while the engine is being started: that start
// closes what it made when it ends.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.stop()
	if r.idle != nil {
		r.idle.Stop()
	}
	if r.engine == nil {
		return nil
	}
	err := r.engine.close()
	r.engine = nil
	return err
}

// withInstance runs fn on a PDFium instance, for at most as long as ctx
// lives. An instance that ran out of time is killed and replaced; one that
// failed is discarded too, as a trap may leave its memory inconsistent.
func (r *Reader) withInstance(ctx context.Context, src io.ReaderAt, size int64, fn func(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT, discard *bool) error) error {
	pool, err := r.acquire(ctx)
	if err != nil {
		return err
	}
	defer r.release()
	inst, err := pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("get pdfium instance: %w", err)
	}
	// PDFium reads through file, which is cut from src when the read ends:
	// a killed instance never releases its reader.
	file := &detachableReader{r: io.NewSectionReader(src, 0, size)}
	defer file.detach()

	restore, err := boundCalls(inst, ctx)
	if err != nil {
		inst.Kill()
		return err
	}
	var discard bool
	err = r.readDocument(inst, file, size, func(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT) error {
		return fn(inst, doc, &discard)
	})
	restore()
	if ctx.Err() != nil {
		// Stopped where it ran: its module is closed, the instance is
		// spent.
		inst.Kill()
		return errors.Join(ctx.Err(), err)
	}
	if err != nil || discard || instanceMemory(inst) > retainMemory {
		inst.Kill()
		return err
	}
	inst.Close()
	return nil
}

func (r *Reader) readDocument(inst pdfium.Pdfium, file io.ReadSeeker, size int64, fn func(pdfium.Pdfium, references.FPDF_DOCUMENT) error) error {
	opened, err := inst.OpenDocument(&requests.OpenDocument{FileReader: file, FileReaderSize: size})
	if err != nil {
		return r.openError(inst, err)
	}
	err = fn(inst, opened.Document)
	if _, cerr := inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: opened.Document}); err == nil && cerr != nil {
		err = fmt.Errorf("close pdf: %w", cerr)
	}
	return err
}

func (r *Reader) openError(inst pdfium.Pdfium, err error) error {
	switch {
	case errors.Is(err, pdfiumerrors.ErrPassword):
		return &Error{Reason: "the PDF is encrypted with a password", Err: err}
	case errors.Is(err, pdfiumerrors.ErrSecurity):
		return &Error{Reason: "the PDF is encrypted in a way that is not supported", Err: err}
	case errors.Is(err, pdfiumerrors.ErrFormat), errors.Is(err, pdfiumerrors.ErrFile), errors.Is(err, pdfiumerrors.ErrUnknown):
		return &Error{Reason: "the file is truncated or damaged", Err: err}
	}
	return r.engineError(inst, err)
}

// engineError names the failure of a PDFium call: out of memory, or the
// reader broke on the file.
func (r *Reader) engineError(inst pdfium.Pdfium, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	// A trap near the limit is the limit: PDFium aborts when it cannot grow.
	if instanceMemory(inst) > r.limits.MaxMemory-r.limits.MaxMemory/8 {
		return &Error{Reason: fmt.Sprintf("the PDF needs more than %d MiB of memory to read", r.limits.MaxMemory>>20), Err: err}
	}
	return &Error{Reason: "the PDF could not be read: the reader failed on it", Err: err}
}

// boundCalls makes inst's calls end with ctx, until restore: wazero then
// stops the code where it runs (it was built to close on its context's end)
// and closes the module from that same goroutine. Killing the instance from
// another goroutine instead would close its memory under the running code.
// go-pdfium takes each call's context from its implementation's Context
// field, which it does not let a caller set; the field keeps its values and
// the worker's own end.
func boundCalls(inst pdfium.Pdfium, ctx context.Context) (restore func(), err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("pdfium: cannot bound the time of a read: its implementation has no settable Context")
		}
	}()
	field := reflect.Indirect(reflect.ValueOf(inst.GetImplementation())).FieldByName("Context")
	worker, ok := field.Interface().(context.Context)
	if !ok || !field.CanSet() {
		return nil, errors.New("pdfium: cannot bound the time of a read: its implementation has no settable Context")
	}
	calls, cancel := context.WithCancel(worker)
	stop := context.AfterFunc(ctx, cancel)
	field.Set(reflect.ValueOf(calls))
	return func() {
		stop()
		cancel()
		field.Set(reflect.ValueOf(worker))
	}, nil
}

// instanceMemory is the size of inst's WebAssembly memory, or 0 when not
// known. go-pdfium does not export it; its implementation's Module does.
func instanceMemory(inst pdfium.Pdfium) (size uint64) {
	defer func() {
		if recover() != nil {
			size = 0
		}
	}()
	v := reflect.Indirect(reflect.ValueOf(inst.GetImplementation()))
	mod := v.FieldByName("Module")
	if !mod.IsValid() || mod.IsNil() {
		return 0
	}
	mem, ok := mod.MethodByName("Memory").Call(nil)[0].Interface().(interface{ Size() uint32 })
	if !ok {
		return 0
	}
	return uint64(mem.Size())
}

// detachableReader lets go when detached.
type detachableReader struct {
	mu sync.Mutex
	r  io.ReadSeeker
}

func (d *detachableReader) Read(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.r == nil {
		return 0, io.ErrClosedPipe
	}
	return d.r.Read(p)
}

func (d *detachableReader) Seek(offset int64, whence int) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.r == nil {
		return 0, io.ErrClosedPipe
	}
	return d.r.Seek(offset, whence)
}

func (d *detachableReader) detach() {
	d.mu.Lock()
	d.r = nil
	d.mu.Unlock()
}

func (r *Reader) readPDF(ctx context.Context, src io.ReaderAt, size int64) (*Document, error) {
	doc := &Document{Format: FormatPDF}
	err := r.withInstance(ctx, src, size, func(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, discard *bool) error {
		count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: pdf})
		if err != nil {
			return r.engineError(inst, err)
		}
		doc.PageCount = count.PageCount
		if doc.PageCount > r.limits.MaxPages {
			return &Error{Reason: fmt.Sprintf("the document has %d pages; at most %d are read", doc.PageCount, r.limits.MaxPages)}
		}
		if err := r.readPages(ctx, inst, pdf, doc, discard); err != nil {
			return err
		}
		return r.readAttachments(inst, pdf, doc)
	})
	if err != nil {
		return nil, err
	}
	r.addScanned(doc, src, size)
	return doc, nil
}

func (r *Reader) readPages(ctx context.Context, inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, doc *Document, discard *bool) error {
	left := r.limits.MaxText
	for i := range doc.PageCount {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		text, err := pageText(inst, pdf, i, left)
		if err != nil {
			// A page PDFium cannot load reads as a page without text; the
			// instance is replaced afterwards, in case a trap broke it.
			*discard = true
			text = ""
		}
		text, cut := cutText(text, left)
		left -= len(text)
		doc.Pages = append(doc.Pages, Page{Text: text, HasText: hasText(text)})
		if cut {
			doc.Truncated = true
			break
		}
	}
	return nil
}

// maxLayoutChars is the most characters a page may have to be laid out by
// position (layout); a page with more, which no invoice has, keeps PDFium's
// order, so that a hostile page of millions of characters costs no more
// than its text.
const maxLayoutChars = 50_000

// pageText is the text of page i, laid out by the characters' positions
// (layout), or in PDFium's reading order for a page of more than
// maxLayoutChars characters, asking for no more than maxChars then.
func pageText(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, i, maxChars int) (string, error) {
	page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: pdf, Index: i})
	if err != nil {
		return "", fmt.Errorf("load page %d: %w", i, err)
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return "", fmt.Errorf("load text of page %d: %w", i, err)
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", fmt.Errorf("count characters of page %d: %w", i, err)
	}
	if n.Count <= 0 {
		return "", nil
	}
	if n.Count <= maxLayoutChars {
		chars, err := inst.GetPageTextStructured(&requests.GetPageTextStructured{
			Page: requests.Page{ByReference: &page.Page}, Mode: requests.GetPageTextStructuredModeChars})
		if err == nil {
			glyphs := make([]glyph, len(chars.Chars))
			for j, c := range chars.Chars {
				glyphs[j] = glyph{text: strings.ReplaceAll(c.Text, "\x00", ""), left: c.PointPosition.Left,
					right: c.PointPosition.Right, top: c.PointPosition.Top, bottom: c.PointPosition.Bottom}
			}
			return layout(glyphs), nil
		}
	}
	// One more than the limit, so that cutText sees the text is longer.
	text, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: min(n.Count, maxChars+1)})
	if err != nil {
		return "", fmt.Errorf("get text of page %d: %w", i, err)
	}
	return strings.NewReplacer("\r\n", "\n", "\x00", "").Replace(text.Text), nil
}

// readAttachments lists the files of the EmbeddedFiles name tree, then
// those of the pages' FileAttachment annotations.
func (r *Reader) readAttachments(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, doc *Document) error {
	count, err := inst.FPDFDoc_GetAttachmentCount(&requests.FPDFDoc_GetAttachmentCount{Document: pdf})
	if err != nil {
		return r.engineError(inst, err)
	}
	left := r.limits.MaxAttachmentBytes
	for i := range min(count.AttachmentCount, maxAttachments) {
		att, err := inst.FPDFDoc_GetAttachment(&requests.FPDFDoc_GetAttachment{Document: pdf, Index: i})
		if err != nil {
			// PDFium lists name tree entries it cannot open.
			continue
		}
		if err := r.readAttachment(inst, att.Attachment, doc, &left); err != nil {
			return err
		}
	}
	for i := range doc.PageCount {
		if len(doc.Attachments) >= maxAttachments {
			break
		}
		if err := r.readAnnotationFiles(inst, pdf, i, doc, &left); err != nil {
			return err
		}
	}
	return nil
}

// readAnnotationFiles adds the files of page i's FileAttachment
// annotations.
func (r *Reader) readAnnotationFiles(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, i int, doc *Document, left *int64) error {
	page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: pdf, Index: i})
	if err != nil {
		// The page read as a page without text; it has no files either.
		return nil
	}
	defer inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page})
	n, err := inst.FPDFPage_GetAnnotCount(&requests.FPDFPage_GetAnnotCount{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return nil
	}
	for k := 0; k < n.Count && len(doc.Attachments) < maxAttachments; k++ {
		if err := r.readAnnotationFile(inst, pdf, &page.Page, k, doc, left); err != nil {
			return err
		}
	}
	return nil
}

// readAnnotationFile adds the file of annotation k of page when it is a
// FileAttachment annotation.
func (r *Reader) readAnnotationFile(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, page *references.FPDF_PAGE, k int, doc *Document, left *int64) error {
	annot, err := inst.FPDFPage_GetAnnot(&requests.FPDFPage_GetAnnot{Page: requests.Page{ByReference: page}, Index: k})
	if err != nil {
		return nil
	}
	defer inst.FPDFPage_CloseAnnot(&requests.FPDFPage_CloseAnnot{Annotation: annot.Annotation})
	st, err := inst.FPDFAnnot_GetSubtype(&requests.FPDFAnnot_GetSubtype{Annotation: annot.Annotation})
	if err != nil || st.Subtype != enums.FPDF_ANNOT_SUBTYPE_FILEATTACHMENT {
		return nil
	}
	att, err := inst.FPDFAnnot_GetFileAttachment(&requests.FPDFAnnot_GetFileAttachment{Document: pdf, Annotation: annot.Annotation})
	if err != nil {
		// An annotation without a file.
		return nil
	}
	return r.readAttachment(inst, att.Attachment, doc, left)
}

// readAttachment adds the file att, its contents while left allows.
func (r *Reader) readAttachment(inst pdfium.Pdfium, att references.FPDF_ATTACHMENT, doc *Document, left *int64) error {
	a := Attachment{}
	if name, err := inst.FPDFAttachment_GetName(&requests.FPDFAttachment_GetName{Attachment: att}); err == nil {
		a.Name = name.Name
	}
	if st, err := inst.FPDFAttachment_GetSubtype(&requests.FPDFAttachment_GetSubtype{Attachment: att}); err == nil && st.Subtype != nil {
		a.MIME = *st.Subtype
	}
	// PDFium decodes the file in its own memory, which MaxMemory bounds.
	file, err := inst.FPDFAttachment_GetFile(&requests.FPDFAttachment_GetFile{Attachment: att})
	if err != nil {
		return r.engineError(inst, err)
	}
	a.Size = int64(len(file.Contents))
	if a.Size <= *left && file.Contents != nil {
		a.Data = file.Contents
		*left -= a.Size
	}
	doc.Attachments = append(doc.Attachments, a)
	return nil
}

// addScanned adds the embedded files scanEmbedded found that PDFium did
// not list: a file listed under the same name is kept, given the scanned
// contents when PDFium could not read them.
func (r *Reader) addScanned(doc *Document, src io.ReaderAt, size int64) {
	left := r.limits.MaxAttachmentBytes
	for _, a := range doc.Attachments {
		left -= int64(len(a.Data))
	}
	for _, s := range scanEmbedded(src, size, left) {
		k := slices.IndexFunc(doc.Attachments, func(a Attachment) bool {
			return bytes.Equal(a.Data, s.Data) && s.Data != nil || strings.EqualFold(a.Name, s.Name) && s.Name != ""
		})
		switch {
		case k < 0 && len(doc.Attachments) < maxAttachments:
			doc.Attachments = append(doc.Attachments, s)
		case k >= 0 && doc.Attachments[k].Data == nil && s.Data != nil:
			doc.Attachments[k].Data, doc.Attachments[k].Size = s.Data, s.Size
		}
	}
}

// MaxRenderPixels bounds the image RenderPage draws: 35 million pixels, an
// A4 page at 600 dpi.
const MaxRenderPixels = 35_000_000

// RenderPage draws page (counted from 0) in shades of grey at dpi dots per
// inch, for OCR. A page that would exceed MaxRenderPixels is drawn at the
// highest resolution within it. It is bound by Limits.Timeout and
// Limits.MaxMemory as Read is.
func (r *Reader) RenderPage(ctx context.Context, src io.ReaderAt, size int64, page, dpi int) (image.Image, error) {
	if dpi <= 0 {
		return nil, fmt.Errorf("render page: dpi %d is not positive", dpi)
	}
	if err := r.awaitEngine(ctx); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	defer cancel()
	var img image.Image
	err := r.withInstance(tctx, src, size, func(inst pdfium.Pdfium, pdf references.FPDF_DOCUMENT, discard *bool) error {
		count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: pdf})
		if err != nil {
			return r.engineError(inst, err)
		}
		if page < 0 || page >= count.PageCount {
			return &Error{Reason: fmt.Sprintf("the PDF has no page %d; it has %d", page+1, count.PageCount)}
		}
		sz, err := inst.FPDF_GetPageSizeByIndex(&requests.FPDF_GetPageSizeByIndex{Document: pdf, Index: page})
		if err != nil {
			return r.engineError(inst, err)
		}
		dpi := fitDPI(sz.Width, sz.Height, dpi)
		if dpi == 0 {
			return &Error{Reason: fmt.Sprintf("page %d is too large to draw", page+1)}
		}
		res, err := inst.RenderPageInDPI(&requests.RenderPageInDPI{
			Page:        requests.Page{ByIndex: &requests.PageByIndex{Document: pdf, Index: page}},
			DPI:         dpi,
			ImageFormat: requests.RenderImageFormatGrayscale,
		})
		if err != nil {
			return r.engineError(inst, err)
		}
		defer res.Cleanup()
		// The pixels live in the instance's memory until Cleanup.
		src, ok := res.Result.RenderedImage.(*image.Gray)
		if !ok {
			return fmt.Errorf("render page: got %T, want *image.Gray", res.Result.RenderedImage)
		}
		// PDFium pads each row of its bitmap to a multiple of 4 bytes.
		gray := image.NewGray(src.Rect)
		for y := range src.Rect.Dy() {
			copy(gray.Pix[y*gray.Stride:(y+1)*gray.Stride], src.Pix[y*src.Stride:])
		}
		img = gray
		return nil
	})
	if err != nil {
		return nil, r.stopped(ctx, tctx, err)
	}
	return img, nil
}

// fitDPI lowers dpi until a page of w×h points fits MaxRenderPixels; 0 when
// not even 1 dpi fits.
func fitDPI(w, h float64, dpi int) int {
	px := w / 72 * h / 72 // pixels at 1 dpi
	if px <= 0 {
		return dpi
	}
	return min(dpi, int(math.Sqrt(MaxRenderPixels/px)))
}
