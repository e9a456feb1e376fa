package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/nettrace"
)

// The CollectTracing2 example of the protocol reference, byte for byte:
// 256 MB, nettrace, no rundown, the runtime provider with keyword 0x1 at
// level 4.
func TestCollectTracing2Bytes(t *testing.T) {
	cfg := SessionConfig{BufferMB: 256, NoRundown: true,
		Providers: []Provider{{Name: nettrace.ProviderRuntime, Keywords: 1, Level: 4}}}
	msg, err := message(setEventPipe, cmdCollectTracing2, collectPayload(2, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if len(msg) != 117 {
		t.Fatalf("message is %d bytes, want 117", len(msg))
	}
	wantHead := "444f544e45545f4950435f563100" + "7500" + "0203" + "0000" + // magic, size, set/id, reserved
		"00010000" + "01000000" + "00" + "01000000" + // buffer, format, rundown, count
		"0100000000000000" + "04000000" + "20000000" // keywords, level, name length 32
	if got := hex.EncodeToString(msg[:len(wantHead)/2]); got != wantHead {
		t.Fatalf("header\n got %s\nwant %s", got, wantHead)
	}
	name := msg[len(wantHead)/2 : len(wantHead)/2+64]
	if name[0] != 'M' || name[1] != 0 || name[62] != 0 || name[63] != 0 {
		t.Fatalf("provider name not UTF-16 NUL-terminated: % x", name)
	}
	if tail := msg[len(msg)-4:]; !bytes.Equal(tail, []byte{0, 0, 0, 0}) {
		t.Fatalf("arguments not the empty string: % x", tail)
	}
}

// Each CollectTracing version's fixed part, as the runtime parses it.
func TestCollectPayloadVersions(t *testing.T) {
	cfg := SessionConfig{BufferMB: 64, RundownKeyword: 0x8, NoStackwalk: true,
		Providers: []Provider{{Name: "P", Keywords: 0x4000, Level: 5, Args: "a=b"}}}
	// provider: keywords 8, level 4, name "P" (4+4), args "a=b" (4+8)
	const prov = 8 + 4 + 8 + 12
	for v, want := range map[int]int{1: 8 + 4 + prov, 2: 9 + 4 + prov, 3: 10 + 4 + prov, 4: 17 + 4 + prov, 5: 21 + 4 + prov + 5} {
		b := collectPayload(v, cfg)
		if len(b) != want {
			t.Errorf("CollectTracing%d payload is %d bytes, want %d", v, len(b), want)
		}
	}
	b := collectPayload(5, cfg)
	if st := binary.LittleEndian.Uint32(b); st != 0 {
		t.Errorf("session type %d, want 0 (streaming)", st)
	}
	if kw := binary.LittleEndian.Uint64(b[12:]); kw != 0x8 {
		t.Errorf("CollectTracing5 rundown keyword %#x, want 0x8", kw)
	}
	if b[20] != 0 {
		t.Errorf("stackwalk byte %d, want 0", b[20])
	}
	cfg.NoRundown = true
	if kw := binary.LittleEndian.Uint64(collectPayload(4, cfg)[8:]); kw != 0 {
		t.Errorf("NoRundown gives rundown keyword %#x, want 0", kw)
	}
}

func TestMessageTooLarge(t *testing.T) {
	if _, err := message(2, 2, make([]byte, 70000)); err == nil || !strings.Contains(err.Error(), "65535") {
		t.Fatalf("err = %v, want the 65535-byte limit", err)
	}
}

func reply(id byte, payload []byte) []byte {
	m, _ := message(setServer, id, payload)
	return m
}

func TestReadResponseError(t *testing.T) {
	p := binary.LittleEndian.AppendUint32(nil, HRUnknownCommand)
	_, err := readResponse(bytes.NewReader(reply(respError, p)), "CollectTracing5")
	want := "the runtime refused CollectTracing5: DS_IPC_E_UNKNOWN_COMMAND (0x80131385)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if !IsUnknownCommand(err) {
		t.Fatal("IsUnknownCommand false")
	}
	if HResultName(0x12345678) != "HRESULT 0x12345678" {
		t.Fatal(HResultName(0x12345678))
	}
	_, err = readResponse(bytes.NewReader(nil), "ProcessInfo")
	if err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Fatalf("err = %v", err)
	}
	bad := reply(respOK, nil)
	bad[0] = 'X'
	if _, err := readResponse(bytes.NewReader(bad), "x"); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("err = %v", err)
	}
}

func processInfo2Payload() []byte {
	e := &enc{}
	e.u64(4242)
	e.b = append(e.b, bytes.Repeat([]byte{0xAB}, 16)...)
	e.str("/usr/bin/app arg")
	e.str("Linux")
	e.str("x64")
	e.str("app")
	e.str("10.0.12")
	return e.b
}

