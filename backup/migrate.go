package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"acctapi/db"
	"acctapi/filestore"
)

// Files is a file store a migration reads from or writes to: the local
// store (filestore.Store) or a bucket (filestore.Bucket).
type Files interface {
	Write(r io.Reader, max int64) (*filestore.Pending, error)
	Keep(p *filestore.Pending, id string, record func() error) error
	Open(ctx context.Context, id string) (io.ReadCloser, error)
	Stat(ctx context.Context, id string) (*filestore.StoredObject, error)
}

// MigrateOptions say which files Migrate copies, from where to where.
type MigrateOptions struct {
	// DB records the files: every file it records is copied.
	DB *db.DB
	// From and To are the stores the bytes are copied from and to.
	From, To Files
	// Progress, when not nil, is told of each file once it is copied or
	// found in place.
	Progress func(MigrateProgress)
}

// MigrateProgress is how far a migration is.
type MigrateProgress struct {
	// Files and Bytes are the files done (copied or found in place) and
	// their bytes, of TotalFiles and TotalBytes.
	Files, TotalFiles int
	Bytes, TotalBytes int64
	// Copied and Skipped count the files copied and those found in place.
	Copied, Skipped int
	// ID and LastSkipped say which file was done last, and whether it was
	// found in place.
	ID          string
	LastSkipped bool
}

// Migrate copies the bytes of every file the database records from o.From
// to o.To, each checked against its row's size and SHA-256 on the way, and
// skips those already in o.To and verified there: by the SHA-256 a bucket
// recorded when the object was put in place, or by hashing a local file.
// It stops at the first error; run again, it takes up where it stopped and
// changes nothing already in place. The list of files is read first, at
// about 100 bytes a file, so that no read transaction stays open while
// the bytes are copied: files recorded later are copied by the next run.
func Migrate(ctx context.Context, o MigrateOptions) (MigrateProgress, error) {
	var files []db.FileDigest
	var p MigrateProgress
	err := o.DB.FileDigests(ctx, func(f db.FileDigest) error {
		files = append(files, f)
		p.TotalFiles++
		p.TotalBytes += f.Size
		return nil
	})
	if err != nil {
		return p, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		inPlace, err := verifiedIn(ctx, o.To, f)
		if err != nil {
			return p, err
		}
		if !inPlace {
			if err := migrateFile(ctx, o.From, o.To, f); err != nil {
				return p, err
			}
			p.Copied++
		} else {
			p.Skipped++
		}
		p.Files++
		p.Bytes += f.Size
		p.ID, p.LastSkipped = f.ID, inPlace
		if o.Progress != nil {
			o.Progress(p)
		}
	}
	return p, nil
}

// verifiedIn says whether the store holds the file's bytes as its row
// records them.
func verifiedIn(ctx context.Context, store Files, f db.FileDigest) (bool, error) {
	stat, err := store.Stat(ctx, f.ID)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	case stat.Size != f.Size:
		return false, nil
	case stat.SHA256 != nil:
		return bytes.Equal(stat.SHA256, f.SHA256), nil
	}
	r, err := store.Open(ctx, f.ID)
	if err != nil {
		return false, fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	defer r.Close()
	hash := sha256.New()
	if _, err := io.Copy(hash, r); err != nil {
		return false, fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	return bytes.Equal(hash.Sum(nil), f.SHA256), nil
}

// migrateFile copies one file's bytes between stores, refusing bytes that
// do not match its row.
func migrateFile(ctx context.Context, from, to Files, f db.FileDigest) error {
	r, err := from.Open(ctx, f.ID)
	if err != nil {
		return fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	defer r.Close()
	p, err := to.Write(r, f.Size)
	if errors.Is(err, filestore.ErrTooLarge) {
		return fmt.Errorf("the bytes of file %s are longer than the %d bytes its row records", f.ID, f.Size)
	}
	if err != nil {
		return fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	return to.Keep(p, f.ID, func() error { return matchRow(p, f) })
}

// matchRow compares written bytes with their file's row.
func matchRow(p *filestore.Pending, f db.FileDigest) error {
	if p.Size != f.Size || !bytes.Equal(p.SHA256, f.SHA256) {
		return fmt.Errorf("the bytes of file %s (%d bytes, sha256 %x) do not match its row (%d bytes, sha256 %x)",
			f.ID, p.Size, p.SHA256, f.Size, f.SHA256)
	}
	return nil
}
