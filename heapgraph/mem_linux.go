package heapgraph

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Storage of the graph's large arrays (one element per object or per
// reference) outside the Go heap: memory-mapped regions the builder and
// the dominator computation free explicitly as soon as a phase is done.
// In the Go heap they would cost twice: append doubles capacities (a
// third of the old peak), and the collector lets the heap grow to twice
// what is live before it runs.
//
// A growable array reserves address space for its largest size up front
// (MAP_NORESERVE: only touched pages take memory), so it grows in place,
// never copied. With spilling on, the regions are instead shared
// mappings of unlinked files in a temporary directory (gone when the
// process ends, whatever the way), grown by fallocate (a full disk is an
// error, not a SIGBUS), and the pages of every region are handed back to
// the page cache (madvise DONTNEED) at each phase's end and whenever
// spillStep more bytes have been written: a phase then has only its own
// working set resident, the rest is in the kernel's cache, which writes it
// to the disk when memory is short.

// spillStep is how far a spilled array grows at once, and how many bytes
// are written between two hand-backs of resident pages.
var spillStep int64 = 8 << 20 // a variable: the tests make it a page

// maxElems bounds every array: node ids and CSR offsets are 32-bit.
const maxElems = 1 << 32

// region is one mapping.
type region struct {
	mem  []byte   // the whole mapping (the reservation)
	f    *os.File // spilled: the backing file (unlinked)
	size int64    // spilled: the file's length (the usable part)
}

// store allocates and frees the large arrays of one graph. A nil store
// allocates in the Go heap (files read in full, tests) and frees nothing.
type store struct {
	spill bool
	// parked: some regions were moved to files by park while new ones
	// stay anonymous (release then hands back the parked ones' pages).
	parked  bool
	dir     string // spilled files' directory ("" os.TempDir)
	mu      sync.Mutex
	regs    map[uintptr]*region // by base address
	written int64               // spilled bytes since the last hand-back
	// parks: the parkings in flight (behind), waited for by release.
	parks sync.WaitGroup
	err   error // the first allocation failure
}

func newStore(spill bool, dir string) *store {
	return &store{spill: spill, dir: dir, regs: map[uintptr]*region{}}
}

