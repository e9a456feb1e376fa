package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/clrspy/clrspy/internal/procfs"
)

// PartialSuffix starts the suffix of the file being written.
const PartialSuffix = ".partial-"

// Options control the file once complete.
type Options struct {
	// Perm is the permission of the complete file, less the process's
	// umask (default 0644). Traces of another user's process use 0600.
	Perm os.FileMode
}

// File is an output file being written. It is not safe for concurrent use.
type File struct {
	name    string   // the final name
	partial string   // "" when writing straight to a stream (Open of '-', /dev/...)
	f       *os.File // nil for a writer that is not a file (stdout in tests)
	w       io.Writer
	perm    os.FileMode
	err     error // first write error
	done    bool
	keep    bool // Close must not close w (standard output)
}

// Open is Create, except that "-" writes to stdout (Close and Abort leave
// it open).
func Open(path string, stdout io.Writer, opt Options) (*File, error) {
	if path == "-" {
		return &File{name: "-", w: stdout, keep: true}, nil
	}
	return Create(path, opt)
}

// Create starts the file path: a new partial file beside it, renamed to
// path by Close.
func Create(path string, opt Options) (*File, error) {
	if path == "" {
		return nil, errors.New("empty output file name")
	}
	perm := opt.Perm
	if perm == 0 {
		perm = 0o644
	}
	if isStreamPath(path) {
		// O_WRONLY without O_CREAT or O_TRUNC: an existing device or
		// descriptor, used as it is.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, pathError(path, err)
		}
		return &File{name: path, f: f, w: f, perm: perm}, nil
	}
	if err := missingDevice(path); err != nil {
		return nil, err
	}
	if err := checkDirs(path); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(path); err == nil {
		switch m := st.Mode(); {
		case m&os.ModeSymlink != 0:
			to, _ := os.Readlink(path)
			return nil, fmt.Errorf("%s is a symbolic link (to %s) owned by %s: not writing through it (remove it, or name the file it points to)", path, to, ownerOf(st))
		case m.IsDir():
			return nil, fmt.Errorf("%s is a directory", path)
		case m&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice|os.ModeCharDevice) != 0:
			// A pipe the user made (mkfifo) is written as it is; one
			// planted by someone else would receive the data.
			if uid(st) != os.Geteuid() || m&os.ModeNamedPipe == 0 {
				return nil, fmt.Errorf("%s is %s owned by %s: not writing into it", path, procfs.FileKind(m), ownerOf(st))
			}
			f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return nil, pathError(path, err)
			}
			return &File{name: path, f: f, w: f, perm: perm}, nil
		}
	} else if !os.IsNotExist(err) {
		return nil, pathError(path, err)
	}
	var f *os.File
	var partial string
	for range 16 {
		var r [4]byte
		rand.Read(r[:])
		partial = path + PartialSuffix + hex.EncodeToString(r[:])
		var err error
		f, err = os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			switch {
			case os.IsNotExist(err):
				return nil, said(fmt.Sprintf("cannot write %s: no such directory %s", path, filepath.Dir(path)), err)
			case os.IsPermission(err):
				return nil, said(fmt.Sprintf("cannot write %s: permission denied (creating files in %s)", path, filepath.Dir(path)), err)
			}
			return nil, fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
		}
		f = nil
	}
	if f == nil {
		return nil, fmt.Errorf("cannot create a partial file beside %s: every name taken", path)
	}
	// The lock says the partial file has a writer: a later run removes
	// only the ones nobody holds (their writer was killed).
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	cleanStale(path, partial)
	return &File{name: path, partial: partial, f: f, w: f, perm: perm}, nil
}

// cleanStale removes the empty partial files of path that an earlier
// clrspy of this user left when it was killed outright (SIGKILL before its
// first write): regular files of this user, named as Create names them,
// empty, and locked by no writer. A non-empty one holds what its run
// received (a record cut by SIGKILL) and is left for the user.
func cleanStale(path, mine string) {
	matches, _ := filepath.Glob(globEscape(path) + PartialSuffix + "????????")
	for _, m := range matches {
		if m == mine {
			continue
		}
		g, err := os.OpenFile(m, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		st, err := g.Stat()
		if err == nil && st.Mode().IsRegular() && st.Size() == 0 && uid(st) == os.Geteuid() &&
			syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			// Still the file opened (not swapped meanwhile): remove it.
			if lst, err := os.Lstat(m); err == nil && os.SameFile(st, lst) {
				os.Remove(m)
			}
		}
		g.Close()
	}
}

// globEscape quotes the pattern characters of a path for filepath.Glob.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Name is the final name ("-" for standard output).
func (f *File) Name() string { return f.name }

