// Package durable makes new directory entries survive power loss. An fsync
// of a file keeps its contents, but POSIX keeps the file's name in its
// directory, and a new directory's name in its parent, only once that
// directory is fsynced too. Every place that creates a file or directory
// that a committed row or an acknowledged answer depends on asks this
// package to sync the directory it created the entry in.
package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Syncer syncs directories. Its zero value asks the operating system; a
// test sets Sync to count the directories synced.
type Syncer struct {
	Sync func(dir string) error
}

// Dir syncs dir, so that the entries created, renamed or removed in it
// survive power loss.
func (s Syncer) Dir(dir string) error {
	if s.Sync != nil {
		return s.Sync(dir)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// MkdirAll makes the directory path and its missing parents, as
// os.MkdirAll does, and syncs the parent of each directory it made, from
// the top down. A path that exists costs one stat and no sync: callers run
// it on every write without a cost.
func (s Syncer) MkdirAll(path string, perm fs.FileMode) error {
	path = filepath.Clean(path)
	if info, err := os.Stat(path); err == nil {
		if !info.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: path, Err: errors.New("not a directory")}
		}
		return nil
	}
	missing := []string{path}
	for dir := filepath.Dir(path); dir != missing[len(missing)-1]; dir = filepath.Dir(dir) {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		missing = append(missing, dir)
	}
	if err := os.MkdirAll(path, perm); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := s.Dir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}
