package docread

import (
	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// mappedMemory backs an instance's WebAssembly memory with an anonymous
// mapping of its whole limit, reserved but not touched. It grows in place,
// where wazero's default copies a Go slice at each growth, and it goes back
// to the system when the instance closes instead of waiting for Go's
// collector: the memory of the process stays the sum of the pages PDFium
// touched.
type mappedMemory struct {
	buf []byte
}

func allocateMapped(capacity, max uint64) experimental.LinearMemory {
	buf, err := unix.Mmap(-1, 0, int(max), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		// No room to map: a plain Go slice, as wazero's default.
		return &sliceMemory{}
	}
	return &mappedMemory{buf: buf}
}

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

func (m *mappedMemory) Free() {
	if m.buf != nil {
		unix.Munmap(m.buf)
		m.buf = nil
	}
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
