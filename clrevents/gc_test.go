package clrevents

import (
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

func TestGCDecodersShort(t *testing.T) {
	for name, fn := range map[string]func([]byte) error{
		"GCStart":    func(b []byte) error { _, err := DecodeGCStart(b, 2, 8); return err },
		"GCEnd":      func(b []byte) error { _, err := DecodeGCEnd(b, 1, 8); return err },
		"Suspend":    func(b []byte) error { _, err := DecodeGCSuspendEEBegin(b, 1, 8); return err },
		"HeapStats":  func(b []byte) error { _, err := DecodeGCHeapStats(b, 2, 8); return err },
		"Global":     func(b []byte) error { _, err := DecodeGCGlobalHeapHistory(b, 4, 8); return err },
		"PerHeap":    func(b []byte) error { _, err := DecodeGCPerHeapHistory(b, 3, 8); return err },
		"Mark":       func(b []byte) error { _, err := DecodeGCMarkWithType(b, 0, 8); return err },
		"Triggered":  func(b []byte) error { _, err := DecodeGCTriggered(b, 0, 8); return err },
		"DynamicEvt": func(b []byte) error { _, err := DecodeGCDynamicEvent(b, 0, 8); return err },
	} {
		if err := fn([]byte{1, 0, 0}); err == nil {
			t.Errorf("%s: 3-byte payload accepted", name)
		}
	}
	if _, err := DecodeGCStart([]byte{1, 0, 0, 0, 2, 0, 0, 0}, 0, 8); err != nil {
		t.Errorf("GCStart v0: %v", err)
	}
	// A hostile generation count must not allocate or read past the end.
	b := make([]byte, 86)
	b[82] = 0xFF
	if _, err := DecodeGCPerHeapHistory(b, 3, 8); err == nil {
		t.Error("PerHeapHistory with 255 generations in 86 bytes accepted")
	}
}

func FuzzGCDecoders(f *testing.F) {
	for _, name := range []string{"gc-wks.nettrace", "gc-server.nettrace"} {
		p, _ := firstPayloads(f, tracetest.Path(f, name))
		for k, b := range p {
			switch k[0] {
			case IDGCStart, IDGCEnd, IDGCSuspendEEBegin, IDGCHeapStats, IDGCGlobalHeapHistory, IDGCPerHeapHistory,
				IDGCMarkWithType, IDGCTriggered, IDGCDynamicEvent:
				f.Add(b, uint8(k[1]), true)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, version uint8, ptr8 bool) {
		ptr := 4
		if ptr8 {
			ptr = 8
		}
		v := uint32(version % 6)
		DecodeGCStart(b, v, ptr)
		DecodeGCEnd(b, v, ptr)
		DecodeGCSuspendEEBegin(b, v, ptr)
		DecodeGCHeapStats(b, v, ptr)
		DecodeGCGlobalHeapHistory(b, v, ptr)
		DecodeGCPerHeapHistory(b, v, ptr)
		DecodeGCMarkWithType(b, v, ptr)
		DecodeGCTriggered(b, v, ptr)
		if e, err := DecodeGCDynamicEvent(b, v, ptr); err == nil && len(e.Data) > len(b) {
			t.Fatal("dynamic event data longer than the payload")
		}
	})
}
