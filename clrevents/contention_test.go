package clrevents

import (
	"encoding/hex"
	"errors"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Payloads copied from traces of the compatibility suite.
const (
	// filtrace__contention.nettrace (.NET 10, x64): ContentionStart v2 on
	// thread 20788 whose owner is OS thread 49956 (0xc324).
	startV2Hex = "00090048f46c800002000000edc0000102000024c3000000000000"
	// The ContentionStop v1 that ends that wait.
	stopV1Hex = "0009000000000000a3fb40"
	// ContentionLockCreated of the same stream.
	lockCreatedHex = "48f46c800002000000edc000010200000900"
	// objver4 (.NET Core 3.0): ContentionStart v1.
	startV1Hex = "000300"
	// ThreadCreated of filtrace__contention: OS thread 56816, managed id 5.
	threadCreatedHex = "70c4e0fc000200001040e4fc000200000000000005000000f0dd00000900"
)

func TestContentionStartV2(t *testing.T) {
	e, err := DecodeContentionStart(unhex(t, startV2Hex), 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := ContentionStart{Flags: ContentionManaged, ClrInstanceID: 9, HasLock: true,
		LockID: 0x200806cf448, AssociatedObjectID: 0x20100c0ed00, LockOwnerThreadID: 49956}
	if e != want {
		t.Errorf("got %+v\nwant %+v", e, want)
	}
}

func TestContentionStartV1V0(t *testing.T) {
	e, err := DecodeContentionStart(unhex(t, startV1Hex), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if e != (ContentionStart{ClrInstanceID: 3}) {
		t.Errorf("v1: %+v", e)
	}
	if e, err := DecodeContentionStart(nil, 0, 8); err != nil || e != (ContentionStart{}) {
		t.Errorf("v0: %+v %v", e, err)
	}
	// A v2 payload read as v1 decodes the v1 prefix (versions only append).
	e, err = DecodeContentionStart(unhex(t, startV2Hex), 1, 8)
	if err != nil || e.HasLock || e.ClrInstanceID != 9 {
		t.Errorf("v2 payload as v1: %+v %v", e, err)
	}
}

func TestContentionStartPtr4(t *testing.T) {
	// 32-bit layout: 3 + 4 + 4 + 8 bytes.
	p := []byte{1, 2, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}
	e, err := DecodeContentionStart(p, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	if e.Flags != ContentionNative || e.LockID != 0x10 || e.AssociatedObjectID != 0x20 || e.LockOwnerThreadID != 7 {
		t.Errorf("%+v", e)
	}
	if _, err := DecodeContentionStart(p[:18], 2, 4); !errors.Is(err, ErrShort) {
		t.Errorf("short 32-bit payload: %v", err)
	}
}

func TestContentionStop(t *testing.T) {
	e, err := DecodeContentionStop(unhex(t, stopV1Hex), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	// 0x40fba30000000000 = 113200.0 ns, the stop that ends the wait the
	// start above began (the timestamps are 105,100 ns apart: the runtime
	// measures the wait itself).
	if !e.HasDuration || e.DurationNs != 113200 || e.ClrInstanceID != 9 {
		t.Errorf("%+v", e)
	}
	if e, err := DecodeContentionStop(nil, 0, 8); err != nil || e.HasDuration {
		t.Errorf("empty v0: %+v %v", e, err)
	}
	if e, err := DecodeContentionStop([]byte{0, 3, 0}, 0, 8); err != nil || e.ClrInstanceID != 3 {
		t.Errorf("v0: %+v %v", e, err)
	}
	// NaN and negative durations are not waits.
	for _, p := range []string{"000900" + "000000000000f87f", "000900" + "000000000000f0bf"} {
		if _, err := DecodeContentionStop(unhex(t, p), 1, 8); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
}

func TestContentionLockCreated(t *testing.T) {
	e, err := DecodeContentionLockCreated(unhex(t, lockCreatedHex), 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if e != (ContentionLockCreated{LockID: 0x200806cf448, AssociatedObjectID: 0x20100c0ed00, ClrInstanceID: 9}) {
		t.Errorf("%+v", e)
	}
}

func TestWaitHandle(t *testing.T) {
	p := []byte{1, 8, 7, 6, 5, 4, 3, 2, 1, 9, 0}
	e, err := DecodeWaitHandleWaitStart(p, 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	if e != (WaitHandleWaitStart{WaitSource: WaitSourceMonitorWait, AssociatedObjectID: 0x0102030405060708, ClrInstanceID: 9}) {
		t.Errorf("%+v", e)
	}
	if s, err := DecodeWaitHandleWaitStop([]byte{9, 0}, 0, 8); err != nil || s.ClrInstanceID != 9 {
		t.Errorf("stop: %+v %v", s, err)
	}
	if _, err := DecodeWaitHandleWaitStart(p[:10], 0, 8); !errors.Is(err, ErrShort) {
		t.Errorf("short: %v", err)
	}
}

func TestThreadCreated(t *testing.T) {
	e, err := DecodeThreadCreated(unhex(t, threadCreatedHex), 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := Thread{ThreadObject: 0x200fce0c470, AppDomainID: 0x200fce44010, Flags: 0, ManagedID: 5, OSThreadID: 56816, ClrInstanceID: 9}
	if e != want {
		t.Errorf("got %+v\nwant %+v", e, want)
	}
	tt, err := DecodeThreadTerminated(unhex(t, threadCreatedHex)[:18], 0, 8)
	if err != nil || tt.ThreadObject != want.ThreadObject || tt.AppDomainID != want.AppDomainID {
		t.Errorf("terminated: %+v %v", tt, err)
	}
}

func TestContentionShort(t *testing.T) {
	full := map[string][]byte{
		"start": unhex(t, startV2Hex), "stop": unhex(t, stopV1Hex),
		"created": unhex(t, lockCreatedHex), "thread": unhex(t, threadCreatedHex),
	}
	for n := 0; n < len(full["start"]); n++ {
		if _, err := DecodeContentionStart(full["start"][:n], 2, 8); !errors.Is(err, ErrShort) {
			t.Errorf("start %d bytes: %v", n, err)
		}
	}
	for n := 0; n < len(full["stop"]); n++ {
		if _, err := DecodeContentionStop(full["stop"][:n], 1, 8); !errors.Is(err, ErrShort) {
			t.Errorf("stop %d bytes: %v", n, err)
		}
	}
	for n := 0; n < len(full["created"]); n++ {
		if _, err := DecodeContentionLockCreated(full["created"][:n], 0, 8); !errors.Is(err, ErrShort) {
			t.Errorf("created %d bytes: %v", n, err)
		}
	}
	for n := 0; n < len(full["thread"]); n++ {
		if _, err := DecodeThreadCreated(full["thread"][:n], 0, 8); !errors.Is(err, ErrShort) {
			t.Errorf("thread %d bytes: %v", n, err)
		}
	}
}

// FuzzContention feeds arbitrary payloads to every decoder of this file and
// thread.go: none may panic, and a decoded stop's duration is a number.
func FuzzContention(f *testing.F) {
	for _, s := range []string{startV2Hex, stopV1Hex, lockCreatedHex, startV1Hex, threadCreatedHex} {
		b, _ := hex.DecodeString(s)
		for v := uint32(0); v < 3; v++ {
			f.Add(b, v, 8)
			f.Add(b, v, 4)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, version uint32, ptr int) {
		DecodeContentionStart(p, version, ptr)
		if s, err := DecodeContentionStop(p, version, ptr); err == nil && (s.DurationNs != s.DurationNs || s.DurationNs < 0) {
			t.Fatalf("bad duration %v", s.DurationNs)
		}
		DecodeContentionLockCreated(p, version, ptr)
		DecodeWaitHandleWaitStart(p, version, ptr)
		DecodeWaitHandleWaitStop(p, version, ptr)
		DecodeThreadCreated(p, version, ptr)
		DecodeThreadTerminated(p, version, ptr)
	})
}
