package ipc

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// GenerateCoreDump3 for /tmp/c with the heap, no flags, byte for byte as
// the runtime's ds-dump-protocol parses it: string (UTF-16 length with the
// NUL, then the characters and the NUL), dump type, flags.
func TestWriteDumpBytes(t *testing.T) {
	ok := reply(respOK, binary.LittleEndian.AppendUint32(nil, 0))
	f := &fakeRuntime{replies: [][]byte{ok}}
	if err := NewClient(1, f.dial).WriteDump("/tmp/c", DumpWithHeap, 0); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 1 {
		t.Fatalf("%d requests", len(f.requests))
	}
	want := "444f544e45545f4950435f563100" + "2e00" + "0103" + "0000" + // magic, size 46, Dump/GenerateCoreDump3, reserved
		"07000000" + "2f0074006d0070002f0063000000" + // "/tmp/c" and its NUL
		"02000000" + "00000000" // WithHeap, no flags
	if got := hex.EncodeToString(f.requests[0]); got != want {
		t.Fatalf("request\n got %s\nwant %s", got, want)
	}
}

// A runtime without GenerateCoreDump3 and 2 gets version 1, whose second
// uint32 is the logging switch; flags it cannot express are refused.
func TestWriteDumpFallback(t *testing.T) {
	unknown := reply(respError, binary.LittleEndian.AppendUint32(nil, HRUnknownCommand))
	ok := reply(respOK, binary.LittleEndian.AppendUint32(nil, 0))
	f := &fakeRuntime{replies: [][]byte{unknown, unknown, ok}}
	if err := NewClient(1, f.dial).WriteDump("/d/core", DumpFull, DumpLogging); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 || f.requests[0][17] != cmdGenerateCoreDump3 || f.requests[1][17] != cmdGenerateCoreDump2 || f.requests[2][17] != cmdGenerateCoreDump {
		t.Fatalf("%d requests", len(f.requests))
	}
	last := f.requests[2]
	if typ, fl := binary.LittleEndian.Uint32(last[len(last)-8:]), binary.LittleEndian.Uint32(last[len(last)-4:]); typ != 4 || fl != 1 {
		t.Fatalf("GenerateCoreDump type %d logging %d, want 4 and 1", typ, fl)
	}
	f = &fakeRuntime{replies: [][]byte{unknown, unknown}}
	err := NewClient(1, f.dial).WriteDump("/d/core", DumpWithHeap, DumpCrashReport)
	if err == nil || !strings.Contains(err.Error(), "no flags but logging") {
		t.Fatalf("err = %v", err)
	}
}

// GenerateCoreDump3's error reply carries createdump's message after the
// HRESULT: the error says both. Bad arguments never reach the runtime.
func TestWriteDumpErrors(t *testing.T) {
	e := &enc{}
	e.u32(HRFail)
	e.str("Problem with the dump path: permission denied\n")
	f := &fakeRuntime{replies: [][]byte{reply(respError, e.b)}}
	err := NewClient(1, f.dial).WriteDump("/root/x", DumpWithHeap, 0)
	want := "the runtime refused GenerateCoreDump3: DS_IPC_E_FAIL (0x80004005): Problem with the dump path: permission denied"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	f = &fakeRuntime{}
	for _, c := range []struct {
		path string
		typ  DumpType
		want string
	}{{"core", DumpWithHeap, "not absolute"}, {"/x", 9, "unknown dump type"}} {
		if err := NewClient(1, f.dial).WriteDump(c.path, c.typ, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteDump(%q, %d) = %v, want %q", c.path, c.typ, err, c.want)
		}
	}
}

// TestWriteDumpLive asks a real runtime for core dumps: a path its
// createdump cannot write is refused with createdump's own message (the
// GenerateCoreDump3 error text) on one line; a writable one gets an ELF
// core file. (The heap snapshot oracle, cmd/clrspy's TestSnapshotClrMD,
// walks a dump with the heap.)
func TestWriteDumpLive(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=30")
	c, err := Dial(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	err = c.WriteDump("/nonexistent-clrspy-dir/core", DumpNormal, 0)
	var se *ServerError
	if !errors.As(err, &se) || se.Command != "GenerateCoreDump3" || se.Message == "" || strings.Contains(err.Error(), "\n") {
		t.Errorf("dump to a missing directory: %v, want GenerateCoreDump3 refused with createdump's message on one line", err)
	}
	t.Logf("refused: %v", err)
	core := filepath.Join(t.TempDir(), "core")
	if err := c.WriteDump(core, DumpNormal, 0); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(core)
	if err != nil {
		t.Fatalf("the runtime answered but wrote no dump: %v", err)
	}
	if len(b) < 64 || string(b[:4]) != "\x7fELF" || binary.LittleEndian.Uint16(b[16:]) != 4 { // e_type ET_CORE
		t.Errorf("%s is not an ELF core file (%d bytes)", core, len(b))
	}
	t.Logf("normal dump: %d MB", len(b)>>20)
}
