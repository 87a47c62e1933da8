package handlers

import (
	"errors"
	"fmt"
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
// that carries bytes. With a minRate it never moves it past the moment the
// bytes read so far would have been late at that rate, counted from start
// after grace: a transfer slower than that on average is cut off, however
// it spaces its bytes.
type progress struct {
	r      io.Reader
	extend func(time.Time)

	start   time.Time
	grace   time.Duration
	minRate int64 // bytes a second; 0 for no minimum
	read    int64
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.read += int64(n)
		p.extend(p.deadline(time.Now()))
	}
	return n, err
}

// deadline is when the next bytes must have come, at now.
func (p *progress) deadline(now time.Time) time.Time {
	idle := now.Add(transferIdle)
	if p.minRate == 0 {
		return idle
	}
	due := p.start.Add(p.grace + time.Duration(p.read*int64(time.Second)/p.minRate))
	if due.Before(idle) {
		return due
	}
	return idle
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

// partHeaderLimit fails the reads of multipart.Reader.NextPart past a part
// header's limit. The reads of a part's content are not limited here.
type partHeaderLimit struct {
	r io.Reader
	// left is what NextPart may still read, -1 while a part's content is read.
	left int64
}

// errPartHeaderTooLarge refuses an upload with a part header over its limit.
var errPartHeaderTooLarge = errBadRequest("invalid_multipart", fmt.Sprintf("the header of a part exceeds %d bytes", maxPartHeader))

func (l *partHeaderLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if l.left == 0 {
		return 0, errPartHeaderTooLarge
	}
	n, err := l.r.Read(p[:min(int64(len(p)), l.left)])
	l.left -= int64(n)
	return n, err
}

// requestBodyError answers a failed read of an upload's body: a body past
// its limit is a file too large, a part header past its own is refused as
// such, any other failure is a malformed multipart body.
func requestBodyError(err error, maxUpload int64) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errFileTooLarge(maxUpload)
	case errors.Is(err, errPartHeaderTooLarge):
		return errPartHeaderTooLarge
	}
	return errBadRequest("invalid_multipart", "the multipart body is malformed or ended early")
}
