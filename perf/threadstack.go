package perf

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/unwind"
)

// threadStackCopy is how much of a blocked thread's user stack is read
// from its stack pointer: the native frames of a wait and the managed
// frames above it fit in far less.
const threadStackCopy = 64 << 10

// ThreadStack is the native side of one thread's stack now: its kernel
// frames and its user frames (native, and managed where the walk got
// that far), newest first.
type ThreadStack struct {
	Kernel []stacks.Frame
	User   []stacks.Frame
	// KernelReason, UserReason say why a side is empty ("" when walked).
	KernelReason, UserReason string
	// End is why the user walk stopped.
	End string
}

// Walker walks the stacks of a process's blocked threads without stopping
// them: a thread inside a system call has its user stack pointer and
// instruction pointer in /proc/PID/task/TID/syscall, its user stack is
// read from /proc/PID/mem, and the walk is the profiler's (DWARF CFI
// through native code, frame pointers through JIT'd code); its kernel
// frames are /proc/PID/task/TID/stack (root). A running thread (no
// syscall) has no registers to be had without stopping it.
type Walker struct {
	pid int
	b   *Builder
	mem *procfs.Mem
	buf []byte
}

// NewWalker opens pid for Walk; syms names the managed frames from the
// session of header hdr (both nil: the perf map's names alone).
func NewWalker(pid int, hdr *nettrace.Header, syms *stacks.Symbols) (*Walker, error) {
	b, err := NewBuilder(pid, hdr, syms, BuilderOptions{MaxDepth: 128})
	if err != nil {
		return nil, err
	}
	m, err := procfs.OpenMem(pid)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("reading the target's stacks: %v", err)
	}
	return &Walker{pid: pid, b: b, mem: m, buf: make([]byte, threadStackCopy)}, nil
}

// Close releases the process.
func (w *Walker) Close() error {
	w.mem.Close()
	return w.b.Close()
}

// Walk walks thread tid's stack as it is now.
func (w *Walker) Walk(tid int) ThreadStack {
	var out ThreadStack
	out.Kernel, out.KernelReason = kernelStack(w.pid, tid)
	sys, err := procfs.TaskFile(w.pid, tid, "syscall")
	if err != nil {
		out.UserReason = fmt.Sprintf("its registers are not readable (%v: root, or ptrace permission as the same user)", err)
		return out
	}
	f := strings.Fields(string(sys))
	switch {
	case len(f) > 0 && f[0] == "running":
		out.UserReason = "it was running: its registers are not to be had without stopping it"
		return out
	case len(f) < 3:
		out.UserReason = "the kernel's syscall record of it holds no registers"
		return out
	}
	sp, err1 := strconv.ParseUint(strings.TrimPrefix(f[len(f)-2], "0x"), 16, 64)
	pc, err2 := strconv.ParseUint(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
	if err1 != nil || err2 != nil || sp == 0 {
		out.UserReason = "the kernel's syscall record of it holds no registers"
		return out
	}
	n, _ := w.mem.ReadAt(w.buf, int64(sp))
	if n == 0 {
		out.UserReason = "its stack is not readable"
		return out
	}
	// Only the stack and instruction pointers are known: the walk starts
	// from the system call's return address with the CFI of the libc
	// wrapper it is in, which needs no other register.
	var now unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	s := &Sample{Tid: tid, Time: now.Nano(), HasRegs: true, Regs: unwind.Regs{IP: pc, SP: sp}, Stack: w.buf[:n]}
	w.b.mu.Lock()
	before := w.b.ends
	raw, _ := w.b.stackOf(s)
	for i := range before {
		if w.b.ends[i] != before[i] {
			out.End = unwind.End(i).String()
		}
	}
	w.b.mu.Unlock()
	fr := w.b.Frames([]int32{raw})
	if len(fr) > 0 {
		out.User = fr[0]
	}
	return out
}

// kernelStack reads /proc/PID/task/TID/stack: "[<0>] futex_wait_queue+0x60/0x90" lines,
// the kernel's frames newest first (readable by root alone).
func kernelStack(pid, tid int) ([]stacks.Frame, string) {
	b, err := procfs.TaskFile(pid, tid, "stack")
	if err != nil {
		return nil, fmt.Sprintf("the kernel's stack of a thread is readable by root alone (%v)", err)
	}
	var out []stacks.Frame
	for _, l := range bytes.Split(b, []byte("\n")) {
		s := string(l)
		if i := strings.IndexByte(s, ']'); i >= 0 {
			s = s[i+1:]
		}
		s = strings.TrimSpace(s)
		if i := strings.IndexByte(s, '+'); i > 0 {
			s = s[:i]
		}
		if s == "" {
			continue
		}
		out = append(out, stacks.Frame{Name: s, Module: "[kernel]", Kind: stacks.KindKernel})
	}
	return out, ""
}
