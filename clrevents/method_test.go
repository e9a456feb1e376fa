package clrevents

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// Payloads copied from traces of the compatibility suite.
const (
	// dotnetdiag single-thread (.NET 5, macOS x64): MethodDCEndVerbose v1.
	dcEndV1Hex = "6028af1c010000002040021c010000008051a61c01000000530000009f44000608020000530079007300740065006d002e00520075006e00740069006d0065002e0043006f006d00700069006c0065007200530065007200760069006300650073002e004300610073007400480065006c00700065007200730000005300740065006c0065006d00520065006600000076006f006900640020002000280063006c006100730073002000530079007300740065006d002e00410072007200610079002c0069006e007400330032002c0063006c006100730073002000530079007300740065006d002e004f0062006a00650063007400290000000000"
	// dotnetdiag webapp: MethodDCEndVerbose v2 (List`1.set_Capacity).
	dcEndV2Hex = "2825561a010000002040a01901000000008fc31e01000000f7000000376000060e020000530079007300740065006d002e0043006f006c006c0065006300740069006f006e0073002e00470065006e0065007200690063002e004c00690073007400600031005b00530079007300740065006d002e005f005f00430061006e006f006e005d0000007300650074005f0043006100700061006300690074007900000069006e007300740061006e0063006500200076006f006900640020002000280069006e007400330032002900000000000100000000000000"
	// filtrace__jit (.NET 10, Windows x64): MethodLoadVerbose v1.
	loadV1Hex = "40c2e979fe7f00000040ba79fe7f0000306ecb79fe7f0000620000009c3a00068a010000530079007300740065006d002e0042007500660066006500720073002e00410073006300690069004300680061007200530065006100720063006800560061006c00750065007300600032005b00530079007300740065006d002e0042007500660066006500720073002e0049006e006400650078004f00660041006e00790041007300630069006900530065006100720063006800650072002b00440065006600610075006c0074002c00530079007300740065006d002e0042007500660066006500720073002e00530065006100720063006800560061006c007500650073002b00460061006c007300650043006f006e00730074005d00000049006e006400650078004f00660041006e007900000069006e007300740061006e0063006500200069006e00740033003200200020002800760061006c0075006500200063006c006100730073002000530079007300740065006d002e0052006500610064004f006e006c0079005300700061006e00600031003c00770063006800610072003e00290000000900"
	// dotnetdiag single-thread: DomainModuleDCEnd v1 of mvc-hello-world.dll.
	domainModuleV1Hex = "3028b11c01000000800d53d09e7f000000b280d09e7f000008000000000000002f00550073006500720073002f006b006f006c00650073006e0069006b006f007600610065002f0044006f00630075006d0065006e00740073002f00700072006100630074006900630061006c002d006100730070006e006500740063006f00720065002f00700072006f006a0065006300740073002f00720061007a006f0072002d00700061006700650073002f00680065006c006c006f002d0077006f0072006c0064002f00620069006e002f00440065006200750067002f006e006500740035002e0030002f006f00730078002d007800360034002f006d00760063002d00680065006c006c006f002d0077006f0072006c0064002e0064006c006c00000000000000"
	// ThreadSample v0, Managed.
	sampleHex = "02000000"
)

