package server

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"acctapi/filestore"
	"acctapi/handlers"
)

// ParseLocation splits s3://BUCKET[/PREFIX]; "local" is no bucket.
func ParseLocation(location string) (bucket, prefix string, err error) {
	if location == "local" || location == "" {
		return "", "", nil
	}
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return "", "", fmt.Errorf("--storage must be local or s3://BUCKET[/PREFIX], not %q", location)
	}
	return u.Host, strings.Trim(u.Path, "/"), nil
}

// FileStore is what the server and the commands need of the file store: serving, the
// sweep, and a migration's reads and checks.
type FileStore interface {
	handlers.FileStore
	Clean(known func(ids []string) (map[string]bool, error)) (int, error)
	Open(ctx context.Context, id string) (io.ReadCloser, error)
	Stat(ctx context.Context, id string) (*filestore.StoredObject, error)
}

// OpenFiles opens the file store the location names: the local store in
// dir, or the bucket. maxUpload sets the part size of uploads to a bucket.
func OpenFiles(ctx context.Context, s StorageConfig, dir string, maxUpload int64, now func() time.Time) (FileStore, error) {
	bucket, prefix, err := ParseLocation(s.Location)
	if err != nil {
		return nil, err
	}
	if bucket == "" {
		return filestore.Open(dir)
	}
	return OpenBucket(ctx, s, bucket, prefix, maxUpload, now)
}

// OpenBucket opens the bucket with the configuration's endpoint and keys.
func OpenBucket(ctx context.Context, s StorageConfig, bucket, prefix string, maxUpload int64, now func() time.Time) (*filestore.Bucket, error) {
	return filestore.OpenBucket(ctx, filestore.BucketOptions{
		Endpoint: s.Endpoint, Region: s.Region, PathStyle: s.PathStyle,
		AccessKeyID: s.AccessKeyID, SecretAccessKey: s.SecretAccessKey,
		Bucket: bucket, Prefix: prefix, SweepAfter: s.SweepAfter, Now: now,
	}, maxUpload)
}
