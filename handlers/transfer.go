package handlers

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// transferIdle is how long an upload or a download may stall. The server's
// read and write timeouts bound a whole request, which would cut off a large
// file on a slow line; these transfers get a deadline that moves with each
// chunk instead.
const transferIdle = time.Minute

// progress moves a connection deadline transferIdle ahead of every read
// that carries bytes.
type progress struct {
	r      io.Reader
	extend func(time.Time)
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.extend(time.Now().Add(transferIdle))
	}
	return n, err
}

// progressSeeker is a progress over content that http.ServeContent seeks.
type progressSeeker struct {
	progress
	seeker io.Seeker
}

func (p *progressSeeker) Seek(offset int64, whence int) (int64, error) {
	return p.seeker.Seek(offset, whence)
}

// tailReader keeps the last bytes read through it, where a multipart body's
// closing delimiter is (an epilogue after it may be up to 1 KiB).
type tailReader struct {
	r    io.Reader
	keep int
	tail []byte
}

func (t *tailReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tail = append(t.tail, p[:n]...)
	if len(t.tail) > t.keep {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-t.keep:]...)
	}
	return n, err
}

// readErrors remembers the error of the reader it wraps, so that a failure
// of the request body is told from one of the disk.
type readErrors struct {
	r   io.Reader
	err error
}

func (e *readErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		e.err = err
	}
	return n, err
}

// requestBodyError answers a failed read of an upload's body: a body past
// its limit is a file too large, any other failure a malformed multipart body.
func requestBodyError(err error, maxUpload int64) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errFileTooLarge(maxUpload)
	}
	return errBadRequest("invalid_multipart", "the multipart body is malformed or ended early")
}
