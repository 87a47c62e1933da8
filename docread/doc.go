// Package docread turns a stored document's bytes into text and embedded
// files: the text layer of every PDF page, the files embedded in a PDF (the
// e-invoice XML of a ZUGFeRD, Factur-X or XRechnung PDF/A-3), the text of a
// plain-text file and the element text of an XML file. It knows nothing of
// HTTP or SQL; it takes bytes and returns values.
//
// A PDF's files are those of its EmbeddedFiles name tree and of its pages'
// FileAttachment annotations, as PDFium lists them, and every other
// embedded file stream its bytes hold (one only an /AF array names), found
// by a bounded scan of an unencrypted PDF of up to 64 MiB.
//
// PDFs are read by PDFium compiled to WebAssembly and run by wazero, inside
// the Go process without cgo: a hostile PDF can only reach the memory of its
// own WebAssembly instance, which sees no file system. The module is compiled
// once by NewReader (seconds; a compilation cache directory makes later
// starts take a fraction of a second) and Options.Instances instances read
// documents side by side.
//
// Every document is read within Limits; crossing one ends the read with an
// *Error whose Reason says which, in words for a person:
//
//   - Timeout (default 60s): reading one document, or rendering one page,
//     stops when it takes longer, and the PDFium instance doing it is
//     discarded and replaced.
//   - MaxPages (default 500): a PDF with more pages is not read at all, so
//     that every read document is read whole.
//   - MaxMemory (default 256 MiB): the memory of one PDFium instance. A PDF
//     that needs more fails; its instance is discarded. An instance that
//     grew past 64 MiB on a document it read is replaced afterwards, so that
//     one large document does not keep its memory for the next ones.
//   - MaxText (default 4 MiB): text kept per document. Longer text is cut at
//     the limit and Document.Truncated is set; pages after the cut are left
//     out. A text or XML file is read for at most 8 times MaxText bytes.
//   - MaxAttachmentBytes (default 10 MiB): bytes of embedded files kept per
//     document, all of them together. A file that does not fit is listed
//     with its name and size and no data.
//
// Formats are told by the bytes first (a "%PDF-" in the first 1024 bytes,
// the signatures of images and archives), then by the MIME type, then by the
// name. A file that claims to be a PDF without being one ends in an *Error;
// images and other formats end in an *Error that wraps ErrUnsupported, as
// they need OCR or another reader. RenderPage draws a page for OCR.
//
// XML is read without a DTD: any DOCTYPE is refused (an internal subset, an
// external DTD by SYSTEM or PUBLIC, or a bare one), entities other than
// XML's five are errors, and nothing external is ever fetched.
package docread
