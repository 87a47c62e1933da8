package backup

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"acctapi/durable"
)

// emptyOrMissing reports whether dir does not exist or is an empty directory.
func emptyOrMissing(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return false, err
	} else if !info.IsDir() {
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// tempDirBeside makes a new hidden directory in dir's parent, so that it can
// be renamed to dir: a rename within one file system is atomic.
func tempDirBeside(dirs durable.Syncer, dir, purpose string) (string, error) {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := dirs.MkdirAll(parent, 0o750); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+"."+purpose+"-*")
}

// moveInto renames the complete directory src to dst. An empty dst is
// replaced; with replace, so is one with contents: it is moved aside first and
// moved back if src cannot take its place, then removed.
func moveInto(dirs durable.Syncer, src, dst string, replace bool) error {
	parent := filepath.Dir(filepath.Clean(dst))
	if err := dirs.Dir(src); err != nil {
		return err
	}
	empty, err := emptyOrMissing(dst)
	if err != nil {
		return err
	}
	var aside string
	switch {
	case empty:
		// os.Rename refuses an existing directory as the target, even empty.
		if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	case !replace:
		return fmt.Errorf("%s is no longer empty; left it alone", dst)
	default:
		if aside, err = tempDirBeside(dirs, dst, "replaced"); err != nil {
			return err
		}
		if err := os.Rename(dst, filepath.Join(aside, "old")); err != nil {
			os.Remove(aside)
			return err
		}
	}
	if err := os.Rename(src, dst); err != nil {
		if aside != "" {
			err = errors.Join(err, os.Rename(filepath.Join(aside, "old"), dst), os.Remove(aside))
		}
		return err
	}
	if err := dirs.Dir(parent); err != nil {
		return err
	}
	if aside != "" {
		return os.RemoveAll(aside)
	}
	return nil
}

// digestFile copies the file at path to w and returns its size and sha256.
func digestFile(path string, w io.Writer) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), f)
	if err != nil {
		return 0, "", fmt.Errorf("read %s: %w", path, err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// copyFileSynced copies src to the new file dst, synced, and returns the
// size and sha256 of what it copied.
func copyFileSynced(src, dst string) (int64, string, error) {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return 0, "", err
	}
	n, sum, err := digestFile(src, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, sum, err
}

// writeFileSynced writes data to the new file path and syncs it.
func writeFileSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
