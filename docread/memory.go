package docread

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// mappedMemory backs an instance's WebAssembly memory with an anonymous
// mapping of its whole limit, reserved but not touched. It grows in place,
// where wazero's default copies a Go slice at each growth, and it goes back
// to the system when the instance closes instead of waiting for Go's
// collector: the memory of the process stays the sum of the pages PDFium
// touched. The mapping itself is removed only once nothing refers to it: a
// killed instance may still be running when it is freed.
type mappedMemory struct {
	buf []byte
}

func allocateMapped(capacity, max uint64) experimental.LinearMemory {
	buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		// No room to map: a plain Go slice, as wazero's default.
		return &sliceMemory{}
	}
	m := &mappedMemory{buf: buf}
	runtime.AddCleanup(m, func(buf []byte) { unix.Munmap(buf) }, buf)
	return m
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

// Free gives the pages back; they read as zeros if touched again.
func (m *mappedMemory) Free() {
	unix.Madvise(m.buf, unix.MADV_DONTNEED)
}

// sliceMemory is wazero's default memory: a Go slice copied as it grows.
type sliceMemory struct {
	buf []byte
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		buf := make([]byte, size, size+size/4)
		copy(buf, m.buf)
		m.buf = buf
	}
	m.buf = m.buf[:size]
	return m.buf
}

func (m *sliceMemory) Free() { m.buf = nil }
