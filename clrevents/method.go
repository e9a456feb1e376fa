package clrevents

import "github.com/clrspy/clrspy/nettrace"

// MethodFlags bits of the Method* events.
const (
	MethodFlagDynamic            = 0x1
	MethodFlagGeneric            = 0x2
	MethodFlagSharedGenericCode  = 0x4
	MethodFlagJitted             = 0x8
	MethodFlagJitHelper          = 0x10
	MethodFlagProfilerRejected   = 0x20
	MethodFlagReadyToRunRejected = 0x40
)

// OptimizationTier is the code version a method body is (MethodFlags bits
// 7–9).
type OptimizationTier uint8

// Optimization tiers.
const (
	TierUnknown            OptimizationTier = 0
	TierMinOptJitted       OptimizationTier = 1
	TierOptimized          OptimizationTier = 2
	TierQuickJitted        OptimizationTier = 3
	TierOptimizedTier1     OptimizationTier = 4
	TierOptimizedTier1OSR  OptimizationTier = 5
	TierQuickJittedInstr   OptimizationTier = 6
	TierOptimizedTier1Inst OptimizationTier = 7
)

var tierNames = [...]string{"unknown", "minopts", "optimized", "tier0", "tier1", "tier1-osr", "tier0-instrumented", "tier1-instrumented"}

// String names the tier the way tools print it ("tier0", "tier1-osr", …).
func (t OptimizationTier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "unknown"
}

// Method is the payload of MethodLoad(Verbose), MethodUnload(Verbose) and
// the rundown MethodDCStart/DCEnd(Verbose) events: one body of compiled
// code and, for the verbose events, its name.
type Method struct {
	MethodID     uint64 // MethodDesc address: same method across tiers
	ModuleID     uint64
	StartAddress uint64 // first byte of the code
	Size         uint32 // bytes of code
	Token        uint32 // metadata token
	Flags        uint32
	// Namespace is the declaring type's full name (the runtime calls it
	// MethodNamespace), Name the method name, Signature the IL signature
	// text ("void  (int32)"); all empty for the non-verbose events.
	Namespace     string
	Name          string
	Signature     string
	ClrInstanceID uint16
	ReJITID       uint64 // v2+; 0 otherwise
	Verbose       bool   // names were present
}

// Tier is the optimization tier from Flags.
func (m *Method) Tier() OptimizationTier { return OptimizationTier(m.Flags >> 7 & 7) }

// ColdPart reports whether this record describes the cold extent of a
// method split into hot and cold code (Flags bits 28–31 = 1).
func (m *Method) ColdPart() bool { return m.Flags>>28 == 1 }

// End is the first address after the method's code.
func (m *Method) End() uint64 { return m.StartAddress + uint64(m.Size) }

// DecodeMethodVerbose decodes MethodLoadVerbose (RT 143),
// MethodUnloadVerbose (RT 144) and the rundown MethodDCStartVerbose
// (RD 143) / MethodDCEndVerbose (RD 144), versions 0–2: the layout is shared.
// The ids, MethodStartAddress and sizes are fixed 64/32-bit fields whatever
// the pointer size.
func DecodeMethodVerbose(payload []byte, version uint32, ptrSize int) (Method, error) {
	r := nettrace.NewCursor(payload)
	m := decodeMethodHead(&r)
	m.Namespace = r.UTF16Z()
	m.Name = r.UTF16Z()
	m.Signature = r.UTF16Z()
	m.Verbose = true
	if version >= 1 {
		m.ClrInstanceID = r.U16()
	}
	if version >= 2 {
		m.ReJITID = r.U64()
	}
	if !r.OK() {
		return Method{}, short("MethodVerbose", version, len(payload))
	}
	return m, nil
}

// DecodeMethod decodes the non-verbose MethodLoad (RT 141) / MethodUnload
// (RT 142) and rundown MethodDCStart/DCEnd (RD 141/142), versions 0–2.
func DecodeMethod(payload []byte, version uint32, ptrSize int) (Method, error) {
	r := nettrace.NewCursor(payload)
	m := decodeMethodHead(&r)
	if version >= 1 {
		m.ClrInstanceID = r.U16()
	}
	if version >= 2 {
		m.ReJITID = r.U64()
	}
	if !r.OK() {
		return Method{}, short("Method", version, len(payload))
	}
	return m, nil
}

func decodeMethodHead(r *nettrace.Cursor) Method {
	var m Method
	m.MethodID = r.U64()
	m.ModuleID = r.U64()
	m.StartAddress = r.U64()
	m.Size = r.U32()
	m.Token = r.U32()
	m.Flags = r.U32()
	return m
}
