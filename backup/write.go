package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"acctapi/db"
	"acctapi/durable"
	"acctapi/filestore"
)

// WriteOptions say what Write backs up, where to, and what its manifest
// records.
type WriteOptions struct {
	// DataDir is the data dir to back up; its file store is read from here
	// unless Bucket is set.
	DataDir string
	// Bucket is the bucket the files are in, when they are: the backup
	// then lists their objects instead of copying their bytes.
	Bucket Bucket
	// Open opens DataDir's database. The caller decides how, and what it
	// says of a missing one; Write closes it.
	Open func() (*db.DB, error)
	// Out is the directory to write the backup to. It must not exist or be
	// empty.
	Out string
	// Version and Commit name the acctapi build that writes the backup.
	Version, Commit string
	// Now is the clock of the manifest's time; time.Now when nil.
	Now func() time.Time
	// Dirs syncs the directories the backup makes entries in; its zero
	// value asks the operating system.
	Dirs durable.Syncer
}

// Write writes a consistent backup of o.DataDir into o.Out and returns its
// manifest. It runs beside a server writing to the data dir: the database is
// copied from one snapshot, and the files are those that copy records. The
// backup is built in a directory beside o.Out and renamed to it when
// complete; on an error nothing is left behind.
func Write(ctx context.Context, o WriteOptions) (_ *Manifest, err error) {
	if empty, err := emptyOrMissing(o.Out); err != nil {
		return nil, err
	} else if !empty {
		return nil, fmt.Errorf("%s exists and is not empty: back up into a new directory", o.Out)
	}
	store, err := o.Open()
	if err != nil {
		return nil, err
	}
	defer store.Close()
	tmp, err := tempDirBeside(o.Dirs, o.Out, "partial")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()

	now := o.Now
	if now == nil {
		now = time.Now
	}
	m := &Manifest{Format: Format, CreatedAt: now().UTC(), AcctapiVersion: o.Version, Commit: o.Commit}
	dbPath := filepath.Join(tmp, DatabaseName)
	if err := store.Backup(ctx, dbPath); err != nil {
		return nil, err
	}
	// The files are those the copy names, read from the copy: the server may
	// have recorded more since, and their bytes are not part of this backup.
	// The integrity check, five times as long as the copy, is left to
	// restore, which must run it anyway.
	if o.Bucket != nil {
		if err := listObjects(ctx, dbPath, o.Bucket, filepath.Join(tmp, ObjectsName), m); err != nil {
			return nil, err
		}
	} else {
		live, err := filestore.Open(filepath.Join(o.DataDir, FilesName))
		if err != nil {
			return nil, err
		}
		if err := copyFiles(ctx, o.Dirs, dbPath, false, live, filepath.Join(tmp, FilesName), m); err != nil {
			return nil, err
		}
	}
	if m.Database.Size, m.Database.SHA256, err = digestFile(dbPath, io.Discard); err != nil {
		return nil, err
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSynced(filepath.Join(tmp, ManifestName), append(manifest, '\n')); err != nil {
		return nil, err
	}
	return m, moveInto(o.Dirs, tmp, o.Out, false)
}
