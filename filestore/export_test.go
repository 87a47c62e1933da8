package filestore

import "acctapi/durable"

// OpenCounting opens the store with sync called for every directory it
// syncs, so that tests see which entries are made durable.
func OpenCounting(dir string, sync func(dir string) error) (*Store, error) {
	return open(dir, durable.Syncer{Sync: sync})
}