// alloc maps a region able to hold max bytes, n of them usable now (all
// of them for an anonymous mapping). nil when mapping fails.
func (s *store) alloc(n, max int64) *region {
	if max < n {
		max = n
	}
	max = (max + 4095) &^ 4095
	if max == 0 {
		max = 4096
	}
	r := &region{}
	var err error
	if s.spill {
		r.f, err = os.CreateTemp(s.dir, "clrspy-heapgraph-*")
		if err == nil {
			os.Remove(r.f.Name()) // removed now: the open file lives until closed or exit
			r.mem, err = syscall.Mmap(int(r.f.Fd()), 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if err == nil {
				err = r.grow(n)
			}
			if err != nil {
				if r.mem != nil {
					syscall.Munmap(r.mem)
				}
				r.f.Close()
			}
		}
	} else {
		r.mem, err = syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		r.size = max
	}
	if err != nil {
		// Anonymous mappings that fail (a strict overcommit policy) fall
		// back to the Go heap; a spill that fails is the user's error
		// to hear (--max-memory asked for it).
		if s.spill {
			s.fail(err)
		}
		return nil
	}
	s.mu.Lock()
	s.regs[uintptr(unsafe.Pointer(&r.mem[0]))] = r
	s.mu.Unlock()
	return r
}

// grow extends a spilled region's file to hold at least n bytes.
func (r *region) grow(n int64) error {
	if r.f == nil || n <= r.size {
		return nil
	}
	n = min((n+spillStep-1)/spillStep*spillStep, int64(len(r.mem)))
	if err := syscall.Fallocate(int(r.f.Fd()), 0, r.size, n-r.size); err != nil {
		if err == syscall.EOPNOTSUPP {
			err = r.f.Truncate(n)
		}
		if err != nil {
			// The store's directory (MapArrays' dir), not always $TMPDIR.
			return fmt.Errorf("spilling the heap graph to %s: %w", filepath.Dir(r.f.Name()), err)
		}
	}
	r.size = n
	return nil
}

func (s *store) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// free unmaps the region whose first byte is at p (a no-op for memory
// the store did not map).
func (s *store) free(p unsafe.Pointer) {
	if s == nil || p == nil {
		return
	}
	s.mu.Lock()
	r := s.regs[uintptr(p)]
	delete(s.regs, uintptr(p))
	s.mu.Unlock()
	if r == nil {
		return
	}
	syscall.Munmap(r.mem)
	if r.f != nil {
		r.f.Close()
	}
}

// release hands the resident pages of every spilled region back to the
// page cache (their contents stay in the files; the next touch reads them
// back). A no-op without spilling.
func (s *store) release() {
	if s == nil {
		return
	}
	s.parks.Wait()
	if !s.spill && !s.parked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = 0
	for _, r := range s.regs {
		if r.f != nil {
			// The whole reservation (untouched pages cost nothing):
			// the array may be growing under a Watch.
			syscall.Madvise(r.mem, syscall.MADV_DONTNEED)
		}
	}
}

// wrote counts n bytes written to (or read from) spilled arrays; every
// spillStep of them the resident pages go back to the page cache, so a
// phase's resident memory stays near that much plus what it touches
// again (read back from the cache).
func (s *store) wrote(n int64) {
	if s == nil || !s.spill {
		return
	}
	s.written += n
	if s.written >= spillStep {
		s.release()
	}
}

// memAvailable is the system's available memory (/proc/meminfo's
// MemAvailable), 0 unknown; a variable for the tests.
var memAvailable = func() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// toFile moves an anonymous region to a spill file: its first n bytes
// are written to a new unlinked file, which is then mapped over the
// whole reservation at the same address (MAP_FIXED), so every slice of
// it stays valid. Slices must then not reach past r.size (the file's
// length; see vec.capToFile).
func (s *store) toFile(r *region, n int64) error {
	if r.f != nil {
		return nil
	}
	f, err := os.CreateTemp(s.dir, "clrspy-heapgraph-*")
	if err != nil {
		return fmt.Errorf("spilling the heap graph: %w", err)
	}
	os.Remove(f.Name())
	nr := &region{mem: r.mem, f: f}
	if err := nr.grow(max(n, 1)); err != nil {
		f.Close()
		return err
	}
	if _, err := f.WriteAt(r.mem[:n], 0); err != nil {
		f.Close()
		return fmt.Errorf("spilling the heap graph: %w", err)
	}
	_, _, e := syscall.Syscall6(syscall.SYS_MMAP, uintptr(unsafe.Pointer(&r.mem[0])), uintptr(len(r.mem)),
		syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_FIXED, f.Fd(), 0)
	if e != 0 {
		// The anonymous mapping is untouched: keep it.
		f.Close()
		return fmt.Errorf("spilling the heap graph: mmap: %w", e)
	}
	s.mu.Lock()
	r.f, r.size = f, nr.size
	s.mu.Unlock()
	return nil
}

// behind runs f (parkings) in its own goroutine while the caller goes on;
// the next release waits for it.
func (s *store) behind(f func()) {
	s.parks.Add(1)
	go func() {
		defer s.parks.Done()
		f()
	}()
}

// parkArr moves the array a (a whole region of the store: makeArr's, or
// a vector's once it no longer grows) to a spill file, as toFile, while
// the store's new arrays stay anonymous: an array a phase does not touch
// then costs no resident memory after the next release, and the phase
// that reads it again reads it back from the page cache. A no-op for
// memory the store did not map.
func parkArr[T any](s *store, a []T) error {
	if s == nil || len(a) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(a))
	s.mu.Lock()
	r := s.regs[uintptr(p)]
	s.mu.Unlock()
	if r == nil || r.f != nil {
		return nil
	}
	var z T
	// Its length: nothing reaches past it any more (a vector's
	// reservation beyond is not written to the file).
	if err := s.toFile(r, int64(len(a))*int64(unsafe.Sizeof(z))); err != nil {
		return err
	}
	s.mu.Lock()
	s.parked = true
	s.mu.Unlock()
	return nil
}

// capToFile limits the vector's capacity to its spilled file's length
// (after toFile), so that growing goes through grow.
func (v *vec[T]) capToFile() {
	if v.r == nil || v.r.f == nil || len(v.s) == 0 && cap(v.s) == 0 {
		return
	}
	var z T
	v.s = v.s[:len(v.s):int(v.r.size/int64(unsafe.Sizeof(z)))]
}

// spillVec moves v's region to a file (store.toFile).
func spillVec[T any](v *vec[T]) error {
	if v.r == nil || cap(v.s) > 0 && unsafe.Pointer(unsafe.SliceData(v.s)) != unsafe.Pointer(&v.r.mem[0]) {
		return nil // in the Go heap
	}
	var z T
	if err := v.st.toFile(v.r, int64(len(v.s))*int64(unsafe.Sizeof(z))); err != nil {
		return err
	}
	v.st.mu.Lock()
	v.st.spill = true // from then on the store spills
	v.st.mu.Unlock()
	v.capToFile()
	return nil
}

