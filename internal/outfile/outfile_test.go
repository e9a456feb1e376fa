package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clrspy/clrspy/internal/plant"
)

// stickyDir is a /tmp-like directory: world-writable, sticky.
func stickyDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return d
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The final name appears, complete, only at Close; until then the old file
// is intact and the data is in a 0600 partial file beside it.
func TestCreateReplacesAtClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new content")); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != "old" {
		t.Errorf("before Close the final name holds %q", got)
	}
	st, err := os.Stat(f.PartialName())
	if err != nil || st.Mode().Perm() != 0o600 || !strings.HasPrefix(filepath.Base(f.PartialName()), "out.json.partial-") {
		t.Fatalf("partial file %s: %v %v", f.PartialName(), st.Mode(), err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != "new content" {
		t.Errorf("after Close: %q", got)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left %v", n)
	}
}

// Modes: 0644 less the umask by default, 0600 when asked (traces of
// another user's process), whatever the umask.
func TestModes(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, tc := range []struct {
		set, want os.FileMode
	}{{0, 0o640}, {0o644, 0o640}, {0o600, 0o600}} {
		path := filepath.Join(dir, fmt.Sprintf("f%o", tc.set))
		f, err := Create(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.set != 0 {
			f.SetPerm(tc.set)
		}
		f.Write([]byte("x"))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != tc.want {
			t.Errorf("perm %o with umask 027: got %o want %o", tc.set, st.Mode().Perm(), tc.want)
		}
	}
}

// failWriter fails after n bytes, as a full disk does.
type failWriter struct {
	n   int
	err error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, w.err
	}
	w.n -= len(p)
	return len(p), nil
}

// A write error (injected ENOSPC) leaves no file under the final name when
// there was none, the old file when there was one, and no partial file.
func TestWriteErrorLeavesNothing(t *testing.T) {
	for _, existing := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "trace.nettrace")
		if existing {
			os.WriteFile(path, []byte("previous trace"), 0o644)
		}
		f, err := Create(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.w = &failWriter{n: 10, err: syscall.ENOSPC}
		f.Write([]byte("12345678"))
		_, werr := f.Write([]byte("12345678"))
		cerr := f.Close()
		want := "writing " + path + ": no space left on device"
		if werr == nil || werr.Error() != want || cerr == nil || cerr.Error() != want || !errors.Is(cerr, syscall.ENOSPC) {
			t.Errorf("write %v, close %v", werr, cerr)
		}
		switch n := entries(t, dir); {
		case existing && (len(n) != 1 || mustRead(t, path) != "previous trace"):
			t.Errorf("existing file: %v", n)
		case !existing && len(n) != 0:
			t.Errorf("left %v", n)
		}
	}
}

// A real full disk: a 64 KiB tmpfs (root only; it is mounted on a test
// directory and unmounted after). Neither the final name nor a 0-byte or
// partial file remains.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	path := filepath.Join(dir, "big.nettrace")
	f, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	chunk := bytes.Repeat([]byte{'x'}, 16<<10)
	for i := 0; i < 16 && werr == nil; i++ {
		_, werr = f.Write(chunk)
	}
	cerr := f.Close()
	if !errors.Is(werr, syscall.ENOSPC) || !errors.Is(cerr, syscall.ENOSPC) {
		t.Errorf("write %v, close %v", werr, cerr)
	}
	if n := entries(t, dir); len(n) != 0 {
		t.Errorf("a full disk left %v", n)
	}
}

// Abort removes the partial file and keeps the old one.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	if err := f.Finish(errors.New("report failed")); err == nil || err.Error() != "report failed" {
		t.Errorf("Finish: %v", err)
	}
	if n := entries(t, dir); len(n) != 1 || mustRead(t, path) != "old" {
		t.Errorf("left %v", n)
	}
}

