package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPty returns the two ends of a new pseudo-terminal.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestBinaryOutputRefusesTerminal: one rule for output meant for another
// program (docs/FLAGS.md rule 5): without -o it goes to standard output,
// but not to a terminal, for every command that writes it (issue 27:
// profile wrote ./profile.pb.gz while locks and heap refused).
func TestBinaryOutputRefusesTerminal(t *testing.T) {
	master, tty := openPty(t)
	go io.Copy(io.Discard, master) // whatever reaches the screen
	old := os.Stdout
	os.Stdout = tty
	defer func() { os.Stdout = old }()
	trace := filepath.Join(sharedTraces, "perfview__only_managed_samples.nettrace")
	for _, c := range []struct {
		args []string
		what string
	}{
		{[]string{"profile", trace}, "--format pprof"},
		{[]string{"profile", "--format", "html", trace}, "--format html"},
		{[]string{"profile", "--format", "speedscope", "-o", "-", trace}, "--format speedscope"},
		{[]string{"heap", "--format", "pprof", trace}, "--format pprof"},
		{[]string{"locks", "--format", "pprof", trace}, "--format pprof"},
		{[]string{"record", "-o", "-", "--pid", "1"}, "record"},
		{[]string{"report", "-o", "-", trace}, "report"},
	} {
		root := newRootCmd()
		root.SetArgs(c.args)
		root.SetOut(tty)
		err := root.Execute()
		want := c.what + " writes a file for another program, not for a terminal: give -o FILE or redirect standard output (> FILE or | ...)"
		if err == nil || err.Error() != want {
			t.Errorf("clrspy %s on a terminal: %v, want %q", strings.Join(c.args, " "), err, want)
		}
	}
	// Text reports still go to the terminal.
	root := newRootCmd()
	root.SetArgs([]string{"profile", "--format", "folded", trace})
	root.SetOut(tty)
	if err := root.Execute(); err != nil {
		t.Errorf("profile --format folded on a terminal: %v", err)
	}
}
