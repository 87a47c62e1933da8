//go:build unix

package analysis_test

import (
	"syscall"
	"time"
)

// cpuTime is the processor time this process and its finished children
// (tesseract) have used: what a reading costs, whatever else the machine
// runs.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