func TestParseProcessInfo(t *testing.T) {
	p3 := binary.LittleEndian.AppendUint32(nil, 1)
	p3 = append(p3, processInfo2Payload()...)
	e := &enc{b: p3}
	e.str("linux-x64")
	info, err := parseProcessInfo(e.b, 3)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pid != 4242 || info.CommandLine != "/usr/bin/app arg" || info.OS != "Linux" || info.Arch != "x64" ||
		info.Entrypoint != "app" || info.RuntimeVersion != "10.0.12" || info.RID != "linux-x64" || info.RuntimeCookie[0] != 0xAB {
		t.Fatalf("parsed %+v", info)
	}
	if _, err := parseProcessInfo(processInfo2Payload()[:30], 2); err == nil {
		t.Fatal("no error for a short payload")
	}
}

// fakeRuntime answers each connection with the next scripted reply and
// records the requests.
type fakeRuntime struct {
	replies  [][]byte
	requests [][]byte
}

func (f *fakeRuntime) dial() (net.Conn, error) {
	if len(f.replies) == 0 {
		return nil, errors.New("no more connections")
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	a, b := net.Pipe()
	go func() {
		var h [headerSize]byte
		if _, err := io.ReadFull(b, h[:]); err != nil {
			return
		}
		body := make([]byte, int(binary.LittleEndian.Uint16(h[14:]))-headerSize)
		io.ReadFull(b, body)
		f.requests = append(f.requests, append(h[:], body...))
		b.Write(r)
		b.Write([]byte("stream"))
		b.Close()
	}()
	return a, nil
}

// An old runtime answers UNKNOWN_COMMAND to CollectTracing5 and 4: the
// client falls back to 3 and streams from it.
func TestCollectTracingFallback(t *testing.T) {
	unknown := reply(respError, binary.LittleEndian.AppendUint32(nil, HRUnknownCommand))
	ok := reply(respOK, binary.LittleEndian.AppendUint64(nil, 77))
	f := &fakeRuntime{replies: [][]byte{unknown, unknown, ok}}
	c := NewClient(1, f.dial)
	s, err := c.StartSession(SessionConfig{Command: 5, Providers: []Provider{{Name: nettrace.ProviderRuntime, Keywords: 1, Level: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 77 || s.Command != 3 {
		t.Fatalf("session id %d command %d, want 77 and 3", s.ID, s.Command)
	}
	b, _ := io.ReadAll(s)
	if string(b) != "stream" {
		t.Fatalf("stream %q", b)
	}
	if len(f.requests) != 3 || f.requests[0][17] != cmdCollectTracing5 || f.requests[1][17] != cmdCollectTracing4 || f.requests[2][17] != cmdCollectTracing3 {
		t.Fatalf("requests sent: %d", len(f.requests))
	}
	// A custom rundown keyword cannot be expressed below CollectTracing4.
	f = &fakeRuntime{replies: [][]byte{unknown, unknown}}
	_, err = NewClient(1, f.dial).StartSession(SessionConfig{RundownKeyword: 0x8, Command: 5, Providers: []Provider{{Name: "P"}}})
	if err == nil || !strings.Contains(err.Error(), "DS_IPC_E_UNKNOWN_COMMAND") {
		t.Fatalf("err = %v", err)
	}
	// ProcessInfo falls back from 3 to 2.
	f = &fakeRuntime{replies: [][]byte{unknown, reply(respOK, processInfo2Payload())}}
	info, err := NewClient(1, f.dial).ProcessInfo()
	if err != nil || info.Command != 2 || info.RuntimeVersion != "10.0.12" {
		t.Fatalf("info %+v err %v", info, err)
	}
}

func TestParseAdvertise(t *testing.T) {
	b := append([]byte("ADVR_V1\x00"), bytes.Repeat([]byte{1}, 16)...)
	b = binary.LittleEndian.AppendUint64(b, 31337)
	b = append(b, 0, 0)
	a, err := ParseAdvertise(b)
	if err != nil || a.Pid != 31337 || a.Cookie[15] != 1 {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := ParseAdvertise(b[:20]); err == nil {
		t.Fatal("short advertise accepted")
	}
	b[0] = 'X'
	if _, err := ParseAdvertise(b); err == nil {
		t.Fatal("bad magic accepted")
	}
}

func TestParseProviders(t *testing.T) {
	ps, err := ParseProviders(`Microsoft-Windows-DotNETRuntime:0x4001:4,Microsoft-DotNETCore-SampleProfiler,My-Source:ff:Verbose:Key="a,b";X=1:2,Other::error`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Provider{
		{Name: nettrace.ProviderRuntime, Keywords: 0x4001, Level: 4},
		{Name: nettrace.ProviderSampleProfiler, Keywords: ^uint64(0), Level: 5},
		{Name: "My-Source", Keywords: 0xff, Level: 5, Args: `Key="a,b";X=1:2`},
		{Name: "Other", Keywords: ^uint64(0), Level: 2},
	}
	if len(ps) != len(want) {
		t.Fatalf("got %d providers: %+v", len(ps), ps)
	}
	for i := range want {
		if ps[i] != want[i] {
			t.Errorf("provider %d = %+v, want %+v", i, ps[i], want[i])
		}
	}
	for _, bad := range []string{"", ":1:4", "P:zz", "P:1:9", "P:1:loud"} {
		if _, err := ParseProviders(bad); err == nil {
			t.Errorf("ParseProviders(%q) accepted", bad)
		}
	}
}

func TestProfilesAndMerge(t *testing.T) {
	// A registered profile (cmd/clrspy registers every one, derived from
	// the analyses' events) is listed and derived when asked for.
	calls := 0
	RegisterProfile("test-derived", "a derived set", func() []Provider {
		calls++
		return []Provider{{Name: "P", Keywords: 0x4000, Level: LevelVerbose}}
	})
	t.Cleanup(func() { delete(profiles, "test-derived") })
	if p, err := Profile("test-derived"); err != nil || calls != 1 || len(p) != 1 || p[0].Keywords != 0x4000 ||
		!slices.Contains(ProfileNames(), "test-derived") || ProfileDoc("test-derived") != "a derived set" {
		t.Errorf("registered profile: %+v, %v, %d calls, names %v", p, err, calls, ProfileNames())
	}
	if _, err := Profile("nope"); err == nil || !strings.Contains(err.Error(), "test-derived") {
		t.Fatalf("err = %v", err)
	}
	gc := []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordGC, Level: LevelInformational}}
	mv := []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordGC | KeywordGCSurvivalAndMovement, Level: LevelInformational}}
	cpu := []Provider{
		{Name: nettrace.ProviderSampleProfiler, Keywords: SampleProfilerKeywords, Level: LevelInformational},
		{Name: nettrace.ProviderRuntime, Keywords: KeywordSymbols, Level: LevelInformational},
	}
	m := Merge(gc, mv, cpu)
	if len(m) != 2 || m[0].Name != nettrace.ProviderRuntime || m[0].Keywords != KeywordGC|KeywordGCSurvivalAndMovement|KeywordSymbols || m[0].Level != 4 || m[1].Name != nettrace.ProviderSampleProfiler {
		t.Fatalf("merged %+v", m)
	}
}

// Decoders of what a runtime sends must not panic on any input.
func FuzzReplies(f *testing.F) {
	f.Add(reply(respOK, processInfo2Payload()))
	f.Add(reply(respError, binary.LittleEndian.AppendUint32(nil, HRFail)))
	f.Add(append([]byte("ADVR_V1\x00"), make([]byte, 26)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := readResponse(bytes.NewReader(b), "x"); err == nil {
			for v := 1; v <= 3; v++ {
				parseProcessInfo(p, v)
			}
		}
		ParseAdvertise(b)
		for v := 1; v <= 3; v++ {
			parseProcessInfo(b, v)
		}
	})
}

func FuzzParseProviders(f *testing.F) {
	f.Add("Microsoft-Windows-DotNETRuntime:0x1:4")
	f.Add(`A:1:2:k="x,y",B`)
	f.Fuzz(func(t *testing.T, s string) { ParseProviders(s) })
}

// endlessRuntime answers CollectTracing with a session and then streams
// forever; it answers StopTracing OK and streams on (a hostile runtime).
func endlessRuntime(t *testing.T) func() (net.Conn, error) {
	first := true
	return func() (net.Conn, error) {
		a, b := net.Pipe()
		session := first
		first = false
		go func() {
			var h [headerSize]byte
			if _, err := io.ReadFull(b, h[:]); err != nil {
				return
			}
			io.ReadFull(b, make([]byte, int(binary.LittleEndian.Uint16(h[14:]))-headerSize))
			b.Write(reply(respOK, binary.LittleEndian.AppendUint64(nil, 5)))
			if !session {
				b.Close()
				return
			}
			chunk := make([]byte, 4096)
			for {
				if _, err := b.Write(chunk); err != nil {
					return
				}
			}
		}()
		return a, nil
	}
}

// TestDrainAfterStop: a runtime that keeps streaming after its StopTracing
// reply is cut after the drain's time bound, or after its byte bound,
// whichever comes first: the reader sees the end of the stream.
func TestDrainAfterStop(t *testing.T) {
	defer func(d time.Duration, n int64) { DrainAfterStop, DrainBytes = d, n }(DrainAfterStop, DrainBytes)
	for _, c := range []struct {
		name  string
		after time.Duration
		bytes int64
	}{{"time", 300 * time.Millisecond, 1 << 40}, {"bytes", time.Hour, 1 << 20}} {
		DrainAfterStop, DrainBytes = c.after, c.bytes
		s, err := NewClient(1, endlessRuntime(t)).StartSession(SessionConfig{Providers: []Provider{{Name: "P"}}})
		if err != nil {
			t.Fatal(err)
		}
		go s.Stop()
		start := time.Now()
		done := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, s)
			done <- n
		}()
		select {
		case n := <-done:
			if !s.Cut() {
				t.Errorf("%s: the stream ended (%d bytes) but is not marked cut", c.name, n)
			}
			if c.name == "bytes" && (s.BytesRead()-s.stopRead > DrainBytes+64<<10) {
				t.Errorf("bytes: %d read after the reply, bound %d", s.BytesRead()-s.stopRead, DrainBytes)
			}
			t.Logf("%s: cut after %v, %d bytes", c.name, time.Since(start).Round(time.Millisecond), n)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the stream never ended after StopTracing", c.name)
		}
		s.Close()
	}
}
