package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/clrspy/clrspy/internal/plant"
)

// shmName is a fresh name in /dev/shm, removed at the end of the test.
func shmName(t *testing.T) string {
	var r [6]byte
	rand.Read(r[:])
	p := "/dev/shm/clrspy-test-" + hex.EncodeToString(r[:])
	t.Cleanup(func() {
		ms, _ := filepath.Glob(p + "*")
		for _, m := range ms {
			os.Remove(m)
		}
	})
	return p
}

// TestDevShm: /dev/shm is world-writable and sticky like /tmp; what another
// user planted there gets the refusals of any other path, and only real
// character devices and clrspy's own descriptors are streams.
func TestDevShm(t *testing.T) {
	uid, gid := plant.User(t)
	// A file planted by another user (0666) is replaced, not written
	// into: the report lands in a new file of ours with our mode.
	planted := shmName(t)
	if err := os.WriteFile(planted, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chown(planted, uid, gid)
	os.Chmod(planted, 0o666)
	f, err := Create(planted, Options{Perm: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	if f.PartialName() == "" {
		t.Fatal("a planted file in /dev/shm was opened as a stream")
	}
	f.Write([]byte("secret"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(planted)
	if err != nil {
		t.Fatal(err)
	}
	if got := uid2(st); got != os.Geteuid() || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: owner %d mode %v, want ours (%d) and 0600", planted, got, st.Mode().Perm(), os.Geteuid())
	}
	// A symbolic link planted there is not followed.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("root's"), 0o644)
	link := shmName(t)
	os.Symlink(victim, link)
	os.Lchown(link, uid, gid)
	want := fmt.Sprintf("%s is a symbolic link (to %s) owned by user %s (uid %d): not writing through it (remove it, or name the file it points to)", link, victim, plant.UserName, uid)
	if _, err := Create(link, Options{}); err == nil || err.Error() != want {
		t.Errorf("symlink: got %v\nwant %s", err, want)
	}
	if err := Check(link); err == nil || err.Error() != want {
		t.Errorf("Check(symlink): got %v\nwant %s", err, want)
	}
	if mustRead(t, victim) != "root's" {
		t.Error("the link's target was overwritten")
	}
	// A FIFO planted there never receives the data (Create would block
	// on it if it were opened).
	fifo := shmName(t)
	syscall.Mkfifo(fifo, 0o666)
	os.Chown(fifo, uid, gid)
	want = fmt.Sprintf("%s is a named pipe owned by user %s (uid %d): not writing into it", fifo, plant.UserName, uid)
	if _, err := Create(fifo, Options{}); err == nil || err.Error() != want {
		t.Errorf("fifo: got %v\nwant %s", err, want)
	}
	// A new name in /dev/shm is an ordinary file.
	fresh := shmName(t)
	if err := Check(fresh); err != nil {
		t.Errorf("Check(%s): %v", fresh, err)
	}
	g, err := Create(fresh, Options{})
	if err != nil || g.PartialName() == "" {
		t.Fatalf("%s: %v, partial %q", fresh, err, g.PartialName())
	}
	g.Abort()
	// Real devices stay streams.
	for _, dev := range []string{"/dev/null", "/dev/full"} {
		if !isStreamPath(dev) {
			t.Errorf("%s is not a stream", dev)
		}
	}
	h, _ := Create("/dev/full", Options{})
	h.Write([]byte("x"))
	if err := h.Close(); err == nil || err.Error() != "writing /dev/full: no space left on device" {
		t.Errorf("/dev/full: %v", err)
	}
	if err := Check("/dev/clrspy-none"); err == nil || err.Error() != "/dev/clrspy-none: no such file or directory" {
		t.Errorf("a missing device: %v", err)
	}
}

func uid2(st os.FileInfo) int { return int(st.Sys().(*syscall.Stat_t).Uid) }

// TestStalePartials: an empty partial file left by a run killed before its
// first write is removed by the next Create of the same name; one still
// being written (locked), a non-empty one (data a killed record received)
// and another user's are kept.
func TestStalePartials(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.nettrace")
	stale := path + PartialSuffix + "0badcafe"
	full := path + PartialSuffix + "0000beef"
	os.WriteFile(stale, nil, 0o600)
	os.WriteFile(full, []byte("events"), 0o600)
	other := path + PartialSuffix + "00c0ffee"
	os.WriteFile(other, nil, 0o600)
	if os.Geteuid() == 0 {
		uid, gid := plant.User(t)
		os.Chown(other, uid, gid)
	}
	busy, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale partial file is still there: %v", err)
	}
	second, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := entries(t, dir)
	keeps := []string{full, busy.PartialName(), second.PartialName()}
	if os.Geteuid() == 0 {
		keeps = append(keeps, other)
	}
	for _, keep := range keeps {
		if !slices.Contains(names, filepath.Base(keep)) {
			t.Errorf("%s was removed; left %v", filepath.Base(keep), names)
		}
	}
	busy.Abort()
	second.Abort()
}
