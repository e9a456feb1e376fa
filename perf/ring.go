package perf

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is one mmapped perf ring buffer: a metadata page, then a data area
// of a power-of-two size that the kernel writes records into and the
// reader consumes by advancing data_tail.
type ring struct {
	fd   int
	mem  []byte
	meta *unix.PerfEventMmapPage
	data []byte
	mask uint64
	// scratch holds a record that wraps around the end of the data area;
	// records are otherwise read in place.
	scratch []byte
}

// mapRing maps fd's ring buffer with dataBytes of data (a power of two
// multiple of the page size).
func mapRing(fd, dataBytes int) (*ring, error) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, page+dataBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	r := &ring{fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))}
	off, size := uint64(page), uint64(dataBytes)
	if r.meta.Data_offset != 0 && r.meta.Data_size != 0 {
		off, size = r.meta.Data_offset, r.meta.Data_size
	}
	if off+size > uint64(len(mem)) || size&(size-1) != 0 {
		unix.Munmap(mem)
		return nil, fmt.Errorf("perf ring: data area %d+%d does not fit the %d-byte mapping", off, size, len(mem))
	}
	r.data = mem[off : off+size]
	r.mask = size - 1
	return r, nil
}

// pending reports whether records are waiting.
func (r *ring) pending() bool {
	return atomic.LoadUint64(&r.meta.Data_head) != r.meta.Data_tail
}

// drain hands every complete record to fn (the slice is valid only during
// the call) and frees its space. It stops early when fn returns false.
func (r *ring) drain(fn func(rec []byte) bool) {
	// Acquire: records up to head are fully written (the kernel's store
	// of data_head is a release; Go's atomic load orders the reads after).
	head := atomic.LoadUint64(&r.meta.Data_head)
	tail := r.meta.Data_tail
	size := uint64(len(r.data))
	for tail < head {
		off := tail & r.mask
		// Records are 8-byte aligned and the area a multiple of 8: a
		// header never wraps.
		n := uint64(binary.LittleEndian.Uint16(r.data[off+6:]))
		if n < 8 || n > head-tail {
			// Corrupt or torn: drop everything up to head.
			tail = head
			break
		}
		var rec []byte
		if off+n <= size {
			rec = r.data[off : off+n]
		} else {
			if cap(r.scratch) < int(n) {
				r.scratch = make([]byte, 0, 65536)
			}
			rec = append(append(r.scratch[:0], r.data[off:]...), r.data[:n-(size-off)]...)
		}
		more := fn(rec)
		tail += n
		// Release the space: the kernel reads data_tail before writing.
		atomic.StoreUint64(&r.meta.Data_tail, tail)
		if !more {
			return
		}
	}
	atomic.StoreUint64(&r.meta.Data_tail, tail)
}

func (r *ring) close() {
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}
