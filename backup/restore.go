package backup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"acctapi/db"
	"acctapi/durable"
	"acctapi/filestore"
)

// RestoreOptions say which backup Restore restores, and where to.
type RestoreOptions struct {
	// From is the directory of a backup that Write wrote.
	From string
	// DataDir is the data dir to restore into.
	DataDir string
	// Force replaces the contents of a DataDir that is not empty.
	Force bool
	// Dirs syncs the directories the restore makes entries in; its zero
	// value asks the operating system.
	Dirs durable.Syncer
}

// Restore verifies the backup in o.From while building a data dir from it
// beside o.DataDir, then swaps it in, and returns the backup's manifest.
// Nothing in o.DataDir changes until the whole backup is verified: the
// manifest, the database's sha256, SQLite's integrity and foreign key
// checks, and every file against its row. It refuses a data dir that is not
// empty unless o.Force is set, and one whose database another process has
// open.
func Restore(ctx context.Context, o RestoreOptions) (_ *Manifest, err error) {
	from, target := o.From, o.DataDir
	m, err := readManifest(from)
	if err != nil {
		return nil, err
	}
	empty, err := emptyOrMissing(target)
	if err != nil {
		return nil, err
	}
	if !empty && !o.Force {
		return nil, fmt.Errorf("the data dir %s is not empty: restore into a new directory, or pass --force to replace its contents", target)
	}
	if !empty {
		// Also checked before the swap; this saves verifying a whole backup
		// only to be refused.
		if err := refuseInUse(ctx, target); err != nil {
			return nil, err
		}
	}
	staging, err := tempDirBeside(o.Dirs, target, "restore")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(staging)
		}
	}()

	dbPath := filepath.Join(staging, DatabaseName)
	size, sum, err := copyFileSynced(filepath.Join(from, DatabaseName), dbPath)
	if err != nil {
		return nil, err
	}
	if size != m.Database.Size || sum != m.Database.SHA256 {
		return nil, fmt.Errorf("the backup in %s is damaged: %s has %d bytes with sha256 %s, the manifest says %d bytes with sha256 %s",
			from, DatabaseName, size, sum, m.Database.Size, m.Database.SHA256)
	}
	restored := *m
	if m.Objects != nil {
		// The files are in the bucket: the rows must be the ones the
		// backup listed.
		if err := checkObjects(ctx, from, dbPath, &restored); err != nil {
			return nil, fmt.Errorf("the backup in %s is damaged: %w", from, err)
		}
	} else {
		source, err := openBackupFiles(from)
		if err != nil {
			return nil, err
		}
		if err := copyFiles(ctx, o.Dirs, dbPath, true, source, filepath.Join(staging, FilesName), &restored); err != nil {
			return nil, fmt.Errorf("the backup in %s is damaged: %w", from, err)
		}
	}
	if restored.SchemaVersion != m.SchemaVersion || restored.Files != m.Files {
		return nil, fmt.Errorf("the backup in %s is damaged: its database is at schema version %d with %d files of %d bytes, the manifest says version %d with %d files of %d bytes",
			from, restored.SchemaVersion, restored.Files.Count, restored.Files.Bytes, m.SchemaVersion, m.Files.Count, m.Files.Bytes)
	}
	if err := os.Chmod(staging, 0o750); err != nil {
		return nil, err
	}
	if !empty {
		if err := refuseInUse(ctx, target); err != nil {
			return nil, err
		}
	}
	return m, moveInto(o.Dirs, staging, target, o.Force)
}

// openBackupFiles opens the file store of a backup without writing to it: a
// backup may sit on read-only storage.
func openBackupFiles(dir string) (*filestore.Store, error) {
	path := filepath.Join(dir, FilesName)
	if _, err := os.Stat(filepath.Join(path, "tmp")); err != nil {
		return nil, fmt.Errorf("the backup in %s is incomplete: %w", dir, err)
	}
	return filestore.Open(path)
}

// refuseInUse refuses a data dir whose database another process has open.
func refuseInUse(ctx context.Context, dataDir string) error {
	path := filepath.Join(dataDir, DatabaseName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	inUse, err := db.InUse(ctx, path)
	if err != nil {
		return err
	}
	if inUse {
		return fmt.Errorf("%s is open in another process (is acctapi serve running on %s?): stop it before restoring over it", path, dataDir)
	}
	return nil
}
