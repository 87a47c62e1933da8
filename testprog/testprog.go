// Package testprog finds the real programs the tests run beside acctapi
// (Pebble, versitygw, Mailpit, Litestream), and gives them what each needs:
// a free port and a place for their output. It is test support and imports
// nothing of ours.
package testprog

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Find returns the path of the program name, on PATH or where go install
// puts it ($GOBIN, else each $(go env GOPATH)/bin). Without it the test is
// skipped with install, the command that installs it; under CI=true, where
// every program must be installed, the test fails instead.
func Find(t testing.TB, name, install string) string {
	t.Helper()
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	dirs := installDirs()
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		if info, err := os.Stat(path); err == nil && !info.IsDir() {
			return path
		}
	}
	msg := fmt.Sprintf("%s is not installed (on PATH or in %v); install it with: %s", name, dirs, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// installDirs are the directories go install puts programs in.
func installDirs() []string {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return nil
	}
	// GOBIN's line is empty when it is not set.
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 {
		return nil
	}
	var dirs []string
	if lines[0] != "" {
		dirs = append(dirs, lines[0])
	}
	for _, p := range filepath.SplitList(lines[1]) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	return dirs
}

// FreePort returns a TCP port of 127.0.0.1 that nothing listened on a
// moment ago, for a program that cannot listen on port 0 and say which.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Output collects a program's output, written while the test reads it, for
// a failure message.
type Output struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// FullSuite is the command that runs every test, the long ones too: what
// CI (.ci/run) runs.
const FullSuite = "go test -race -count=1 -timeout 30m ./..."

// SkipShort skips a long test under -short (the README's quick test
// command), naming what makes it long and the command that runs it.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: skipped with -short; %s (or .ci/run) runs it", what, FullSuite)
	}
}
