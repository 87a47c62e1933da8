package ocr

import "syscall"

// sysProcAttr puts the child in its own process group, so that a kill
// reaches all of it, and kills it when this process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
