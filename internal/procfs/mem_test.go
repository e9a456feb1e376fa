package procfs

import (
	"os"
	"testing"
	"unsafe"
)

var memProbe = [8]byte{'c', 'l', 'r', 's', 'p', 'y', 0x5a, 0xa5}

func TestMemReadsOwnMemory(t *testing.T) {
	m, err := OpenMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var b [8]byte
	if _, err := m.ReadAt(b[:], int64(uintptr(unsafe.Pointer(&memProbe[0])))); err != nil {
		t.Fatal(err)
	}
	if b != memProbe {
		t.Fatalf("read %q, want %q", b, memProbe)
	}
	// Page zero is never mapped: an error, not a short read.
	if n, err := m.ReadAt(b[:], 16); err == nil {
		t.Fatalf("read %d bytes at 0x10 without error", n)
	}
	if _, err := m.ReadAt(b[:], -8); err == nil {
		t.Fatal("read a kernel address without error")
	}
}
