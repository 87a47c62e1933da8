package cmd

import (
	"acctapi/server"

	"slices"
	"strings"
	"testing"

	"acctapi/filestore/s3test"
)

// testStore is where a test's data dir keeps its files: the local store
// (bucket nil), or a bucket on a versitygw of the test's own.
type testStore struct {
	name   string
	bucket *s3test.Server
}

// testPrefix is the prefix of the objects in a test's bucket.
const testPrefix = "acctapi"

// forEachStore runs test as a subtest per file store: the local one, and a
// bucket on versitygw (skipped, with how to install it, where versitygw is
// missing; failed under CI=true).
func forEachStore(t *testing.T, test func(t *testing.T, store *testStore)) {
	for _, name := range []string{"local", "s3"} {
		t.Run(name, func(t *testing.T) {
			store := &testStore{name: name}
			if name == "s3" {
				store.bucket = s3test.Start(t)
			}
			test(t, store)
		})
	}
}

// storage is the file store's configuration. A bucket's leftovers are
// swept at once: the tests run one server at a time.
func (s *testStore) storage() server.StorageConfig {
	if s.bucket == nil {
		return server.StorageConfig{Location: "local"}
	}
	return server.StorageConfig{
		Location: "s3://" + s.bucket.Bucket + "/" + testPrefix, Endpoint: s.bucket.Endpoint, PathStyle: true,
		AccessKeyID: s.bucket.AccessKeyID, SecretAccessKey: s.bucket.SecretAccessKey,
	}
}

// args are the command line flags of the file store.
func (s *testStore) args() []string {
	if s.bucket == nil {
		return nil
	}
	c := s.storage()
	return []string{"--storage", c.Location, "--s3-endpoint", c.Endpoint, "--s3-path-style", "--s3-sweep-after", "0s"}
}

// env is the environment of a process of the binary: the bucket's keys.
func (s *testStore) env() []string {
	if s.bucket == nil {
		return nil
	}
	return []string{"AWS_ACCESS_KEY_ID=" + s.bucket.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + s.bucket.SecretAccessKey}
}

// files lists what the store holds as flStoreFiles names it: a file by
// flStorePath, anything else (a temporary file or object, a multipart
// upload never completed) under tmp/.
func (s *testStore) files(t *testing.T, dataDir string) []string {
	t.Helper()
	if s.bucket == nil {
		return flStoreFiles(t, dataDir)
	}
	var files []string
	for _, key := range s.bucket.Keys(t, testPrefix+"/") {
		if id, ok := strings.CutPrefix(key, testPrefix+"/files/"); ok {
			files = append(files, flStorePath(id))
		} else {
			files = append(files, "tmp/"+key)
		}
	}
	for _, key := range s.bucket.Uploads(t, testPrefix+"/") {
		files = append(files, "tmp/multipart:"+key)
	}
	slices.Sort(files)
	return files
}

// configure sets the store of a configuration for an in-process server.
func (s *testStore) configure(cfg *Config) *Config {
	cfg.Storage = s.storage()
	return cfg
}
