package perf

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Access is what Check found out about sampling a process.
type Access struct {
	// Kernel is set when kernel frames are sampled too.
	Kernel bool
	// Paranoid is kernel.perf_event_paranoid.
	Paranoid int
	// Privileged is set when clrspy has CAP_PERFMON or CAP_SYS_ADMIN.
	Privileged bool
	// Note says, in one line, why kernel frames are left out when they
	// are ("" otherwise).
	Note string
	// OffCPU is set when Options.OffCPU was asked for and the switch
	// events can be opened; otherwise OffCPUNote says why not, in one line.
	OffCPU     bool
	OffCPUNote string
	// SwitchID is the sched:sched_switch tracepoint's id.
	SwitchID int
}

// UnavailableError says why perf_event sampling of a process is not
// possible, in one line fit for a fallback note
// ("perf sampler unavailable: ...").
type UnavailableError struct {
	Pid    int
	Reason string
	Err    error // the errno, when a system call said no
}

func (e *UnavailableError) Error() string { return e.Reason }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Capability bits of CapEff.
const (
	capSysAdmin = 21
	capIPCLock  = 14
	capPerfmon  = 38
)

// paranoidPath is kernel.perf_event_paranoid (a variable for tests).
var paranoidPath = "/proc/sys/kernel/perf_event_paranoid"

// Check reports whether the Sampler can sample pid with opts, and with
// what. The error is an *UnavailableError whose message is the one-line
// reason (perf_event_paranoid, another user's process, seccomp, no
// hardware counters, no such process). It opens and closes one event on
// the target's main thread: what the kernel says is the final word.
func Check(pid int, opts Options) (Access, error) {
	if err := opts.defaults(); err != nil {
		return Access{}, err
	}
	unavailable := func(err error, format string, args ...any) (Access, error) {
		return Access{}, &UnavailableError{Pid: pid, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	b, err := os.ReadFile(paranoidPath)
	if err != nil {
		return unavailable(err, "this kernel has no perf_event support (%s: %v)", paranoidPath, errors.Unwrap(err))
	}
	par, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return unavailable(err, "cannot read %s: %q", paranoidPath, b)
	}
	acc := Access{Paranoid: par, Privileged: hasCap(capPerfmon) || hasCap(capSysAdmin)}
	if !acc.Privileged && par >= 3 {
		return unavailable(unix.EACCES, "perf_event_paranoid is %d: unprivileged perf_event_open is disabled (needs CAP_PERFMON, root, or perf_event_paranoid ≤ 2)", par)
	}
	if !procfs.Exists(pid) {
		return unavailable(unix.ESRCH, "no process with pid %d", pid)
	}
	acc.Kernel = !opts.NoKernel && (acc.Privileged || par <= 1)
	for {
		a := opts.attr(acc.Kernel, 4096)
		fd, err := perfOpen(&a, pid, -1)
		if err == nil {
			unix.Close(fd)
			break
		}
		if acc.Kernel && (err == unix.EACCES || err == unix.EPERM) {
			acc.Kernel = false // try user frames only
			continue
		}
		return unavailable(err, "%s", openFailure(pid, opts, acc, err))
	}
	if !acc.Kernel && !opts.NoKernel {
		acc.Note = fmt.Sprintf("kernel frames omitted: perf_event_paranoid is %d and clrspy has no CAP_PERFMON", par)
	}
	if opts.OffCPU {
		acc.SwitchID, acc.OffCPUNote = checkOffCPU(pid, opts, acc)
		acc.OffCPU = acc.OffCPUNote == ""
	}
	return acc, nil
}

// openFailure explains a failed perf_event_open on pid.
func openFailure(pid int, opts Options, acc Access, err error) string {
	errno, _ := err.(unix.Errno)
	switch errno {
	case unix.ESRCH:
		return fmt.Sprintf("no process with pid %d", pid)
	case unix.ENOSYS:
		return "perf_event_open is not available in this kernel (ENOSYS)"
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV:
		if opts.Event == "cycles" {
			return fmt.Sprintf("the cycles hardware event is not available here (%s: no PMU exposed, e.g. in a VM); use cpu-clock", errnoName(errno))
		}
		return fmt.Sprintf("the %s event is not available in this kernel (%s)", opts.Event, errnoName(errno))
	case unix.EMFILE, unix.ENFILE:
		return "out of file descriptors for perf events (" + errnoName(errno) + ")"
	case unix.EACCES, unix.EPERM:
		if errno == unix.EPERM && seccompActive() {
			return fmt.Sprintf("perf_event_open is blocked by seccomp (EPERM; perf_event_paranoid %d): in a container, grant CAP_PERFMON or allow the syscall in the seccomp profile", acc.Paranoid)
		}
		if uid, ok := procUID(pid); ok && uid != os.Geteuid() && !acc.Privileged {
			return fmt.Sprintf("pid %d belongs to %s, clrspy runs as uid %d: sampling another user's process needs CAP_PERFMON or root (%s)",
				pid, userName(uid), os.Geteuid(), errnoName(errno))
		}
		return fmt.Sprintf("perf_event_open refused (%s) at perf_event_paranoid %d without CAP_PERFMON", errnoName(errno), acc.Paranoid)
	}
	return fmt.Sprintf("perf_event_open: %v", err)
}

func errnoName(e unix.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}

// hasCap reports whether the effective capability set has bit.
func hasCap(bit uint) bool {
	v := selfStatus("CapEff")
	if len(v) == 0 {
		return false
	}
	caps, err := strconv.ParseUint(v[0], 16, 64)
	return err == nil && caps&(1<<bit) != 0
}

// seccompActive reports whether a seccomp filter applies to clrspy (a
// variable for tests).
var seccompActive = func() bool {
	v := selfStatus("Seccomp")
	return len(v) > 0 && v[0] != "0"
}

// procUID is the real uid of pid.
func procUID(pid int) (int, bool) {
	b, err := procfs.Status(pid)
	if err != nil {
		return 0, false
	}
	f := procfs.StatusField(b, "Uid")
	if len(f) == 0 {
		return 0, false
	}
	uid, err := strconv.Atoi(f[0])
	return uid, err == nil
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// selfStatus is one field of clrspy's own /proc/self/status.
func selfStatus(key string) []string {
	b, _ := procfs.Status(procfs.Self)
	return procfs.StatusField(b, key)
}
