// Package filestore keeps the bytes of uploaded files: on the local disk
// (Store), one file per id under the data dir, or in an S3-compatible bucket
// (Bucket), one object per id. Either way a file becomes visible only
// complete: it is written to a temporary file or object first, and put in
// place by Keep together with the row that records it.
package filestore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"acctapi/durable"
)

// ErrTooLarge is returned by Write when the content exceeds the limit.
var ErrTooLarge = errors.New("file too large")

// Store is a directory of files named by id.
type Store struct {
	dir  string
	dirs durable.Syncer
}

// Open opens (creating if needed) the store in dir.
func Open(dir string) (*Store, error) {
	return open(dir, durable.Syncer{})
}

// open opens the store with the syncer of its directories. The store's own
// directory and its parent are synced at every start, not only when they
// are made: a start after a crash between making a shard directory and
// syncing its parent makes the shard's entry durable too.
func open(dir string, dirs durable.Syncer) (*Store, error) {
	if err := dirs.MkdirAll(filepath.Join(dir, "tmp"), 0o750); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	if err := errors.Join(dirs.Dir(filepath.Dir(filepath.Clean(dir))), dirs.Dir(dir)); err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	return &Store{dir: dir, dirs: dirs}, nil
}

// Pending is content written to a temporary file or object, not yet in
// place.
type Pending struct {
	// path is the local store's temporary file, object the bucket's
	// temporary object; "" once the content is in place or discarded.
	path   string
	object string
	Size   int64
	SHA256 []byte
	// Head holds up to the first 512 bytes, for sniffing the content type.
	Head []byte
}

// sniffLen is what http.DetectContentType reads.
const sniffLen = 512

// Write streams r to a temporary file, at most max bytes, hashing it on the
// way, and syncs it. Over max it removes what it wrote and returns
// ErrTooLarge. Memory stays flat whatever the size.
func (s *Store) Write(r io.Reader, max int64) (*Pending, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "upload-*")
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	p := &Pending{path: f.Name()}
	fail := func(err error) (*Pending, error) {
		f.Close()
		os.Remove(p.path)
		return nil, err
	}
	hash := sha256.New()
	head := &headWriter{limit: sniffLen}
	buf := bufio.NewWriterSize(f, 256<<10)
	n, err := io.Copy(io.MultiWriter(buf, hash, head), io.LimitReader(r, max+1))
	if err != nil {
		return fail(err)
	}
	if n > max {
		return fail(ErrTooLarge)
	}
	if err := buf.Flush(); err != nil {
		return fail(fmt.Errorf("file store: %w", err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("file store: %w", err))
	}
	if err := f.Close(); err != nil {
		os.Remove(p.path)
		return nil, fmt.Errorf("file store: %w", err)
	}
	p.Size, p.SHA256, p.Head = n, hash.Sum(nil), head.buf
	return p, nil
}

// headWriter keeps the first limit bytes written to it.
type headWriter struct {
	buf   []byte
	limit int
}

func (h *headWriter) Write(b []byte) (int, error) {
	if room := h.limit - len(h.buf); room > 0 {
		h.buf = append(h.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// Discard removes pending content that was not committed; after Commit it
// does nothing, so that a deferred Discard cannot remove a later upload's
// temporary file that took the same name.
func (s *Store) Discard(p *Pending) {
	if p.path != "" {
		os.Remove(p.path)
	}
}

// Commit moves pending content into place as the file with the id, and
// syncs its shard directory so that the rename survives power loss. A new
// shard directory's own entry is synced once, when it is made.
func (s *Store) Commit(p *Pending, id string) error {
	path, err := s.path(id)
	if err != nil {
		return err
	}
	if err := s.dirs.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	if err := os.Rename(p.path, path); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	p.path = ""
	if err := s.dirs.Dir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	return nil
}

// Keep puts pending content in place as the file with the id, then calls
// record, which writes the row that makes the file exist (or checks the row
// it must match). When record fails the bytes are removed again, so that no
// bytes stay behind without their row; the temporary file is gone either
// way. Every writer of stored files goes through it: uploads, the demo data
// and restores.
func (s *Store) Keep(p *Pending, id string, record func() error) error {
	if err := s.Commit(p, id); err != nil {
		s.Discard(p)
		return err
	}
	if err := record(); err != nil {
		if rmErr := s.Remove(id); rmErr != nil {
			return errors.Join(err, &LeftoverError{ID: id, Err: rmErr})
		}
		return err
	}
	return nil
}

// LeftoverError is joined to record's error when Keep could not remove the
// bytes of a file whose row was not written. They are harmless until the
// next Clean removes them, but the operator should hear of the failure.
type LeftoverError struct {
	ID  string
	Err error
}

func (e *LeftoverError) Error() string {
	return fmt.Sprintf("remove the bytes of unrecorded file %s: %v", e.ID, e.Err)
}

func (e *LeftoverError) Unwrap() error { return e.Err }

// Remove deletes the file with the id, if it exists.
func (s *Store) Remove(id string) error {
	path, err := s.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file store: %w", err)
	}
	return nil
}

// Reachable says whether the store's directory can be read: a cheap stat.
func (s *Store) Reachable(context.Context) error {
	if _, err := os.Stat(filepath.Join(s.dir, "tmp")); err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	return nil
}

// OpenFile opens the file with the id for reading.
func (s *Store) OpenFile(id string) (*os.File, error) {
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	return os.Open(path)
}

// Open returns the bytes of the file with the id.
func (s *Store) Open(_ context.Context, id string) (io.ReadCloser, error) {
	return s.OpenFile(id)
}

// Stat returns the size of the file with the id; its SHA-256 is not
// recorded beside it, so SHA256 is nil. The error is fs.ErrNotExist
// (errors.Is) when there is none.
func (s *Store) Stat(_ context.Context, id string) (*StoredObject, error) {
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return &StoredObject{Size: info.Size()}, nil
}

// Clean removes what a crash can leave behind: temporary files, and files for
// which known reports no database row. It returns how many it removed.
func (s *Store) Clean(known func(ids []string) (map[string]bool, error)) (int, error) {
	removed := 0
	tmp, err := os.ReadDir(filepath.Join(s.dir, "tmp"))
	if err != nil {
		return 0, fmt.Errorf("file store: %w", err)
	}
	for _, e := range tmp {
		if os.Remove(filepath.Join(s.dir, "tmp", e.Name())) == nil {
			removed++
		}
	}
	shards, err := os.ReadDir(s.dir)
	if err != nil {
		return removed, fmt.Errorf("file store: %w", err)
	}
	for _, shard := range shards {
		if !shard.IsDir() || shard.Name() == "tmp" {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.dir, shard.Name()))
		if err != nil {
			return removed, fmt.Errorf("file store: %w", err)
		}
		ids := make([]string, 0, len(entries))
		for _, e := range entries {
			ids = append(ids, e.Name())
		}
		keep, err := known(ids)
		if err != nil {
			return removed, err
		}
		for _, id := range ids {
			if !keep[id] && os.Remove(filepath.Join(s.dir, shard.Name(), id)) == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// path is where the file with the id lives.
func (s *Store) path(id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, id[len(id)-2:], id), nil
}

// checkID refuses anything but our own lower-case cuids, so that no id can
// name a path or an object outside the store.
func checkID(id string) error {
	if len(id) < 4 || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
		return fmt.Errorf("file store: invalid file id %q", id)
	}
	return nil
}
