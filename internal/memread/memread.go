// Package memread reads a live process's memory split: its smaps
// (procfs), classified by package memory with its threads' stack pointers
// as hints, and its memory cgroup. It is the one reading that clrspy
// triage, top and serve share (package memory itself does no I/O).
package memread

import (
	"errors"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
)

// ErrGone: the process has no mappings (it exited, or is a zombie).
var ErrGone = errors.New("no such process")

// Read is pid's split now, classified with hints (their stack pointers
// filled in), and its memory cgroup (nil when none is visible).
func Read(pid int, hints memory.Hints) (memory.Split, *procfs.CgroupMemory, error) {
	es, err := procfs.Smaps(pid)
	if err != nil {
		return memory.Split{}, nil, err
	}
	if len(es) == 0 {
		return memory.Split{}, nil, ErrGone
	}
	hints.StackPointers = StackPointers(pid)
	sp := memory.Classify(es, hints)
	cg, err := procfs.ReadCgroupMemory(pid)
	if err != nil {
		cg = nil
	}
	return sp, cg, nil
}

// StackPointers is every thread's stack pointer now, as Hints takes them.
func StackPointers(pid int) []uint64 {
	m := procfs.ThreadStackPointers(pid)
	out := make([]uint64, 0, len(m))
	for _, sp := range m {
		out = append(out, sp)
	}
	return out
}
