package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxOutput bounds what one run of tesseract may print: the TSV of a page
// is some hundreds of KiB.
const maxOutput = 16 << 20

// errOutput is a child that printed more than maxOutput.
var errOutput = errors.New("tesseract printed more than 16 MiB")

// limitMemory makes the shell set the address-space limit (ulimit -v, in
// KiB) and then become tesseract: the limit holds from tesseract's first
// instruction. Setting it with prlimit after Start would leave a moment in
// which the child runs without it.
const limitMemory = `ulimit -v "$1" || exit 125; shift; exec "$@"`

// result is one finished run of tesseract.
type result struct {
	out     []byte
	peakRSS uint64 // bytes
}

// run runs tesseract once on the PNG image in, with args after its input
// and output names, and returns what it printed. The child is its own
// process group, killed whole when ctx ends, and dies with this process.
func (e *Engine) run(ctx context.Context, in []byte, args ...string) (result, error) {
	argv := append([]string{"-c", limitMemory, "sh",
		strconv.FormatUint(e.opts.MaxMemory>>10, 10), e.path, "stdin", "stdout"}, args...)
	cmd := exec.CommandContext(ctx, e.shell, argv...)
	cmd.Env = append(cmd.Environ(), "OMP_THREAD_LIMIT="+strconv.Itoa(e.opts.Threads))
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr capped
	stdout.max, stderr.max = maxOutput, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error {
		// The whole group: tesseract and anything it started.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// A grandchild holding the pipes open must not hold Wait.
	cmd.WaitDelay = 2 * time.Second
	var res result
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		return res, err
	}
	done := make(chan struct{})
	polled := make(chan uint64)
	go func() { polled <- pollPeakRSS(cmd.Process.Pid, done) }()
	err := cmd.Wait()
	close(done)
	res.peakRSS = <-polled
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	if stdout.over {
		return res, errOutput
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if isOutOfMemory(msg) {
			return res, &Error{
				Reason: fmt.Sprintf("OCR needed more than %d MiB of memory", e.opts.MaxMemory>>20),
				Err:    fmt.Errorf("tesseract: %w: %s", err, msg),
			}
		}
		return res, fmt.Errorf("tesseract: %w: %s", err, msg)
	}
	res.out = stdout.Bytes()
	return res, nil
}

// pollPeakRSS reads the child's VmHWM, its resident high-water mark, every
// 100ms until done (at 20ms the polling took a tenth of this process's CPU
// a page), and returns the last value read (0 where /proc is missing). The
// rusage of a finished child is no use here: its maxrss keeps
// the RSS of this process, which it was forked from.
func pollPeakRSS(pid int, done <-chan struct{}) uint64 {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var peak uint64
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			if _, rest, ok := strings.Cut(string(b), "VmHWM:"); ok {
				kib, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
				if n, err := strconv.ParseUint(kib, 10, 64); err == nil {
					peak = max(peak, n<<10)
				}
			}
		}
		select {
		case <-done:
			return peak
		case <-t.C:
		}
	}
}

// isOutOfMemory tells tesseract's and leptonica's ways of saying an
// allocation failed under the address-space limit.
func isOutOfMemory(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, m := range []string{"bad_alloc", "out of memory", "cannot allocate", "memory allocation failed", "alloc fail", "failed to map segment"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// capped keeps the first max bytes written and notes whether more came.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.Buffer.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
