package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"acctapi/db"
	"acctapi/filestore"
)

// backupFormat is the version of the backup layout and manifest this binary
// writes and restores.
const backupFormat = 1

// Names inside a backup. The database and the file store keep the names they
// have in a data dir, so that a backup is laid out as one.
const (
	manifestName = "backup.json"
	databaseName = "acctapi.db"
	filesName    = "files"
)

// backupManifest is backup.json. The database's size and sha256 cover its
// rows, and each file's row holds that file's size and sha256, so the
// manifest vouches for every byte of the backup without listing the files.
type backupManifest struct {
	Format         int            `json:"format"`
	CreatedAt      time.Time      `json:"createdAt"`
	AcctapiVersion string         `json:"acctapiVersion"`
	Commit         string         `json:"commit"`
	SchemaVersion  uint           `json:"schemaVersion"`
	Database       backupDatabase `json:"database"`
	Files          backupFiles    `json:"files"`
}

type backupDatabase struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

type backupFiles struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// backupJSON is what backup --json and restore --json print: the manifest,
// the directory written and how long it took.
type backupJSON struct {
	Dir     string  `json:"dir"`
	Seconds float64 `json:"seconds"`
	backupManifest
}

func newBackupCmd(cfg *Config) *cobra.Command {
	var (
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "backup --out DIR",
		Short: "Write a consistent backup of the data dir, also while the server runs",
		Long: `Write a consistent backup of the data dir into DIR: the database as of one
moment (VACUUM INTO from one snapshot, without holding up the server's writes),
the bytes of exactly the files that database records, each checked against its
recorded sha256, and backup.json, which acctapi restore verifies. The backup is
built in a temporary directory beside DIR and renamed into place when complete.
DIR must not exist or be empty.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			m, err := writeBackup(cmd.Context(), cfg, out)
			if err != nil {
				return err
			}
			res := backupJSON{Dir: out, Seconds: time.Since(start).Seconds(), backupManifest: *m}
			if asJSON {
				return json.NewEncoder(cfg.Stdout).Encode(res)
			}
			fmt.Fprintf(cfg.Stdout, "backed up %s to %s in %.1f s: schema version %d, database %s, files: %d (%s)\n",
				cfg.DataDir, out, res.Seconds, m.SchemaVersion, byteSize(m.Database.Size), m.Files.Count, byteSize(m.Files.Bytes))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write the backup to; must not exist or be empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func newRestoreCmd(cfg *Config) *cobra.Command {
	var (
		from   string
		force  bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "restore --from DIR --data-dir DIR2 [--force]",
		Short: "Restore a backup into a data dir",
		Long: `Restore the backup in DIR (written by acctapi backup) as the data dir DIR2.
Before anything in DIR2 changes, it verifies the whole backup: the manifest, the
database's sha256, SQLite's integrity and foreign key checks, and every file's
sha256 against its row. It refuses a DIR2 that is not empty unless --force is
given; then it replaces DIR2's contents whole (the new data dir is built beside
it and swapped in), and refuses while another process, such as a server, has
DIR2's database open.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			m, err := restoreBackup(cmd.Context(), cfg, from, force)
			if err != nil {
				return err
			}
			res := backupJSON{Dir: cfg.DataDir, Seconds: time.Since(start).Seconds(), backupManifest: *m}
			if asJSON {
				return json.NewEncoder(cfg.Stdout).Encode(res)
			}
			fmt.Fprintf(cfg.Stdout, "restored %s (taken %s) into %s in %.1f s: schema version %d, database %s, files: %d (%s)\n",
				from, m.CreatedAt.Format(time.RFC3339), cfg.DataDir, res.Seconds, m.SchemaVersion,
				byteSize(m.Database.Size), m.Files.Count, byteSize(m.Files.Bytes))
			if latest := db.LatestVersion(); m.SchemaVersion < latest {
				fmt.Fprintf(cfg.Stdout, "its schema is older than this binary's %d: run acctapi migrate before acctapi serve\n", latest)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "directory of the backup to restore")
	cmd.Flags().BoolVar(&force, "force", false, "replace the contents of a data dir that is not empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

// writeBackup writes the backup of cfg's data dir into out and returns its
// manifest.
func writeBackup(ctx context.Context, cfg *Config, out string) (_ *backupManifest, err error) {
	if empty, err := emptyOrMissing(out); err != nil {
		return nil, err
	} else if !empty {
		return nil, fmt.Errorf("%s exists and is not empty: back up into a new directory", out)
	}
	store, err := openExistingStore(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	live, err := filestore.Open(cfg.FilesPath())
	if err != nil {
		return nil, err
	}
	tmp, err := tempDirBeside(out, "partial")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()

	m := &backupManifest{Format: backupFormat, CreatedAt: now(cfg).UTC(), AcctapiVersion: version, Commit: buildCommit()}
	dbPath := filepath.Join(tmp, databaseName)
	if err := store.Backup(ctx, dbPath); err != nil {
		return nil, err
	}
	// The files are those the copy names, read from the copy: the server may
	// have recorded more since, and their bytes are not part of this backup.
	// The integrity check, five times as long as the copy, is left to
	// restore, which must run it anyway.
	if err := copyFiles(ctx, dbPath, false, live, filepath.Join(tmp, filesName), m); err != nil {
		return nil, err
	}
	if m.Database.Size, m.Database.SHA256, err = digestFile(dbPath, io.Discard); err != nil {
		return nil, err
	}
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSynced(filepath.Join(tmp, manifestName), append(manifest, '\n')); err != nil {
		return nil, err
	}
	return m, moveInto(tmp, out, false)
}

// restoreBackup verifies the backup in from while building the data dir
// from it beside cfg's data dir, then swaps it in.
func restoreBackup(ctx context.Context, cfg *Config, from string, force bool) (_ *backupManifest, err error) {
	target := cfg.DataDir
	m, err := readManifest(from)
	if err != nil {
		return nil, err
	}
	empty, err := emptyOrMissing(target)
	if err != nil {
		return nil, err
	}
	if !empty && !force {
		return nil, fmt.Errorf("the data dir %s is not empty: restore into a new directory, or pass --force to replace its contents", target)
	}
	if !empty {
		// Also checked before the swap; this saves verifying a whole backup
		// only to be refused.
		if err := refuseInUse(ctx, target); err != nil {
			return nil, err
		}
	}
	staging, err := tempDirBeside(target, "restore")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(staging)
		}
	}()

	dbPath := filepath.Join(staging, databaseName)
	size, sum, err := copyFileSynced(filepath.Join(from, databaseName), dbPath)
	if err != nil {
		return nil, err
	}
	if size != m.Database.Size || sum != m.Database.SHA256 {
		return nil, fmt.Errorf("the backup in %s is damaged: %s has %d bytes with sha256 %s, the manifest says %d bytes with sha256 %s",
			from, databaseName, size, sum, m.Database.Size, m.Database.SHA256)
	}
	source, err := openBackupFiles(from)
	if err != nil {
		return nil, err
	}
	restored := *m
	if err := copyFiles(ctx, dbPath, true, source, filepath.Join(staging, filesName), &restored); err != nil {
		return nil, fmt.Errorf("the backup in %s is damaged: %w", from, err)
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
	return m, moveInto(staging, target, force)
}

// readManifest reads and checks the manifest of the backup in dir.
func readManifest(dir string) (*backupManifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("%w (is %s a backup written by acctapi backup?)", err, dir)
	}
	var m backupManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("the backup in %s is damaged: %s: %w", dir, manifestName, err)
	}
	if m.Format != backupFormat {
		return nil, fmt.Errorf("the backup in %s has format %d; this binary restores format %d", dir, m.Format, backupFormat)
	}
	if latest := db.LatestVersion(); m.SchemaVersion > latest {
		return nil, fmt.Errorf("the backup in %s has schema version %d, newer than this binary's %d: restore it with the acctapi %s that wrote it, or a newer one",
			dir, m.SchemaVersion, latest, m.AcctapiVersion)
	}
	return &m, nil
}