// Watch hands the spilled pages back whenever the process's resident
// memory exceeds budget bytes (checked every 10 ms, /proc/self/statm): the
// bound a phase's own releases do not give while it touches more than
// that. Concurrent hand-backs are safe: a shared file mapping's pages keep
// their contents in the page cache, a touch after one reads them back. It
// runs until the process ends (one command, one snapshot).
func (s *store) Watch(budget int64) {
	if s == nil || !s.spill || budget <= 0 {
		return
	}
	page := int64(os.Getpagesize())
	go func() {
		buf := make([]byte, 128)
		for {
			time.Sleep(10 * time.Millisecond)
			f, err := os.Open("/proc/self/statm")
			if err != nil {
				return
			}
			n, _ := f.Read(buf)
			f.Close()
			var size, rss int64
			fmt.Sscan(string(buf[:n]), &size, &rss)
			if rss*page > budget {
				s.release()
			}
		}
	}()
}

// Err is the first spill failure (the arrays fell back to the Go heap).
func (s *store) Err() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// closeAll unmaps every region: the store's arrays must not be used after.
func (s *store) closeAll() {
	if s == nil {
		return
	}
	s.mu.Lock()
	regs := s.regs
	s.regs = map[uintptr]*region{}
	s.mu.Unlock()
	for _, r := range regs {
		syscall.Munmap(r.mem)
		if r.f != nil {
			r.f.Close()
		}
	}
}

// makeArr returns a zeroed []T of length n from s (the Go heap when s is
// nil or mapping fails).
func makeArr[T any](s *store, n int) []T {
	if s == nil || n == 0 {
		return make([]T, n)
	}
	var z T
	sz := int64(unsafe.Sizeof(z))
	r := s.alloc(int64(n)*sz, int64(n)*sz)
	if r == nil {
		return make([]T, n)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&r.mem[0])), n)
}

// freeArr frees an array makeArr or a vec made.
func freeArr[T any](s *store, a []T) {
	if s == nil || cap(a) == 0 {
		return
	}
	s.free(unsafe.Pointer(unsafe.SliceData(a)))
}

// vec is a growable array: append in place, never copied.
type vec[T any] struct {
	s   []T
	r   *region
	st  *store
	max int
}

func newVec[T any](st *store, max int) vec[T] {
	v := vec[T]{st: st, max: max}
	if st == nil {
		return v
	}
	var z T
	sz := int64(unsafe.Sizeof(z))
	if v.r = st.alloc(0, int64(max)*sz); v.r != nil {
		v.s = unsafe.Slice((*T)(unsafe.Pointer(&v.r.mem[0])), int(v.r.size/sz))[:0]
	}
	return v
}

// push appends x.
func (v *vec[T]) push(x T) {
	if len(v.s) == cap(v.s) {
		v.grow()
	}
	v.s = append(v.s, x)
}

// grow makes room for more (a spilled region's next step); past the
// reservation, or without one, append moves the array to the Go heap.
func (v *vec[T]) grow() {
	if v.r == nil || v.r.f == nil || cap(v.s) > 0 && unsafe.Pointer(unsafe.SliceData(v.s)) != unsafe.Pointer(&v.r.mem[0]) {
		return
	}
	var z T
	sz := int64(unsafe.Sizeof(z))
	if err := v.r.grow(v.r.size + spillStep); err != nil {
		v.st.fail(err)
		return
	}
	v.s = unsafe.Slice((*T)(unsafe.Pointer(&v.r.mem[0])), int(v.r.size/sz))[:len(v.s)]
}

// free unmaps the vector's memory; v is empty after.
func (v *vec[T]) free() {
	if v.r != nil {
		v.st.free(unsafe.Pointer(&v.r.mem[0]))
	}
	*v = vec[T]{st: v.st}
}

// mapFile maps a whole regular file read-only (a .gcdump) as a region of
// s: its pages are the page cache's, never copied into the Go heap, and
// a Watch hands them back like a spilled array's. The region, and f, go
// with closeAll.
func (s *store) mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || size > 1<<40 {
		return nil, fmt.Errorf("cannot map %d bytes", size)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.regs[uintptr(unsafe.Pointer(&mem[0]))] = &region{mem: mem, f: f, size: size}
	s.mu.Unlock()
	return mem, nil
}
