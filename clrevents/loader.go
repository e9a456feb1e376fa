package clrevents

import "github.com/clrspy/clrspy/nettrace"

// ModuleFlags bits of the Module* events.
const (
	ModuleFlagDomainNeutral     = 0x1
	ModuleFlagNative            = 0x2
	ModuleFlagDynamic           = 0x4
	ModuleFlagManifest          = 0x8
	ModuleFlagIbcOptimized      = 0x10
	ModuleFlagReadyToRun        = 0x20
	ModuleFlagPartialReadyToRun = 0x40
)

// Module is the payload of ModuleLoad/ModuleUnload (RT 152/153), the
// rundown ModuleDCStart/ModuleDCEnd (RD 153/154) and DomainModuleLoad /
// DomainModuleDCEnd (RT 151, RD 152, which add AppDomainID).
type Module struct {
	ModuleID      uint64
	AssemblyID    uint64
	AppDomainID   uint64 // DomainModule events only
	Flags         uint32
	ILPath        string
	NativePath    string
	ClrInstanceID uint16 // v1+
	// v2+: PDB identity, for symbol servers.
	ManagedPdbSignature nettrace.GUID
	ManagedPdbAge       uint32
	ManagedPdbBuildPath string
	NativePdbSignature  nettrace.GUID
	NativePdbAge        uint32
	NativePdbBuildPath  string
}

// DecodeModule decodes ModuleLoad/ModuleUnload (RT 152/153) and rundown
// ModuleDCStart/ModuleDCEnd (RD 153/154), versions 0–2.
func DecodeModule(payload []byte, version uint32, ptrSize int) (Module, error) {
	return decodeModule(payload, version, false)
}

// DecodeDomainModule decodes DomainModuleLoad (RT 151) and rundown
// DomainModuleDCStart/DCEnd (RD 151/152), versions 0–1: the module layout
// with an AppDomainID after AssemblyID and no PDB fields.
func DecodeDomainModule(payload []byte, version uint32, ptrSize int) (Module, error) {
	return decodeModule(payload, version, true)
}

func decodeModule(payload []byte, version uint32, domain bool) (Module, error) {
	r := nettrace.NewCursor(payload)
	var m Module
	m.ModuleID = r.U64()
	m.AssemblyID = r.U64()
	if domain {
		m.AppDomainID = r.U64()
	}
	m.Flags = r.U32()
	r.U32() // Reserved1
	m.ILPath = r.UTF16Z()
	m.NativePath = r.UTF16Z()
	if version >= 1 {
		m.ClrInstanceID = r.U16()
	}
	if version >= 2 && !domain {
		m.ManagedPdbSignature = r.GUID()
		m.ManagedPdbAge = r.U32()
		m.ManagedPdbBuildPath = r.UTF16Z()
		m.NativePdbSignature = r.GUID()
		m.NativePdbAge = r.U32()
		m.NativePdbBuildPath = r.UTF16Z()
	}
	if !r.OK() {
		name := "Module"
		if domain {
			name = "DomainModule"
		}
		return Module{}, short(name, version, len(payload))
	}
	return m, nil
}
