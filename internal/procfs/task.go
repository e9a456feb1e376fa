package procfs

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Task is what the kernel says of one thread now (clrspy stacks).
type Task struct {
	Tid  uint64
	Name string // comm
	// State is the kernel's one-letter state (R running, S sleeping, D
	// disk wait, T/t stopped, Z zombie); 0 when the thread is gone.
	State byte
	// Syscall is the number of the system call the thread is blocked in,
	// -1 when it runs in user space, -2 when /proc does not say (another
	// user's process, or ptrace restrictions).
	Syscall int
	// Wchan is the kernel function the thread sleeps in ("" unknown or
	// not sleeping).
	Wchan string
}

// ReadTask reads one thread's comm, stat, syscall and wchan.
func ReadTask(pid int, tid uint64) Task {
	t := Task{Tid: tid, Name: Comm(pid, tid), Syscall: -2}
	if b, err := TaskFile(pid, int(tid), "stat"); err == nil {
		// "tid (comm) S ...": comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			t.State = b[i+2]
		}
	}
	if b, err := TaskFile(pid, int(tid), "syscall"); err == nil {
		f := strings.Fields(string(b))
		switch {
		case len(f) > 0 && f[0] == "running":
			t.Syscall = -1
		case len(f) > 0:
			if n, err := strconv.Atoi(f[0]); err == nil {
				t.Syscall = n
			}
		}
	}
	if b, err := TaskFile(pid, int(tid), "wchan"); err == nil {
		if w := strings.TrimSpace(string(b)); w != "0" {
			t.Wchan = w
		}
	}
	return t
}

// SyscallName names the system calls a blocked thread is commonly in on
// this machine's architecture ("" for others and for -1/-2).
func SyscallName(n int) string {
	var tab map[int]string
	switch runtime.GOARCH {
	case "amd64":
		tab = syscallsAMD64
	case "arm64":
		tab = syscallsARM64
	}
	if s, ok := tab[n]; ok {
		return s
	}
	if n >= 0 {
		return fmt.Sprintf("syscall_%d", n)
	}
	return ""
}

var syscallsAMD64 = map[int]string{
	0: "read", 1: "write", 7: "poll", 17: "pread64", 19: "readv", 23: "select", 34: "pause", 35: "nanosleep",
	43: "accept", 45: "recvfrom", 47: "recvmsg", 61: "wait4", 202: "futex", 230: "clock_nanosleep",
	232: "epoll_wait", 257: "openat", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 288: "accept4", 441: "epoll_pwait2",
}

var syscallsARM64 = map[int]string{
	56: "openat", 63: "read", 64: "write", 65: "readv", 67: "pread64", 72: "pselect6", 73: "ppoll", 98: "futex",
	101: "nanosleep", 115: "clock_nanosleep", 202: "accept", 207: "recvfrom", 212: "recvmsg", 242: "accept4",
	260: "wait4", 22: "epoll_pwait", 441: "epoll_pwait2",
}
