package filestore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// ErrUnavailable wraps the errors of a bucket that did not answer, or
// answered with an error: the API answers them 503.
var ErrUnavailable = errors.New("object store unavailable")

// BucketOptions say which S3-compatible bucket a Bucket keeps its files in.
type BucketOptions struct {
	// Endpoint is the S3 API's address: a URL (http://127.0.0.1:7070), or a
	// host with an optional port, spoken to over HTTPS. "" is AWS S3.
	Endpoint string
	// Region is the bucket's region; "" asks the bucket once, when the
	// first link is signed.
	Region string
	// PathStyle names the bucket in the path (MinIO, versitygw, Ceph,
	// Garage) instead of in the host name (AWS S3, R2).
	PathStyle bool
	// AccessKeyID and SecretAccessKey sign every request.
	AccessKeyID, SecretAccessKey string
	// Bucket and Prefix say where the objects go: Prefix+"files/"+id for a
	// file, Prefix+"uploads/"+a random name for an upload in progress.
	Bucket, Prefix string
	// SweepAfter is how old an object without a row, or an upload never
	// completed, must be before Clean removes it: a second server on the
	// bucket (a rolling restart) may still be writing younger ones.
	SweepAfter time.Duration
	// Now is the clock Clean compares the objects' times with; time.Now
	// when nil.
	Now func() time.Time
}

// Bucket is a file store in an S3-compatible bucket, one object per file id.
// An upload streams to a temporary object in parts of partSize bytes; Keep
// copies it to the file's key on the server, writes the row, and removes the
// temporary object.
type Bucket struct {
	client     *minio.Client
	bucket     string
	prefix     string
	partSize   uint64
	sweepAfter time.Duration
	now        func() time.Time
	health     reachability
}

// reachableMaxAge is how long the answer of a check of the bucket stands
// for its state, so that a health probe every second sends one request to
// the bucket every few seconds at most.
const reachableMaxAge = 5 * time.Second

// reachability is the last check of the bucket, and when it was made.
type reachability struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

// Part sizes of uploads: S3 takes at most 10,000 parts of at least 5 MiB,
// but the last one, per upload. An upload holds one part in memory.
const (
	minPartSize = 8 << 20
	maxParts    = 10000
	// maxCopySize is the largest object one CopyObject request copies;
	// larger ones are copied part by part.
	maxCopySize = 5 << 30
)

// sha256Metadata is the user metadata (x-amz-meta-sha256) that holds each
// stored object's SHA-256 in hex, written when it is put in place: what
// migrate and backup compare with the row without reading the object.
const sha256Metadata = "Sha256"

// OpenBucket connects to the bucket and checks that it exists. maxUpload is
// the largest file an upload may hold; it sets the part size of uploads.
func OpenBucket(ctx context.Context, o BucketOptions, maxUpload int64) (*Bucket, error) {
	if o.Bucket == "" {
		return nil, errors.New("file store: no bucket named")
	}
	if o.AccessKeyID == "" || o.SecretAccessKey == "" {
		return nil, errors.New("file store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to reach the bucket")
	}
	host, secure, err := endpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	lookup := minio.BucketLookupDNS
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(o.AccessKeyID, o.SecretAccessKey, ""),
		Secure:       secure,
		Region:       o.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("file store: %w", err)
	}
	b := &Bucket{client: client, bucket: o.Bucket, prefix: keyPrefix(o.Prefix), partSize: partSize(maxUpload),
		sweepAfter: o.SweepAfter, now: o.Now}
	if b.now == nil {
		b.now = time.Now
	}
	if err := b.Reachable(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// endpoint splits an endpoint into the host (and port) and whether it is
// spoken to over HTTPS.
func endpoint(s string) (host string, secure bool, err error) {
	switch {
	case s == "":
		return "s3.amazonaws.com", true, nil
	case !strings.Contains(s, "://"):
		return s, true, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return "", false, fmt.Errorf("file store: the S3 endpoint %q is not http(s)://host[:port]", s)
	}
	return u.Host, u.Scheme == "https", nil
}

// keyPrefix is a prefix ending in one slash, or "".
func keyPrefix(prefix string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return ""
	}
	return prefix + "/"
}

// partSize is the part size of uploads of at most maxUpload bytes: 8 MiB,
// or the size that fits the largest upload into S3's 10,000 parts.
func partSize(maxUpload int64) uint64 {
	size := max(uint64(minPartSize), uint64(maxUpload/maxParts+1))
	return (size + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB
}

// PartSize is the memory one upload holds while it streams.
func (b *Bucket) PartSize() int64 { return int64(b.partSize) }

// Bucket names the bucket and its prefix, as s3://BUCKET/PREFIX.
func (b *Bucket) String() string { return "s3://" + b.bucket + "/" + b.prefix }

// key is the object of the file with the id.
func (b *Bucket) key(id string) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	return b.prefix + "files/" + id, nil
}

// unavailable wraps an error of the bucket.
func unavailable(err error) error {
	return fmt.Errorf("file store: %w: %w", ErrUnavailable, err)
}

