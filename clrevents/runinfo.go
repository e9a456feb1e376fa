package clrevents

import "github.com/clrspy/clrspy/nettrace"

// What a trace says about the process and its runtime: the runtime's
// RuntimeInformation event (Runtime/Start, fired by the runtime provider
// when a session starts and again by the rundown) and the EventPipe
// provider's ProcessInfo event at the start of every session.

// Event ids of the runtime-information events.
const (
	// IDRuntimeInformation is RuntimeInformationStart on the runtime
	// provider and RuntimeInformationDCStart on the rundown provider (one
	// layout).
	IDRuntimeInformation = 187
	// IDProcessInfo is ProcessInfo on Microsoft-DotNETCore-EventPipe.
	IDProcessInfo = 1
)

// Startup flags of RuntimeInformation (the hosting API's STARTUP_FLAGS).
const (
	StartupConcurrentGC = 0x1
	StartupServerGC     = 0x1000
)

// RuntimeInformation is RuntimeInformationStart/DCStart v0.
type RuntimeInformation struct {
	ClrInstanceID uint16
	Sku           uint16 // 2: CoreCLR
	// BCL (framework) and VM versions; on .NET 5+ the BCL version is the
	// product version (10.0.12).
	BclMajor, BclMinor, BclBuild, BclQfe uint16
	VMMajor, VMMinor, VMBuild, VMQfe     uint16
	StartupFlags                         uint32
	StartupMode                          uint8
	CommandLine                          string // often empty on CoreCLR
	RuntimeDllPath                       string
}

// ServerGC reports whether the runtime started with the server GC.
func (r *RuntimeInformation) ServerGC() bool { return r.StartupFlags&StartupServerGC != 0 }

// ConcurrentGC reports whether background (concurrent) GC was enabled.
func (r *RuntimeInformation) ConcurrentGC() bool {
	return r.StartupFlags&StartupConcurrentGC != 0
}

// DecodeRuntimeInformation decodes RuntimeInformationStart v0 (and the
// rundown's DCStart, same layout).
func DecodeRuntimeInformation(p []byte, version uint32, _ int) (RuntimeInformation, error) {
	r := nettrace.NewCursor(p)
	v := RuntimeInformation{
		ClrInstanceID: r.U16(), Sku: r.U16(),
		BclMajor: r.U16(), BclMinor: r.U16(), BclBuild: r.U16(), BclQfe: r.U16(),
		VMMajor: r.U16(), VMMinor: r.U16(), VMBuild: r.U16(), VMQfe: r.U16(),
		StartupFlags: r.U32(), StartupMode: r.U8(),
	}
	v.CommandLine = r.UTF16Z()
	r.GUID() // ComObjectGuid
	v.RuntimeDllPath = r.UTF16Z()
	if !r.OK() {
		return RuntimeInformation{}, short("RuntimeInformation", version, len(p))
	}
	return v, nil
}

// ProcessInfo is the EventPipe provider's ProcessInfo event: v0 carries
// the command line; later runtimes add the OS and architecture.
type ProcessInfo struct {
	CommandLine string
	OS          string // "Linux", "Windows", ... ("" when absent)
	Arch        string // "x64", "arm64", ...
}

// DecodeProcessInfo decodes ProcessInfo; OS and architecture are read
// when present.
func DecodeProcessInfo(p []byte, version uint32, _ int) (ProcessInfo, error) {
	r := nettrace.NewCursor(p)
	v := ProcessInfo{CommandLine: r.UTF16Z()}
	if !r.OK() {
		return ProcessInfo{}, short("ProcessInfo", version, len(p))
	}
	if r.Rest() > 0 {
		v.OS = r.UTF16Z()
	}
	if r.OK() && r.Rest() > 0 {
		v.Arch = r.UTF16Z()
	}
	if !r.OK() {
		return ProcessInfo{}, short("ProcessInfo", version, len(p))
	}
	return v, nil
}
