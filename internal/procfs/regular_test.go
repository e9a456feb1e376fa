package procfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenRegular: a FIFO (no writer), a device and a directory are
// refused at once in one line, never waited on; a file over the bound is
// refused; a regular file opens.
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "System.Private.CoreLib.dll")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("0123456789"), 0o644)
	for path, want := range map[string]string{
		fifo:        fifo + ": a named pipe, not a regular file: not read",
		"/dev/zero": "/dev/zero: a character device, not a regular file: not read",
		dir:         dir + ": a directory, not a regular file: not read",
	} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenRegular(path, 0)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenRegular blocked", path)
		}
	}
	if _, err := OpenRegular(file, 5); err == nil || !strings.Contains(err.Error(), "10 bytes, over the 5") {
		t.Errorf("over the bound: %v", err)
	}
	f, err := OpenRegular(file, 10)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
