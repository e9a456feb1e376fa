package clrevents

import (
	"encoding/binary"
	"testing"
)

// pb builds payloads (little-endian, UTF-16 strings).
type pb []byte

func (b pb) u8(v uint8) pb   { return append(b, v) }
func (b pb) u16(v uint16) pb { return binary.LittleEndian.AppendUint16(b, v) }
func (b pb) u32(v uint32) pb { return binary.LittleEndian.AppendUint32(b, v) }
func (b pb) raw(v []byte) pb { return append(b, v...) }
func (b pb) wstr(s string) pb {
	for _, c := range s {
		b = b.u16(uint16(c))
	}
	return b.u16(0)
}

func TestDecodeRuntimeInformation(t *testing.T) {
	b := pb{}.u16(0).u16(2).u16(10).u16(0).u16(12).u16(0).u16(10).u16(0).u16(1226).u16(42308).
		u32(StartupServerGC | StartupConcurrentGC).u8(0).wstr("app --x").raw(make([]byte, 16)).wstr("/usr/lib/libcoreclr.so")
	v, err := DecodeRuntimeInformation(b, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if v.Sku != 2 || v.BclMajor != 10 || v.BclBuild != 12 || v.VMBuild != 1226 || !v.ServerGC() || !v.ConcurrentGC() ||
		v.CommandLine != "app --x" || v.RuntimeDllPath != "/usr/lib/libcoreclr.so" {
		t.Errorf("%+v", v)
	}
	for n := 0; n < len(b); n += 7 {
		if _, err := DecodeRuntimeInformation(b[:n], 0, 8); err == nil {
			t.Errorf("%d of %d bytes decoded without error", n, len(b))
		}
	}
}

func TestDecodeProcessInfo(t *testing.T) {
	full := pb{}.wstr("dotnet app.dll").wstr("Linux").wstr("arm64")
	v, err := DecodeProcessInfo(full, 1, 8)
	if err != nil || v != (ProcessInfo{"dotnet app.dll", "Linux", "arm64"}) {
		t.Errorf("%+v %v", v, err)
	}
	// Early runtimes send the command line only.
	v, err = DecodeProcessInfo(pb{}.wstr("dotnet app.dll"), 0, 8)
	if err != nil || v != (ProcessInfo{CommandLine: "dotnet app.dll"}) {
		t.Errorf("%+v %v", v, err)
	}
	if _, err := DecodeProcessInfo(full[:5], 1, 8); err == nil {
		t.Error("a cut string decoded")
	}
}
