package backup

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"acctapi/db"
)

// ObjectsName is the manifest of the objects of a backup whose files are
// in a bucket: a JSON line per file, in id order.
const ObjectsName = "objects.jsonl"

// Bucket is the bucket a data dir's files are in (filestore.Bucket): a
// backup lists it, and does not copy it.
type Bucket interface {
	// String names the bucket, as s3://BUCKET/PREFIX.
	String() string
	// Key is the object key of the file with the id.
	Key(id string) string
	// List calls each with the id and size of every file object, in id
	// order.
	List(ctx context.Context, each func(id string, size int64) error) error
}

// ObjectsDigest is what backup.json says of objects.jsonl.
type ObjectsDigest struct {
	// Location is the bucket and prefix the objects are in.
	Location string `json:"location"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// objectLine is one line of objects.jsonl.
type objectLine struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// listObjects writes objects.jsonl at path: the key, size and SHA-256 of the
// object of every file the database at dbPath records, after checking that
// the bucket holds an object of that size for each. It sets m's schema
// version, file totals and objects digest.
func listObjects(ctx context.Context, dbPath string, bucket Bucket, path string, m *Manifest) error {
	listing := listInOrder(ctx, bucket)
	defer listing.stop()

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	defer f.Close()
	hash := sha256.New()
	out := bufio.NewWriter(io.MultiWriter(f, hash))
	enc := json.NewEncoder(out)
	err = eachFile(ctx, dbPath, false, m, func(d db.FileDigest) error {
		size, err := listing.find(d.ID)
		if err != nil {
			return err
		}
		if size != d.Size {
			return fmt.Errorf("the object of file %s in %s has %d bytes, its row records %d", d.ID, bucket, size, d.Size)
		}
		return enc.Encode(objectLine{Key: bucket.Key(d.ID), Size: d.Size, SHA256: hex.EncodeToString(d.SHA256)})
	})
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	m.Objects = &ObjectsDigest{Location: bucket.String(), Size: info.Size(), SHA256: hex.EncodeToString(hash.Sum(nil))}
	return f.Close()
}

// orderedListing walks a bucket's listing, in id order, beside the rows.
type orderedListing struct {
	bucket  Bucket
	objects chan listedObject
	cancel  context.CancelFunc
	next    *listedObject
}

type listedObject struct {
	id   string
	size int64
	err  error
}

// listInOrder starts listing the bucket.
func listInOrder(ctx context.Context, bucket Bucket) *orderedListing {
	ctx, cancel := context.WithCancel(ctx)
	l := &orderedListing{bucket: bucket, objects: make(chan listedObject, 1000), cancel: cancel}
	go func() {
		defer close(l.objects)
		err := bucket.List(ctx, func(id string, size int64) error {
			select {
			case l.objects <- listedObject{id: id, size: size}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil && ctx.Err() == nil {
			l.objects <- listedObject{err: err}
		}
	}()
	return l
}

// find returns the size of the object of the file with the id, skipping
// the objects listed before it (which no row of the backup names).
func (l *orderedListing) find(id string) (int64, error) {
	for {
		if l.next == nil {
			o, ok := <-l.objects
			if !ok {
				return 0, fmt.Errorf("%s holds no object of file %s", l.bucket, id)
			}
			l.next = &o
		}
		o := *l.next
		switch {
		case o.err != nil:
			return 0, o.err
		case o.id == id:
			l.next = nil
			return o.size, nil
		case o.id > id:
			return 0, fmt.Errorf("%s holds no object of file %s", l.bucket, id)
		}
		l.next = nil
	}
}

// stop ends the listing.
func (l *orderedListing) stop() {
	l.cancel()
	for range l.objects {
	}
}

// checkObjects compares objects.jsonl in dir with the files the database at
// dbPath records, line by line, after checking its digest against m's, and
// sets m's schema version and file totals to the database's, for the
// caller to compare with the manifest's.
func checkObjects(ctx context.Context, dir, dbPath string, m *Manifest) error {
	path := filepath.Join(dir, ObjectsName)
	size, sum, err := digestFile(path, io.Discard)
	if err != nil {
		return err
	}
	if size != m.Objects.Size || sum != m.Objects.SHA256 {
		return fmt.Errorf("%s has %d bytes with sha256 %s, the manifest says %d bytes with sha256 %s",
			ObjectsName, size, sum, m.Objects.Size, m.Objects.SHA256)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReader(f))
	err = eachFile(ctx, dbPath, true, m, func(d db.FileDigest) error {
		var line objectLine
		if err := dec.Decode(&line); err != nil {
			return fmt.Errorf("%s: the line of file %s: %w", ObjectsName, d.ID, err)
		}
		if !strings.HasSuffix(line.Key, "/"+d.ID) || line.Size != d.Size || line.SHA256 != hex.EncodeToString(d.SHA256) {
			return fmt.Errorf("%s names %s with %d bytes and sha256 %s, the database file %s with %d bytes and sha256 %x",
				ObjectsName, line.Key, line.Size, line.SHA256, d.ID, d.Size, d.SHA256)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := dec.Decode(&objectLine{}); err != io.EOF {
		return fmt.Errorf("%s names more objects than the database records files", ObjectsName)
	}
	return nil
}
