// Package backup writes and restores backups of a data dir. A backup is laid
// out as a data dir: the database as of one moment, the bytes of exactly the
// files that database records, and a manifest that vouches for both. Both
// directions build the new directory beside its target, sync every file and
// directory in it, and rename it into place only when it is complete.
package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"acctapi/db"
	"acctapi/durable"
	"acctapi/filestore"
)

// Format is the version of the backup layout and manifest this package
// writes and restores.
const Format = 1

// Names inside a backup. The database and the file store keep the names they
// have in a data dir, so that a backup is laid out as one.
const (
	ManifestName = "backup.json"
	DatabaseName = "acctapi.db"
	FilesName    = "files"
)

// Manifest is backup.json. The database's size and sha256 cover its rows,
// and each file's row holds that file's size and sha256, so the manifest
// vouches for every byte of the backup without listing the files. With the
// files in a bucket the backup lists them (objects.jsonl) instead of
// copying them: the bucket's versioning and replication protect them.
type Manifest struct {
	Format         int            `json:"format"`
	CreatedAt      time.Time      `json:"createdAt"`
	AcctapiVersion string         `json:"acctapiVersion"`
	Commit         string         `json:"commit"`
	SchemaVersion  uint           `json:"schemaVersion"`
	Database       DatabaseDigest `json:"database"`
	Files          FileTotals     `json:"files"`
	// Objects is set when the files are in a bucket: the backup holds no
	// bytes of them, but objects.jsonl with the key, size and SHA-256 of
	// each, which this digest vouches for.
	Objects *ObjectsDigest `json:"objects,omitempty"`
}

// DatabaseDigest is the size and sha256 of a backup's database file.
type DatabaseDigest struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// FileTotals is the number of stored files in a backup and their total size.
type FileTotals struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// readManifest reads and checks the manifest of the backup in dir.
func readManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("%w (is %s a backup written by acctapi backup?)", err, dir)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the backup in %s is damaged: %s: %w", dir, ManifestName, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("the backup in %s has format %d; this binary restores format %d", dir, m.Format, Format)
	}
	if missing := incomplete(data, &m); len(missing) > 0 {
		return nil, fmt.Errorf("the backup in %s is incomplete: its manifest %s lacks %s, which acctapi backup always writes",
			dir, ManifestName, strings.Join(missing, ", "))
	}
	if latest := db.LatestVersion(); m.SchemaVersion > latest {
		return nil, fmt.Errorf("the backup in %s has schema version %d, newer than this binary's %d: restore it with the acctapi %s that wrote it, or a newer one",
			dir, m.SchemaVersion, latest, m.AcctapiVersion)
	}
	return &m, nil
}

// incomplete names what a manifest lacks, so that a cut or hand-made one is
// refused for what it is rather than as a database that differs from it.
func incomplete(data []byte, m *Manifest) []string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return []string{"every field"}
	}
	var missing []string
	for _, name := range []string{"createdAt", "schemaVersion", "database", "files"} {
		if _, ok := fields[name]; !ok {
			missing = append(missing, name)
		}
	}
	if _, ok := fields["database"]; ok && (m.Database.Size <= 0 || !sha256Hex.MatchString(m.Database.SHA256)) {
		missing = append(missing, "the database's size and sha256")
	}
	return missing
}

// sha256Hex is a SHA-256 as the manifest writes it.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// copyFiles copies the bytes of every file the database at dbPath records
// from src into a new file store at dest, each checked against its row,
// after checking the database when check is set. It sets m's schema version
// and file totals.
func copyFiles(ctx context.Context, dirs durable.Syncer, dbPath string, check bool, src *filestore.Store, dest string, m *Manifest) error {
	dst, err := filestore.Open(dest)
	if err != nil {
		return err
	}
	if err := eachFile(ctx, dbPath, check, m, func(f db.FileDigest) error { return migrateFile(ctx, src, dst, f) }); err != nil {
		return err
	}
	return errors.Join(dirs.Dir(dest), dirs.Dir(filepath.Dir(dest)))
}

// eachFile opens the database at dbPath, checks it when check is set, sets
// m's schema version, and calls fn with every file the database records,
// counting them into m's file totals.
func eachFile(ctx context.Context, dbPath string, check bool, m *Manifest, fn func(db.FileDigest) error) (err error) {
	copied, err := db.Open(dbPath, db.Options{})
	if err != nil {
		return err
	}
	// Closing checkpoints the copy's WAL into it, so that what is hashed or
	// swapped in afterwards is the database file alone.
	defer func() { err = errors.Join(err, copied.Close()) }()
	if check {
		if err := copied.Check(ctx); err != nil {
			return err
		}
	}
	state, err := copied.Schema(ctx)
	if err != nil {
		return err
	}
	m.SchemaVersion, m.Files = state.Version, FileTotals{}
	return copied.FileDigests(ctx, func(f db.FileDigest) error {
		m.Files.Count++
		m.Files.Bytes += f.Size
		return fn(f)
	})
}
