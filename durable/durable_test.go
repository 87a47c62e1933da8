package durable_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"acctapi/durable"
)

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	var synced []string
	s := durable.Syncer{Sync: func(dir string) error {
		synced = append(synced, dir)
		return nil
	}}

	if err := s.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o750); err != nil {
		t.Fatalf("MkdirAll of a new path: %v", err)
	}
	want := []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
	if !slices.Equal(synced, want) {
		t.Errorf("synced %v, want the parent of each new directory, from the top: %v", synced, want)
	}

	synced = nil
	if err := s.MkdirAll(filepath.Join(root, "a", "b", "c"), 0o750); err != nil || len(synced) != 0 {
		t.Errorf("MkdirAll of an existing path: %v, synced %v; want nil, nothing", err, synced)
	}

	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := s.MkdirAll(file, 0o750); err == nil {
		t.Error("MkdirAll over a file: got nil, want an error")
	}
}

func TestDirSyncs(t *testing.T) {
	// The zero Syncer asks the operating system: a directory syncs, a
	// missing one is an error.
	var s durable.Syncer
	if err := s.Dir(t.TempDir()); err != nil {
		t.Errorf("Dir of a directory: %v", err)
	}
	if err := s.Dir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Dir of a missing directory: got nil, want an error")
	}
}
