package clrmeta

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestStaticFieldsWorkload reads the test workload's own module: the
// graph mode's static Holder is declared by Workload.Graph with type
// Workload.GraphHolder (the heap dump names only the field and the
// object's type).
func TestStaticFieldsWorkload(t *testing.T) {
	dll := workload.Exe(t) + ".dll"
	fs, err := StaticFields(dll, map[string]bool{"Holder": true, "handle": true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]StaticField{}
	for _, f := range fs {
		got[f.Class+"."+f.Field] = f
	}
	if f, ok := got["Workload.Graph.Holder"]; !ok || f.FieldType != "Workload.GraphHolder" || !f.Reference {
		t.Errorf("Workload.Graph.Holder: %+v (all: %+v)", f, fs)
	}
	// handle is a GCHandle: a struct, declared with its TypeRef's name.
	if f := got["Workload.Graph.handle"]; f.FieldType != "System.Runtime.InteropServices.GCHandle" || !f.Reference {
		t.Errorf("Workload.Graph.handle: %+v", f)
	}
}

// TestStaticFieldsCoreLib reads the runtime's CoreLib (large tables, 4-byte
// indexes in places, nested types): String.Empty is there, and every
// static's class has a name.
func TestStaticFieldsCoreLib(t *testing.T) {
	dotnet, err := exec.LookPath("dotnet")
	if err != nil {
		t.Fatal("dotnet is not on PATH")
	}
	if r, err := filepath.EvalSymlinks(dotnet); err == nil {
		dotnet = r
	}
	libs, _ := filepath.Glob(filepath.Join(filepath.Dir(dotnet), "shared", "Microsoft.NETCore.App", "*", "System.Private.CoreLib.dll"))
	if len(libs) == 0 {
		t.Fatalf("no System.Private.CoreLib.dll under %s", filepath.Dir(dotnet))
	}
	fs, err := StaticFields(libs[len(libs)-1], nil)
	if err != nil {
		t.Fatal(err)
	}
	empty, nested := false, 0
	for _, f := range fs {
		if f.Class == "" || f.Field == "" {
			t.Fatalf("unnamed static %+v", f)
		}
		if f.Class == "System.String" && f.Field == "Empty" && f.FieldType == "System.String" {
			empty = true
		}
		if strings.Contains(f.Class, "+") {
			nested++
		}
	}
	t.Logf("%d statics, %d in nested classes", len(fs), nested)
	if !empty || nested == 0 || len(fs) < 1000 {
		t.Errorf("String.Empty found %v; %d statics, %d in nested classes", empty, len(fs), nested)
	}
}

// TestStaticFieldsNotManaged: a native file is an error, not a panic.
func TestStaticFieldsNotManaged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.dll")
	os.WriteFile(p, []byte("MZ not a PE"), 0o600)
	if _, err := StaticFields(p, nil); err == nil {
		t.Error("no error for a non-PE file")
	}
}

// FuzzStaticFields: hostile module bytes give an error or fields, never a
// panic (seeded with the workload's module and cuts of it).
func FuzzStaticFields(f *testing.F) {
	b, err := os.ReadFile(workload.Exe(f) + ".dll")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(b[:512])
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := metadata(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		md.statics(nil)
	})
}

// TestStaticFieldsFIFO: a module path that names a FIFO (from a crafted
// .gcdump or trace) is refused at once in one line, not waited on.
func TestStaticFieldsFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "Evil.dll")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := StaticFields(fifo, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || err.Error() != fifo+": a named pipe, not a regular file: not read" {
			t.Errorf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("StaticFields blocked on a FIFO")
	}
}

// TestTypeDefsWorkload names the deadlock mode's lock types by row: the
// nested GateA and GateB follow their declaring Workload.Deadlock, and a
// row past the table names nothing.
func TestTypeDefsWorkload(t *testing.T) {
	d, err := OpenTypeDefs(workload.Exe(t) + ".dll")
	if err != nil {
		t.Fatal(err)
	}
	outer := d.Find("Workload.Deadlock")
	a, b := d.Find("Workload.Deadlock+GateA"), d.Find("Workload.Deadlock+GateB")
	if outer == 0 || a == 0 || b == 0 || a == b {
		t.Fatalf("rows: Deadlock %d, GateA %d, GateB %d", outer, a, b)
	}
	if got := d.Name(a); got != "Workload.Deadlock+GateA" {
		t.Errorf("Name(%d) = %q", a, got)
	}
	if got := d.Name(1); got != "<Module>" {
		t.Errorf("Name(1) = %q, want <Module>", got)
	}
	if got := d.Name(uint32(d.Len()) + 1); got != "" {
		t.Errorf("Name past the table = %q", got)
	}
	if _, err := OpenTypeDefs("/proc/self/status"); err == nil {
		t.Error("a text file opened as a module")
	}
}