func TestMethodDCEndV1(t *testing.T) {
	m, err := DecodeMethodVerbose(unhex(t, dcEndV1Hex), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.MethodID != 0x11caf2860 || m.ModuleID != 0x11c024020 || m.StartAddress != 0x11ca65180 || m.Size != 0x53 ||
		m.Token != 0x0600449f || m.Flags != 0x208 {
		t.Errorf("fixed fields %+v", m)
	}
	if m.Namespace != "System.Runtime.CompilerServices.CastHelpers" || m.Name != "StelemRef" ||
		m.Signature != "void  (class System.Array,int32,class System.Object)" || !m.Verbose {
		t.Errorf("names %q %q %q", m.Namespace, m.Name, m.Signature)
	}
	// 0x208: Jitted, tier bits 7–9 = 4 (tier1).
	if m.Tier() != TierOptimizedTier1 || m.Tier().String() != "tier1" || m.ColdPart() {
		t.Errorf("tier %v cold %v", m.Tier(), m.ColdPart())
	}
	if m.End() != 0x11ca651d3 {
		t.Errorf("end %#x", m.End())
	}
}

func TestMethodDCEndV2(t *testing.T) {
	m, err := DecodeMethodVerbose(unhex(t, dcEndV2Hex), 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Namespace != "System.Collections.Generic.List`1[System.__Canon]" || m.Name != "set_Capacity" ||
		m.Signature != "instance void  (int32)" || m.ClrInstanceID != 0 || m.ReJITID != 1 {
		t.Errorf("%+v", m)
	}
	if m.StartAddress != 0x11ec38f00 || m.Size != 0xf7 {
		t.Errorf("range %#x+%#x", m.StartAddress, m.Size)
	}
	// Read as v1 the same payload gives the v1 prefix (versions append).
	m1, err := DecodeMethodVerbose(unhex(t, dcEndV2Hex), 1, 8)
	if err != nil || m1.Name != "set_Capacity" || m1.ReJITID != 0 {
		t.Errorf("as v1: %+v %v", m1, err)
	}
}

func TestMethodLoadVerboseV1(t *testing.T) {
	m, err := DecodeMethodVerbose(unhex(t, loadV1Hex), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "IndexOfAny" || m.ClrInstanceID != 9 || m.Size != 0x62 || m.Flags != 0x18a {
		t.Errorf("%+v", m)
	}
	// 0x18a: Generic|Jitted, tier 3 (tier0 = quick jitted).
	if m.Tier() != TierQuickJitted || m.Flags&MethodFlagGeneric == 0 {
		t.Errorf("tier %v flags %#x", m.Tier(), m.Flags)
	}
	if !strings.HasPrefix(m.Namespace, "System.Buffers.AsciiCharSearchValues`2[") {
		t.Errorf("namespace %q", m.Namespace)
	}
}

func TestMethodShort(t *testing.T) {
	full := unhex(t, dcEndV2Hex)
	// Every cut inside the v2 layout is an error, never a panic.
	for n := 0; n < len(full); n++ {
		if _, err := DecodeMethodVerbose(full[:n], 2, 8); !errors.Is(err, ErrShort) {
			t.Fatalf("%d bytes: err %v", n, err)
		}
	}
	if _, err := DecodeMethod(full[:39], 2, 8); !errors.Is(err, ErrShort) {
		t.Errorf("non-verbose short: %v", err)
	}
	m, err := DecodeMethod(full[:36], 0, 8)
	if err != nil || m.StartAddress != 0x11ec38f00 || m.Verbose {
		t.Errorf("non-verbose v0: %+v %v", m, err)
	}
}

func TestDomainModuleV1(t *testing.T) {
	m, err := DecodeDomainModule(unhex(t, domainModuleV1Hex), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.ModuleID != 0x11cb12830 || m.AssemblyID != 0x7f9ed0530d80 || m.AppDomainID != 0x7f9ed080b200 || m.Flags != 8 {
		t.Errorf("%+v", m)
	}
	if !strings.HasSuffix(m.ILPath, "/osx-x64/mvc-hello-world.dll") || m.NativePath != "" {
		t.Errorf("paths %q %q", m.ILPath, m.NativePath)
	}
}

func TestThreadSample(t *testing.T) {
	s, err := DecodeThreadSample(unhex(t, sampleHex), 0, 8)
	if err != nil || s.Type != SampleManaged || s.Type.String() != "managed" {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := DecodeThreadSample([]byte{1, 0}, 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
	if SampleType(7).String() != "type(7)" || SampleExternal.String() != "external" {
		t.Error("names")
	}
}

func FuzzMethodVerbose(f *testing.F) {
	for _, h := range []string{dcEndV1Hex, dcEndV2Hex, loadV1Hex} {
		b, _ := hex.DecodeString(h)
		for v := uint32(0); v <= 2; v++ {
			f.Add(b, v)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, v uint32) {
		m, err := DecodeMethodVerbose(b, v, 8)
		if err == nil && !m.Verbose {
			t.Fatal("decoded verbose without names flag")
		}
		DecodeMethod(b, v, 8)
		_ = m.Tier().String()
	})
}

func FuzzModule(f *testing.F) {
	b, _ := hex.DecodeString(domainModuleV1Hex)
	for v := uint32(0); v <= 2; v++ {
		f.Add(b, v)
	}
	f.Fuzz(func(t *testing.T, b []byte, v uint32) {
		DecodeModule(b, v, 8)
		DecodeDomainModule(b, v, 8)
	})
}

func FuzzThreadSample(f *testing.F) {
	b, _ := hex.DecodeString(sampleHex)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeThreadSample(b, 0, 8)
		if err == nil && len(b) < 4 {
			t.Fatalf("decoded %d bytes as %+v", len(b), s)
		}
	})
}
