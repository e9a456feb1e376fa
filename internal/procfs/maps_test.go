package procfs

import "testing"

// TestParseMaps reads /proc/PID/maps lines, paths with spaces, deleted
// files and memfds included.
func TestParseMaps(t *testing.T) {
	text := `55d0c0a00000-55d0c0a08000 r--p 00000000 08:01 1311 /usr/bin/my app
7f1c00000000-7f1c00200000 r-xp 00026000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c10000000-7f1c10001000 rwxp 00000000 00:00 0 
7f1c20000000-7f1c20100000 r-xp 00000000 00:01 77 /memfd:doublemapper (deleted)
7f1c30000000-7f1c30100000 r-xp 00000000 08:01 78 /tmp/gone.so (deleted)
7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0 [vdso]
garbage
7f00-7e00 r-xp 00000000 00:00 0 /backwards
`
	ms := ParseMaps([]byte(text))
	if len(ms) != 6 {
		t.Fatalf("%d mappings: %+v", len(ms), ms)
	}
	if ms[0].Path != "/usr/bin/my app" || ms[0].Exec() || !ms[0].FileBacked() {
		t.Errorf("0: %+v", ms[0])
	}
	if m := ms[1]; m.Start != 0x7f1c00000000 || m.End != 0x7f1c00200000 || m.Offset != 0x26000 || m.Inode != 42 || !m.Exec() || !m.FileBacked() {
		t.Errorf("1: %+v", m)
	}
	if m := ms[2]; m.Path != "" || !m.Exec() || m.FileBacked() {
		t.Errorf("2 (anonymous): %+v", m)
	}
	for _, i := range []int{3, 4, 5} {
		if ms[i].FileBacked() {
			t.Errorf("%d: %q counted as an openable file", i, ms[i].Path)
		}
	}
}

// TestFiles: the file mappings of a maps text (paths starting with "/",
// deleted files and memfds too), as native frames are named by them.
func TestFiles(t *testing.T) {
	ms := Files(ParseMaps([]byte(`55d0c0000000-55d0c0010000 r-xp 00000000 08:01 123 /usr/share/dotnet/dotnet
7f2000000000-7f2000001000 rw-p 00000000 00:00 0 [heap]
7f1c30000000-7f1c30100000 r-xp 00000000 08:01 78 /tmp/gone.so (deleted)
`)))
	if len(ms) != 2 || ms[0].Inode != 123 || ms[1].Path != "/tmp/gone.so (deleted)" {
		t.Errorf("%+v", ms)
	}
}