// A symbolic link planted under the final name in a sticky /tmp-like
// directory is neither followed nor replaced: one line naming it, its
// target unchanged, nothing left behind. As root the link belongs to
// another user, as an attacker's would.
func TestPlantedSymlinkNotFollowed(t *testing.T) {
	dir := stickyDir(t)
	victim := filepath.Join(t.TempDir(), "passwd")
	os.WriteFile(victim, []byte("root:x:0:0"), 0o644)
	link := filepath.Join(dir, "out.nettrace")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	owner := "you"
	if os.Geteuid() == 0 {
		uid, gid := plant.User(t)
		os.Lchown(link, uid, gid)
		owner = fmt.Sprintf("user %s (uid %d)", plant.UserName, uid)
	}
	_, err := Create(link, Options{})
	want := fmt.Sprintf("%s is a symbolic link (to %s) owned by %s: not writing through it (remove it, or name the file it points to)", link, victim, owner)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if got := mustRead(t, victim); got != "root:x:0:0" {
		t.Errorf("target changed to %q", got)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left %v", n)
	}
	// A dangling link (to a file that does not exist yet) is not followed
	// either: creating through it would make the attacker's choice of file.
	os.Remove(victim)
	if _, err := Create(link, Options{}); err == nil {
		t.Error("created through a dangling link")
	}
	if _, err := os.Lstat(victim); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// A directory symlink planted in a sticky directory by another user is not
// followed (fs.protected_symlinks' rule, enforced even where the sysctl is
// off); one of clrspy's own user is.
func TestPlantedDirectorySymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own a link as another user")
	}
	uid, gid := plant.User(t)
	dir := stickyDir(t)
	elsewhere := t.TempDir()
	link := filepath.Join(dir, "d")
	os.Symlink(elsewhere, link)
	os.Lchown(link, uid, gid)
	_, err := Create(filepath.Join(link, "x.json"), Options{})
	want := fmt.Sprintf("%s: %s is a symbolic link (to %s) owned by user %s (uid %d) in the shared directory %s: not following it",
		filepath.Join(link, "x.json"), link, elsewhere, plant.UserName, uid, dir)
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if n := entries(t, elsewhere); len(n) != 0 {
		t.Errorf("wrote %v through the link", n)
	}
	os.Lchown(link, 0, 0)
	f, err := Create(filepath.Join(link, "x.json"), Options{})
	if err != nil {
		t.Fatalf("own link: %v", err)
	}
	f.Write([]byte("{}"))
	if err := f.Close(); err != nil || mustRead(t, filepath.Join(elsewhere, "x.json")) != "{}" {
		t.Errorf("own link: %v", err)
	}
}

// Named pipes: the user's own is written as it is; another user's is
// refused. /dev paths are opened as they are.
func TestSpecialFiles(t *testing.T) {
	dir := stickyDir(t)
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	f, err := Create(fifo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("through the pipe"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("pipe read %q", s)
	}
	if os.Geteuid() == 0 {
		uid, gid := plant.User(t)
		os.Chown(fifo, uid, gid)
		_, err := Create(fifo, Options{})
		want := fmt.Sprintf("%s is a named pipe owned by user %s (uid %d): not writing into it", fifo, plant.UserName, uid)
		if err == nil || err.Error() != want {
			t.Errorf("got  %v\nwant %s", err, want)
		}
	}
	f, err = Create("/dev/null", Options{})
	if err != nil || f.PartialName() != "" {
		t.Fatalf("/dev/null: %v", err)
	}
	f.Write([]byte("gone"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat("/dev/null"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v", st.Mode())
	}
	if _, err := Create(dir, Options{}); err == nil || err.Error() != dir+" is a directory" {
		t.Errorf("directory: %v", err)
	}
}

// A directory that does not exist: one line naming it, its cause still
// ENOENT (serve counts capture failures by it).
func TestNoDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope", "out.json")
	_, err := Create(path, Options{})
	if want := "cannot write " + path + ": no such directory " + filepath.Dir(path); err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !errors.Is(err, syscall.ENOENT) {
		t.Errorf("%v: not ENOENT", err)
	}
}

// "-" is standard output, left open.
func TestStdout(t *testing.T) {
	var b bytes.Buffer
	f, err := Open("-", &b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("report"))
	if err := f.Close(); err != nil || b.String() != "report" || f.Name() != "-" {
		t.Errorf("%v %q", err, b.String())
	}
}

// A partial name already taken (planted) is skipped, not opened.
func TestPartialNameTaken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	f, err := Create(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	taken := f.PartialName()
	f.Abort()
	os.Symlink("/etc/passwd", taken)
	for range 20 {
		g, err := Create(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g.PartialName() == taken {
			t.Fatal("reused a taken name")
		}
		g.Abort()
	}
}
