package cmd

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"acctapi/backup"
)

// openPTY opens a pseudo-terminal and returns its two ends.
func openPTY(t *testing.T) (master, terminal *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { terminal.Close() })
	return master, terminal
}

// TestMigrationProgress: on a terminal the progress is a bar of files and
// bytes redrawn in place, ended by a newline; elsewhere (a file, /dev/null)
// a line per file.
func TestMigrationProgress(t *testing.T) {
	steps := []backup.MigrateProgress{
		{Files: 1, TotalFiles: 2, Bytes: 1 << 20, TotalBytes: 4 << 20, Copied: 1, ID: "cfirst"},
		{Files: 2, TotalFiles: 2, Bytes: 4 << 20, TotalBytes: 4 << 20, Copied: 1, Skipped: 1, ID: "csecond", LastSkipped: true},
	}
	master, terminal := openPTY(t)
	show := newMigrationProgress(terminal)
	for _, p := range steps {
		show.update(p)
	}
	show.finish()
	buf := make([]byte, 4096)
	n, err := master.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	got := string(buf[:n])
	want := "\r[#######                       ] 1/2 files, 1.0 MiB of 4.0 MiB \r[##############################] 2/2 files, 4.0 MiB of 4.0 MiB \r\n"
	if got != want {
		t.Errorf("on a terminal:\n got %q\nwant %q", got, want)
	}

	for _, name := range []string{tempFile(t), os.DevNull} {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if newMigrationProgress(f).terminal {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	var lines strings.Builder
	show = newMigrationProgress(&lines)
	for _, p := range steps {
		show.update(p)
	}
	show.finish()
	if want := "1/2 files, 1.0 MiB of 4.0 MiB: cfirst copied and verified\n2/2 files, 4.0 MiB of 4.0 MiB: csecond already in place\n"; lines.String() != want {
		t.Errorf("elsewhere:\n got %q\nwant %q", lines.String(), want)
	}
}

// tempFile is a new empty file of the test.
func tempFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return f.Name()
}