// PartialName is the name of the file being written ("" when writing
// straight to a stream).
func (f *File) PartialName() string { return f.partial }

// SetPerm changes the permission the complete file gets (before Close):
// 0600 once the data turns out to be another user's.
func (f *File) SetPerm(p os.FileMode) { f.perm = p }

// Write writes to the partial file; the first error is kept and makes
// Close fail.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.done {
		return 0, fmt.Errorf("writing %s: %w", f.name, os.ErrClosed)
	}
	n, err := f.w.Write(p)
	if err != nil {
		f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
	}
	return n, f.err
}

// Close completes the file: flushed to disk, given its permissions and
// renamed to its final name. After a write error, or when any step fails,
// the partial file is removed, the final name keeps what it had, and the
// error is returned.
func (f *File) Close() error {
	if f.done {
		return f.err
	}
	f.done = true
	if f.keep {
		return f.err
	}
	if f.partial == "" {
		err := f.f.Close()
		if f.err == nil && err != nil {
			f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
		}
		return f.err
	}
	fail := func(err error) error {
		f.f.Close()
		os.Remove(f.partial)
		if f.err == nil {
			f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
		}
		return f.err
	}
	if f.err != nil {
		return fail(f.err)
	}
	if err := f.f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.f.Chmod(f.perm &^ umask()); err != nil {
		return fail(err)
	}
	if err := f.f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(f.partial, f.name); err != nil {
		os.Remove(f.partial)
		f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
		return f.err
	}
	// The rename itself reaches the disk with the directory.
	if d, err := os.Open(filepath.Dir(f.name)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort drops the file: the partial file is removed and the final name
// keeps what it had. A no-op after Close.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.keep {
		return nil
	}
	err := f.f.Close()
	if f.partial != "" {
		return os.Remove(f.partial)
	}
	return err
}

// Finish is Close when err is nil and Abort otherwise, returning err or
// Close's error: the end of a report written in one go.
func (f *File) Finish(err error) error {
	if err != nil {
		f.Abort()
		return err
	}
	return f.Close()
}

// isStreamPath reports whether path names an existing stream the user
// chose explicitly: one of clrspy's own descriptors (/dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N) or a character device owned by
// root or clrspy's user (/dev/null, /dev/full, a terminal). Anything else
// under /dev/ is a path like any other: /dev/shm is world-writable and
// sticky like /tmp, and a file, link or pipe planted there gets the same
// refusals.
func isStreamPath(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	switch {
	case abs == "/dev/stdout", abs == "/dev/stderr", abs == "/dev/stdin",
		strings.HasPrefix(abs, "/dev/fd/"), strings.HasPrefix(abs, "/proc/self/fd/"):
		return true
	}
	if !strings.HasPrefix(abs, "/dev/") {
		return false
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return false
	}
	u := uid(st)
	return st.Mode()&os.ModeCharDevice != 0 && (u == 0 || u == os.Geteuid())
}

// missingDevice is the error for a name directly in /dev that does not
// exist: clrspy makes no new files among the devices.
func missingDevice(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil || filepath.Dir(abs) != "/dev" {
		return nil
	}
	if _, err := os.Lstat(abs); err != nil {
		return pathError(path, err)
	}
	return nil
}

