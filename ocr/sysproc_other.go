//go:build !linux

package ocr

import "syscall"

// sysProcAttr puts the child in its own process group, so that a kill
// reaches all of it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
