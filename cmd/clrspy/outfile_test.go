package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/plant"
	"github.com/clrspy/clrspy/internal/workload"
)

// A symbolic link another user planted in a sticky /tmp-like directory
// under the name given to -o is not followed: record, stat and profile
// stop with one line naming it, exit 1, and its target is unchanged.
func TestOutputSymlinkNotFollowed(t *testing.T) {
	uid, gid := plant.User(t)
	dir := plant.StickyDir(t)
	victim := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(victim, []byte("root:secret"), 0o600)
	link := filepath.Join(dir, "out.nettrace")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, uid, gid)
	trace := locksTrace
	want := fmt.Sprintf("clrspy: %s is a symbolic link (to %s) owned by user %s (uid %d): not writing through it (remove it, or name the file it points to)\n",
		link, victim, plant.UserName, uid)
	for _, args := range [][]string{
		{"record", "-o", link, "--", "/bin/true"},
		{"stat", "-o", link, trace},
		{"profile", "--format", "folded", "-o", link, trace},
		{"gentrace", "--size", "10KB", "-o", link},
	} {
		_, stderr, code := clrspyRun(t, args...)
		if code != 1 || stderr != want {
			t.Errorf("%v: exit %d\n got %q\nwant %q", args, code, stderr, want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "root:secret" {
		t.Errorf("the link's target now holds %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 1 {
		t.Errorf("left %v", m)
	}
}

// A full disk (a 64 KiB tmpfs): the command fails with one line and leaves
// neither a 0-byte or partial file under the final name nor a partial file
// beside it; an older file of that name survives.
func TestOutputFullDisk(t *testing.T) {
	requireRoot(t)
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	old := filepath.Join(dir, "old.nettrace")
	os.WriteFile(old, []byte("an older trace"), 0o644)
	fresh := filepath.Join(dir, "new.nettrace")
	for _, tc := range []struct {
		out  string
		args []string
	}{
		{fresh, []string{"gentrace", "--size", "1MiB", "-o", fresh}},
		{old, []string{"gentrace", "--size", "1MiB", "-o", old}},
		{fresh, append([]string{"record", "-o", fresh, "--"}, workload.Argv(t, "churn", "seconds=1")...)},
	} {
		_, stderr, code := clrspyRun(t, tc.args...)
		want := "clrspy: writing " + tc.out + ": no space left on device\n"
		if code != 1 || !strings.HasSuffix(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q, want it to end with %q", tc.args[0], code, stderr, want)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "old.nettrace" {
			t.Errorf("%v left %v", tc.args[0], ents)
		}
		if b, _ := os.ReadFile(old); string(b) != "an older trace" {
			t.Errorf("%v: the older file now holds %d bytes", tc.args[0], len(b))
		}
	}
}