// checkDirs applies the rule of fs.protected_symlinks=1 to the directory
// components of path: a symbolic link in a sticky, world-writable
// directory is only followed when it belongs to clrspy's user or to the
// directory's owner. Components that do not exist are left to the create
// to report.
func checkDirs(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	me := os.Geteuid()
	cur := "/"
	for _, c := range strings.Split(strings.TrimPrefix(dir, "/"), "/") {
		if c == "" {
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if err != nil {
			return nil
		}
		if st.Mode()&os.ModeSymlink != 0 {
			parent, err := os.Stat(cur)
			if err == nil && parent.Mode()&os.ModeSticky != 0 && parent.Mode().Perm()&0o002 != 0 &&
				uid(st) != me && uid(st) != uid(parent) {
				to, _ := os.Readlink(next)
				return fmt.Errorf("%s: %s is a symbolic link (to %s) owned by %s in the shared directory %s: not following it", path, next, to, ownerOf(st), cur)
			}
			// Follow it, as the kernel will.
			to, err := filepath.EvalSymlinks(next)
			if err != nil {
				return nil
			}
			next = to
		}
		cur = next
	}
	return nil
}

func uid(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

func ownerOf(st os.FileInfo) string {
	u := uid(st)
	if u < 0 {
		return "an unknown user"
	}
	if me := os.Geteuid(); u == me {
		return "you"
	}
	if usr, err := user.LookupId(strconv.Itoa(u)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", usr.Username, u)
	}
	return fmt.Sprintf("uid %d", u)
}

// said is err told in a sentence of its own: Error is msg, and
// errors.Is still sees err's cause (a caller counting failures by errno).
func said(msg string, err error) error { return &saidError{msg, unwrapPath(err)} }

type saidError struct {
	msg string
	err error
}

func (e *saidError) Error() string { return e.msg }
func (e *saidError) Unwrap() error { return e.err }

// pathError is err in one line naming path.
func pathError(path string, err error) error {
	return fmt.Errorf("%s: %w", path, unwrapPath(err))
}

// unwrapPath drops an *os.PathError's operation and path (the messages
// here name the file themselves).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// umask is the process's umask, read from /proc/self/status (reading it
// with umask(2) would change it for a moment under other goroutines).
func umask() os.FileMode {
	umaskVal := 0o022
	if b, err := procfs.Status(procfs.Self); err == nil {
		if v := procfs.StatusField(b, "Umask"); len(v) == 1 {
			if n, err := strconv.ParseUint(v[0], 8, 32); err == nil {
				umaskVal = int(n)
			}
		}
	}
	return os.FileMode(umaskVal)
}

// Err is the first write error (nil when every write went through).
func (f *File) Err() error { return f.err }

// Seal cuts the file being written at offset and appends tail: a stream
// copy cut inside an object becomes complete up to that object (record's
// target died mid-block). Writing straight to a stream, it does nothing.
func (f *File) Seal(offset int64, tail []byte) error {
	if f.f == nil || f.partial == "" || f.err != nil || f.done {
		return f.err
	}
	if err := f.f.Truncate(offset); err != nil {
		f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
		return f.err
	}
	if _, err := f.f.WriteAt(tail, offset); err != nil {
		f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
		return f.err
	}
	// Later writes go after the tail.
	if _, err := f.f.Seek(offset+int64(len(tail)), io.SeekStart); err != nil {
		f.err = fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
	}
	return f.err
}

// Check reports, in one line, why Create(path) would fail, without
// creating anything that stays: the final name is not a symbolic link, a
// directory or another user's pipe or device, the path's directories pass
// the protected_symlinks rule, and the directory exists and takes a new
// file (one is created and removed at once, so a read-only file system, a
// missing write permission or an ACL all show). Commands call it before
// they attach or start a program, so a bad -o costs nothing. "-", clrspy's
// own descriptors and root's character devices are streams: they only
// have to exist.
func Check(path string) error {
	switch {
	case path == "-":
		return nil
	case path == "":
		return errors.New("empty output file name")
	case isStreamPath(path):
		if _, err := os.Stat(path); err != nil {
			return pathError(path, err)
		}
		return nil
	}
	if err := missingDevice(path); err != nil {
		return err
	}
	if err := checkDirs(path); err != nil {
		return err
	}
	if st, err := os.Lstat(path); err == nil {
		switch m := st.Mode(); {
		case m&os.ModeSymlink != 0:
			to, _ := os.Readlink(path)
			return fmt.Errorf("%s is a symbolic link (to %s) owned by %s: not writing through it (remove it, or name the file it points to)", path, to, ownerOf(st))
		case m.IsDir():
			return fmt.Errorf("%s is a directory: name a file in it", path)
		case m&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice|os.ModeCharDevice) != 0:
			if uid(st) != os.Geteuid() || m&os.ModeNamedPipe == 0 {
				return fmt.Errorf("%s is %s owned by %s: not writing into it", path, procfs.FileKind(m), ownerOf(st))
			}
			return nil
		}
	} else if !os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR) {
		return pathError(path, err)
	}
	return CheckDir(filepath.Dir(path), path)
}

// CheckDir reports why a new file cannot be created in dir (for is the
// name the message speaks of: the file, or the directory itself).
func CheckDir(dir, what string) error {
	st, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		if dir == what {
			return fmt.Errorf("%s: no such directory", dir)
		}
		return fmt.Errorf("cannot write %s: no such directory %s", what, dir)
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", what, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", what, dir)
	}
	var r [4]byte
	rand.Read(r[:])
	probe := filepath.Join(dir, ".clrspy-check"+PartialSuffix+hex.EncodeToString(r[:]))
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if os.IsPermission(err) {
			return fmt.Errorf("cannot write %s: permission denied (creating files in %s)", what, dir)
		}
		return fmt.Errorf("cannot write %s: %w", what, unwrapPath(err))
	}
	f.Close()
	os.Remove(probe)
	return nil
}
