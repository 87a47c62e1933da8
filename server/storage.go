package server

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"acctapi/backup"
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

// MigrateFiles copies the data dir's files from cfg.Storage to the store
// named to, telling progress of each file, and returns the location they
// came from and what it did. A copy cut off is taken up where it stopped
// by the next call.
func MigrateFiles(ctx context.Context, cfg *Config, to string, progress func(backup.MigrateProgress)) (string, backup.MigrateProgress, error) {
	from := cmp.Or(cfg.Storage.Location, "local")
	if strings.TrimSuffix(to, "/") == strings.TrimSuffix(from, "/") {
		return from, backup.MigrateProgress{}, fmt.Errorf("--to %s is the store the files are in (--storage %s)", to, from)
	}
	store, err := OpenCurrentStore(ctx, cfg)
	if err != nil {
		return from, backup.MigrateProgress{}, err
	}
	defer store.Close()
	source, err := OpenFiles(ctx, cfg.Storage, cfg.FilesPath(), maxMigratedFile, cfg.Now)
	if err != nil {
		return from, backup.MigrateProgress{}, err
	}
	target := cfg.Storage
	target.Location = to
	dest, err := OpenFiles(ctx, target, cfg.FilesPath(), maxMigratedFile, cfg.Now)
	if err != nil {
		return from, backup.MigrateProgress{}, err
	}
	done, err := backup.Migrate(ctx, backup.MigrateOptions{DB: store, From: source, To: dest, Progress: progress})
	if err != nil {
		err = fmt.Errorf("after %d of %d files: %w (run the command again to go on)", done.Files, done.TotalFiles, err)
	}
	return from, done, err
}

// maxMigratedFile sets the part size of a migration's uploads to a bucket:
// files of up to 80 GB fit S3's 10,000 parts of 8 MiB.
const maxMigratedFile = 80_000_000_000

// Bucket is the bucket cfg.Storage names, for a backup; nil for the local
// store.
func Bucket(ctx context.Context, cfg *Config) (backup.Bucket, error) {
	bucket, prefix, err := ParseLocation(cfg.Storage.Location)
	if err != nil || bucket == "" {
		return nil, err
	}
	return OpenBucket(ctx, cfg.Storage, bucket, prefix, DefaultMaxUpload, cfg.Now)
}