// Write streams r to a new temporary object, at most max bytes, hashing it
// on the way. The object is uploaded in parts of PartSize bytes, one in
// memory at a time. Over max, or when r or the bucket fails, the upload is
// aborted: no object and no parts stay behind (an abort that fails too
// leaves parts that Clean removes).
func (b *Bucket) Write(r io.Reader, max int64) (*Pending, error) {
	var name [16]byte
	rand.Read(name[:])
	object := b.prefix + "uploads/" + hex.EncodeToString(name[:])
	in := &meteredReader{r: r, max: max, hash: sha256.New(), head: headWriter{limit: sniffLen}}
	// The upload is not tied to the request's context: an abort must run
	// even when the client has gone. A stalled body is cut off by the
	// handler's read deadline.
	info, err := b.client.PutObject(context.Background(), b.bucket, object, in, -1, minio.PutObjectOptions{
		PartSize: b.partSize, ContentType: "application/octet-stream",
	})
	switch {
	case in.err != nil && err == nil:
		b.remove(object)
		return nil, in.err
	case in.err != nil:
		return nil, in.err
	case err != nil:
		return nil, unavailable(err)
	case info.Size != in.n:
		b.remove(object)
		return nil, unavailable(fmt.Errorf("the bucket stored %d bytes of the %d sent", info.Size, in.n))
	}
	return &Pending{object: object, Size: in.n, SHA256: in.hash.Sum(nil), Head: in.head.buf}, nil
}

// meteredReader hashes and counts what it reads and keeps its head, and
// fails with ErrTooLarge past max bytes. err is the error it failed with,
// its reader's or its own, as opposed to one of the bucket.
type meteredReader struct {
	r    io.Reader
	max  int64
	n    int64
	hash hash.Hash
	head headWriter
	err  error
}

func (m *meteredReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.n += int64(n)
	if m.n > m.max {
		m.err = ErrTooLarge
		return 0, m.err
	}
	m.hash.Write(p[:n])
	m.head.Write(p[:n])
	if err != nil && err != io.EOF {
		// Wrapped, so that the client does not take io.ErrUnexpectedEOF
		// for the short last part of a complete body.
		m.err = err
		return n, &readError{err}
	}
	return n, err
}

// readError is the failure of an upload's body, as the client sees it.
type readError struct{ err error }

func (e *readError) Error() string { return "read the upload: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// Discard removes a pending temporary object; after Keep it does nothing.
func (b *Bucket) Discard(p *Pending) {
	if p.object != "" {
		b.remove(p.object)
		p.object = ""
	}
}

// remove deletes an object whose failure to go Clean makes up for.
func (b *Bucket) remove(object string) {
	_ = b.client.RemoveObject(context.Background(), b.bucket, object, minio.RemoveObjectOptions{})
}

// Keep copies pending content to the object of the file with the id (on
// the server: the bytes do not come back), with its SHA-256 in the object's
// metadata, removes the temporary object, then calls record, which writes
// the row that makes the file exist (or checks the row it must match). When
// record fails the object is removed again. A crash after the copy leaves
// an object without a row, which Clean removes.
func (b *Bucket) Keep(p *Pending, id string, record func() error) error {
	err := b.commit(p, id)
	b.Discard(p)
	if err != nil {
		return err
	}
	if err := record(); err != nil {
		if rmErr := b.Remove(id); rmErr != nil {
			return errors.Join(err, &LeftoverError{ID: id, Err: rmErr})
		}
		return err
	}
	return nil
}

// commit copies the pending object to the file's key.
func (b *Bucket) commit(p *Pending, id string) error {
	key, err := b.key(id)
	if err != nil {
		return err
	}
	if p.object == "" {
		return errors.New("file store: the pending upload was discarded")
	}
	dst := minio.CopyDestOptions{Bucket: b.bucket, Object: key, ReplaceMetadata: true,
		UserMetadata: map[string]string{sha256Metadata: hex.EncodeToString(p.SHA256)}}
	src := minio.CopySrcOptions{Bucket: b.bucket, Object: p.object}
	if p.Size <= maxCopySize {
		_, err = b.client.CopyObject(context.Background(), dst, src)
	} else {
		_, err = b.client.ComposeObject(context.Background(), dst, src)
	}
	if err != nil {
		return unavailable(err)
	}
	return nil
}

// Remove deletes the object of the file with the id, if it exists.
func (b *Bucket) Remove(id string) error {
	key, err := b.key(id)
	if err != nil {
		return err
	}
	if err := b.client.RemoveObject(context.Background(), b.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return unavailable(err)
	}
	return nil
}

// SignedURL is a pre-signed GET of the file's object, valid for lifetime,
// whose answer carries contentType and contentDisposition: the bucket
// serves the bytes, not acctapi. Signing is local once the region is known.
func (b *Bucket) SignedURL(ctx context.Context, id string, lifetime time.Duration, contentType, contentDisposition string) (string, error) {
	key, err := b.key(id)
	if err != nil {
		return "", err
	}
	u, err := b.client.PresignedGetObject(ctx, b.bucket, key, lifetime, url.Values{
		"response-content-type":        {contentType},
		"response-content-disposition": {contentDisposition},
	})
	if err != nil {
		return "", unavailable(err)
	}
	return u.String(), nil
}

// Reachable says whether the bucket answers: a HEAD of the bucket, whose
// answer stands for reachableMaxAge. Concurrent callers wait for one check.
func (b *Bucket) Reachable(ctx context.Context) error {
	b.health.mu.Lock()
	defer b.health.mu.Unlock()
	now := time.Now()
	if !b.health.checked.IsZero() && now.Sub(b.health.checked) < reachableMaxAge {
		return b.health.err
	}
	exists, err := b.client.BucketExists(ctx, b.bucket)
	switch {
	case err != nil:
		err = unavailable(err)
	case !exists:
		err = unavailable(fmt.Errorf("the bucket %s does not exist", b.bucket))
	}
	b.health.checked, b.health.err = now, err
	return err
}

// StoredObject is what the bucket says of a file's object.
type StoredObject struct {
	Size int64
	// SHA256 is the digest recorded when the object was put in place; nil
	// for an object written by another program.
	SHA256 []byte
}

// Stat returns the size and recorded SHA-256 of the file's object. The
// error is fs.ErrNotExist (errors.Is) when there is none.
func (b *Bucket) Stat(ctx context.Context, id string) (*StoredObject, error) {
	key, err := b.key(id)
	if err != nil {
		return nil, err
	}
	info, err := b.client.StatObject(ctx, b.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).StatusCode == 404 {
			return nil, fmt.Errorf("file store: object %s: %w", key, fs.ErrNotExist)
		}
		return nil, unavailable(err)
	}
	sum, _ := hex.DecodeString(info.UserMetadata[sha256Metadata])
	if len(sum) != sha256.Size {
		sum = nil
	}
	return &StoredObject{Size: info.Size, SHA256: sum}, nil
}

