package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"acctapi/backup"
)

// migrationProgress shows a migration's progress: a bar of files and bytes
// redrawn in place on a terminal, else a line per file.
type migrationProgress struct {
	w        io.Writer
	terminal bool
	drawn    bool
}

func newMigrationProgress(w io.Writer) *migrationProgress {
	return &migrationProgress{w: w, terminal: isTerminal(w)}
}

// isTerminal says whether w is a terminal: a file that answers a terminal's
// ioctl (a character device such as /dev/null does not).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// barWidth is the number of characters of the bar itself.
const barWidth = 30

func (m *migrationProgress) update(p backup.MigrateProgress) {
	if !m.terminal {
		what := "copied and verified"
		if p.LastSkipped {
			what = "already in place"
		}
		fmt.Fprintf(m.w, "%d/%d files, %s of %s: %s %s\n", p.Files, p.TotalFiles, byteSize(p.Bytes), byteSize(p.TotalBytes), p.ID, what)
		return
	}
	filled := barWidth
	if p.TotalBytes > 0 {
		filled = int(int64(barWidth) * p.Bytes / p.TotalBytes)
	}
	fmt.Fprintf(m.w, "\r[%s%s] %d/%d files, %s of %s ", strings.Repeat("#", filled), strings.Repeat(" ", barWidth-filled),
		p.Files, p.TotalFiles, byteSize(p.Bytes), byteSize(p.TotalBytes))
	m.drawn = true
}

// finish ends the bar's line.
func (m *migrationProgress) finish() {
	if m.drawn {
		fmt.Fprintln(m.w)
	}
}
