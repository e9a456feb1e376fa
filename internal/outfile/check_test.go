package outfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheck: Check says in one line what Create would refuse, and leaves
// nothing behind.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	for path, want := range map[string]string{
		filepath.Join(dir, "out.json"):         "",
		file:                                   "",
		"-":                                    "",
		"/dev/null":                            "",
		filepath.Join(dir, "none", "out.json"): "cannot write " + filepath.Join(dir, "none", "out.json") + ": no such directory " + filepath.Join(dir, "none"),
		dir:                                    dir + " is a directory: name a file in it",
		filepath.Join(file, "x"):               "cannot write " + filepath.Join(file, "x") + ": " + file + " is not a directory",
		link:                                   link + " is a symbolic link (to " + file + ") owned by you: not writing through it (remove it, or name the file it points to)",
		"/dev/clrspy-none":                     "/dev/clrspy-none: no such file or directory",
	} {
		err := Check(path)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("Check(%s): %q, want %q", path, got, want)
			}
		} else if want != "" {
			t.Errorf("Check(%s): nil, want %q", path, want)
		}
	}
	if err := CheckDir(filepath.Join(dir, "none"), filepath.Join(dir, "none")); err == nil || err.Error() != filepath.Join(dir, "none")+": no such directory" {
		t.Errorf("CheckDir of a missing directory: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("Check left files behind: %d entries in %s, want the 2 the test made", len(ents), dir)
	}
}