// Open returns the bytes of the file's object.
func (b *Bucket) Open(ctx context.Context, id string) (io.ReadCloser, error) {
	key, err := b.key(id)
	if err != nil {
		return nil, err
	}
	obj, err := b.client.GetObject(ctx, b.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, unavailable(err)
	}
	return obj, nil
}

// Clean removes what a crash can leave behind, once older than the sweep
// age: uploads never completed (with their parts), temporary objects, and
// objects of files for which known reports no database row. It returns how
// many it removed.
func (b *Bucket) Clean(known func(ids []string) (map[string]bool, error)) (int, error) {
	ctx := context.Background()
	cutoff := b.now().Add(-b.sweepAfter)
	removed := 0
	for u := range b.client.ListIncompleteUploads(ctx, b.bucket, b.prefix, true) {
		if u.Err != nil {
			return removed, unavailable(u.Err)
		}
		if u.Initiated.Before(cutoff) && b.client.RemoveIncompleteUpload(ctx, b.bucket, u.Key) == nil {
			removed++
		}
	}
	for obj := range b.client.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: b.prefix + "uploads/", Recursive: true}) {
		if obj.Err != nil {
			return removed, unavailable(obj.Err)
		}
		if obj.LastModified.Before(cutoff) && b.client.RemoveObject(ctx, b.bucket, obj.Key, minio.RemoveObjectOptions{}) == nil {
			removed++
		}
	}
	var batch []string
	sweep := func() error {
		keep, err := known(batch)
		if err != nil {
			return err
		}
		for _, id := range batch {
			if !keep[id] && b.Remove(id) == nil {
				removed++
			}
		}
		batch = batch[:0]
		return nil
	}
	files := b.prefix + "files/"
	for obj := range b.client.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: files, Recursive: true}) {
		if obj.Err != nil {
			return removed, unavailable(obj.Err)
		}
		id := strings.TrimPrefix(obj.Key, files)
		// Objects that are not ours, and recent ones, stay.
		if checkID(id) != nil || !obj.LastModified.Before(cutoff) {
			continue
		}
		if batch = append(batch, id); len(batch) == 500 {
			if err := sweep(); err != nil {
				return removed, err
			}
		}
	}
	if len(batch) > 0 {
		if err := sweep(); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// List calls each with the id and size of every file object in the
// bucket, in id order: one request per 1,000 objects, their SHA-256s left
// out (a listing does not carry metadata).
func (b *Bucket) List(ctx context.Context, each func(id string, size int64) error) error {
	files := b.prefix + "files/"
	for obj := range b.client.ListObjects(ctx, b.bucket, minio.ListObjectsOptions{Prefix: files, Recursive: true}) {
		if obj.Err != nil {
			return unavailable(obj.Err)
		}
		id := strings.TrimPrefix(obj.Key, files)
		if checkID(id) != nil {
			continue
		}
		if err := each(id, obj.Size); err != nil {
			return err
		}
	}
	return nil
}

// Key is the object key of the file with the id.
func (b *Bucket) Key(id string) string { return b.prefix + "files/" + id }
