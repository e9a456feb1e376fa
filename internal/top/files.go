package top

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// OpenFile opens path for writing beside the screen (flag: os.O_APPEND
// or os.O_TRUNC), created 0644, never through a symbolic link.
func OpenFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		to, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s is a symbolic link (to %s): not writing through it (remove it, or name the file it points to)", path, to)
	}
	if err != nil {
		return nil, source.FileError(err)
	}
	return f, nil
}

// Files are the files of a top session beside the screen: a launched
// program's standard streams (the screen is the terminal's: they are
// discarded, or go to --program-output) and the --snapshot-every file.
type Files struct {
	// View are the lines the screen says of them.
	View     []string
	closers  []*os.File
	snaps    *os.File
	snapsNew bool // made here: its mode is clrspy's to set
}

// OpenFiles sets spec's program streams (when it launches a program) to
// /dev/null or programOutput, and opens snapshots ("": none) to append
// to. Close them once the session ends.
func OpenFiles(spec *source.Spec, programOutput, snapshots string) (*Files, error) {
	f := &Files{}
	if len(spec.Argv) > 0 {
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return f, err
		}
		f.closers = append(f.closers, null)
		spec.ProgramStdin, spec.ProgramStdinIsTerminal = null, false
		spec.ProgramStdout, spec.ProgramStderr = null, null
		if programOutput != "" {
			po, err := OpenFile(programOutput, os.O_TRUNC)
			if err != nil {
				return f, err
			}
			f.closers = append(f.closers, po)
			spec.ProgramStdout, spec.ProgramStderr = po, po
			f.View = append(f.View, "the program's output goes to "+programOutput)
		} else {
			f.View = append(f.View, "the program's output is discarded (--program-output FILE keeps it)")
		}
	}
	if snapshots != "" {
		_, serr := os.Lstat(snapshots)
		f.snapsNew = os.IsNotExist(serr)
		var err error
		if f.snaps, err = OpenFile(snapshots, os.O_APPEND); err != nil {
			return f, err
		}
		f.closers = append(f.closers, f.snaps)
	}
	return f, nil
}

// Opened narrows a snapshots file made here to its owner once st is open
// (capture.FilePerm) and says where the snapshots go (nil: nowhere).
func (f *Files) Opened(st *source.Stream, cfg *Options) {
	if f.snaps == nil {
		return
	}
	if f.snapsNew && capture.FilePerm(st) == 0o600 {
		f.snaps.Chmod(0o600)
	}
	cfg.SnapshotOut = f.snaps
}

// Close closes the files.
func (f *Files) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i].Close()
	}
}

// Watch fills o with what /proc and the target's memory give a live st
// (CPU: the mappings and image names; locks: the lock objects' types)
// and returns what stops them.
func Watch(st *source.Stream, o *monitor.Options) (stop func()) {
	var stops []func()
	if o.CPU && st.Live() {
		proc := source.WatchProc(st.Pid)
		stops = append(stops, proc.Stop)
		o.Mappings = proc.Mappings
		o.ImageNames = proc.ImageNames
	}
	if o.Locks && st.Live() && st.Pid > 0 && procfs.Exists(st.Pid) {
		nm := cdac.NewNamer(st.Pid)
		stops = append(stops, func() { nm.Close() })
		o.ObjectTypes = nm.Names
	}
	return func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
}

// Rundown names, for a live CPU session, the methods compiled before the
// attach (a rundown session of its own, on a goroutine); notes hears
// when it could not.
func Rundown(st *source.Stream, mon *monitor.Monitor, notes *Notes) {
	go func() {
		if err := st.Rundown(stacks.SymbolProviders(), mon.SymbolEvent); err != nil {
			notes.Add("methods compiled before attaching are named when the session ends (" + err.Error() + ")")
		}
	}()
}

// MemoryOf reads a live target's memory split for the header's line
// (Options.Memory).
func MemoryOf(pid int) func() (*memory.Split, *procfs.CgroupMemory, error) {
	return func() (*memory.Split, *procfs.CgroupMemory, error) {
		s, cg, err := capture.ReadMemory(pid, time.Now())
		if err != nil {
			return nil, nil, err
		}
		return &s.Split, cg, nil
	}
}