// openBackupFiles opens the file store of a backup without writing to it: a
// backup may sit on read-only storage.
func openBackupFiles(dir string) (*filestore.Store, error) {
	path := filepath.Join(dir, filesName)
	if _, err := os.Stat(filepath.Join(path, "tmp")); err != nil {
		return nil, fmt.Errorf("the backup in %s is incomplete: %w", dir, err)
	}
	return filestore.Open(path)
}

// copyFiles opens the database at dbPath, checks it when check is set, and
// copies the bytes of every file it records from src into a new file store
// at dest, each checked against its row. It sets m's schema version and file
// totals.
func copyFiles(ctx context.Context, dbPath string, check bool, src *filestore.Store, dest string, m *backupManifest) (err error) {
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
	m.SchemaVersion, m.Files = state.Version, backupFiles{}
	dst, err := filestore.Open(dest)
	if err != nil {
		return err
	}
	err = copied.FileDigests(ctx, func(f db.FileDigest) error {
		if err := copyStoredFile(src, dst, f); err != nil {
			return err
		}
		m.Files.Count++
		m.Files.Bytes += f.Size
		return nil
	})
	if err != nil {
		return err
	}
	return syncDirs(dest, filepath.Dir(dest))
}

// copyStoredFile copies one file's bytes between stores, refusing bytes that
// do not match the file's row.
func copyStoredFile(src, dst *filestore.Store, f db.FileDigest) error {
	r, err := src.OpenFile(f.ID)
	if err != nil {
		return fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	defer r.Close()
	p, err := dst.Write(r, f.Size)
	if errors.Is(err, filestore.ErrTooLarge) {
		return fmt.Errorf("the bytes of file %s are longer than the %d bytes its row records", f.ID, f.Size)
	}
	if err != nil {
		return fmt.Errorf("the bytes of file %s: %w", f.ID, err)
	}
	if p.Size != f.Size || !bytes.Equal(p.SHA256, f.SHA256) {
		dst.Discard(p)
		return fmt.Errorf("the bytes of file %s (%d bytes, sha256 %x) do not match its row (%d bytes, sha256 %x)",
			f.ID, p.Size, p.SHA256, f.Size, f.SHA256)
	}
	if err := dst.Commit(p, f.ID); err != nil {
		dst.Discard(p)
		return err
	}
	return nil
}

// refuseInUse refuses a data dir whose database another process has open.
func refuseInUse(ctx context.Context, dataDir string) error {
	path := filepath.Join(dataDir, databaseName)
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
func tempDirBeside(dir, purpose string) (string, error) {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o750); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+"."+purpose+"-*")
}

// moveInto renames the complete directory src to dst. An empty dst is
// replaced; with replace, so is one with contents: it is moved aside first and
// moved back if src cannot take its place, then removed.
func moveInto(src, dst string, replace bool) error {
	parent := filepath.Dir(filepath.Clean(dst))
	if err := syncDirs(src); err != nil {
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
		if aside, err = tempDirBeside(dst, "replaced"); err != nil {
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
	if err := syncDirs(parent); err != nil {
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

// syncDirs syncs directories, so that the names created in them survive a
// crash.
func syncDirs(dirs ...string) error {
	for _, dir := range dirs {
		d, err := os.Open(dir)
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return nil
}

func now(cfg *Config) time.Time {
	if cfg.Now != nil {
		return cfg.Now()
	}
	return time.Now()
}

// byteSize formats a number of bytes for people.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
