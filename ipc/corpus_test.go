//go:build compat

package ipc

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fuzzcorpus"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
)

// TestFuzzCorpus keeps the checked-in seeds of the ipc fuzz targets:
// provider specs of the named profiles and of every profile registered
// (rebuilt and compared each run), and,
// with -update-corpus only (they need live processes), the raw replies of a
// real runtime to every command clrspy sends (the /proc files of
// processes with hostile names are internal/procfs's).
func TestFuzzCorpus(t *testing.T) {
	var specs []fuzzcorpus.Seed
	// The named profiles' specs (cmd/clrspy registers and derives them,
	// TestDerivedProvidersEqualHandWritten checks them; ipc's tests see
	// none registered), kept as seeds as they were when ipc wrote them.
	for _, p := range [][2]string{
		{"all", "Microsoft-Windows-DotNETRuntime:0xC0000094839:5,Microsoft-DotNETCore-SampleProfiler:0xF00000000000:4"},
		{"alloc", "Microsoft-Windows-DotNETRuntime:0x80000080039:5"},
		{"cpu", "Microsoft-DotNETCore-SampleProfiler:0xF00000000000:4,Microsoft-Windows-DotNETRuntime:0x38:4"},
		{"gc", "Microsoft-Windows-DotNETRuntime:0x1:4"},
		{"gc-verbose", "Microsoft-Windows-DotNETRuntime:0x1:5"},
		{"gcdump", "Microsoft-Windows-DotNETRuntime:0x1980001:5"},
		{"movement", "Microsoft-Windows-DotNETRuntime:0x400001:4"},
	} {
		specs = append(specs, fuzzcorpus.Seed{Label: "profile-" + p[0], Args: []any{p[1]}})
	}
	for _, n := range ProfileNames() {
		ps, _ := Profile(n)
		var items []string
		for _, p := range ps {
			items = append(items, fmt.Sprintf("%s:0x%X:%d", p.Name, p.Keywords, p.Level))
		}
		specs = append(specs, fuzzcorpus.Seed{Label: "profile-" + n, Args: []any{strings.Join(items, ",")}})
	}
	for i, s := range []string{
		// dotnet-trace's documented forms: names, '*' keywords, level names,
		// arguments with quoted commas and colons.
		"Microsoft-Windows-DotNETRuntime:*:Verbose",
		"Microsoft-DotNETCore-SampleProfiler,Microsoft-Windows-DotNETRuntime:0x4c14fccbd:5",
		`System.Runtime:0:1:EventCounterIntervalSec=1`,
		`Microsoft-Diagnostics-DiagnosticSource:0x3:5:FilterAndPayloadSpecs="Microsoft.AspNetCore/Request.Start:-Path,Method;x:y"`,
	} {
		specs = append(specs, fuzzcorpus.Seed{Label: fmt.Sprint("dotnet-trace-", i), Args: []any{s}})
	}
	fuzzcorpus.Check(t, "FuzzParseProviders", specs)
	fuzzcorpus.CheckPresent(t, "FuzzReplies", func() []fuzzcorpus.Seed { return liveReplies(t) })
}

// rawCommand sends one request on a fresh connection to sock and returns
// the reply's bytes as they came (header and payload), and the connection.
func rawCommand(t *testing.T, sock string, set, id byte, payload []byte) ([]byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := message(set, id, payload)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	h := make([]byte, headerSize)
	if _, err := io.ReadFull(c, h); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(binary.LittleEndian.Uint16(h[14:]))-headerSize)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Time{})
	return append(h, body...), c
}

func liveReplies(t *testing.T) []fuzzcorpus.Seed {
	p := workload.Start(t, nil, "idle", "seconds=60", "stdin=1")
	defer p.Release()
	ep, err := Find(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []fuzzcorpus.Seed
	add := func(label string, b []byte) {
		seeds = append(seeds, fuzzcorpus.Seed{Label: label, Args: []any{b}})
	}
	for _, c := range []struct {
		label   string
		set, id byte
	}{
		{"ProcessInfo", setProcess, cmdProcessInfo},
		{"ProcessInfo2", setProcess, cmdProcessInfo2},
		{"ProcessInfo3", setProcess, cmdProcessInfo3},
		{"ResumeRuntime", setProcess, cmdResumeRuntime},
		{"unknown-command", setProcess, 0x7F},
	} {
		b, conn := rawCommand(t, ep.Socket, c.set, c.id, nil)
		conn.Close()
		add(c.label, b)
	}
	// A session: CollectTracing2's reply, the stream's first bytes, then
	// StopTracing's reply.
	cfg := SessionConfig{Providers: []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordGC, Level: LevelInformational}}, BufferMB: 16}
	b, conn := rawCommand(t, ep.Socket, setEventPipe, cmdCollectTracing2, collectPayload(2, cfg))
	add("CollectTracing2", b)
	head := make([]byte, 256)
	n, _ := io.ReadFull(conn, head)
	add("CollectTracing2-stream-head", append(b, head[:n]...))
	id := binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(b[headerSize:]))
	// The runtime answers StopTracing once the rundown is written: drain.
	drained := make(chan struct{})
	go func() { io.Copy(io.Discard, conn); close(drained) }()
	sb, sc := rawCommand(t, ep.Socket, setEventPipe, cmdStopTracing, id)
	sc.Close()
	<-drained
	conn.Close()
	add("StopTracing", sb)
	// The advertise a runtime sends on a reverse port, as the bytes came
	// (a bare listener: the port's own would read them).
	dir, err := os.MkdirTemp("", "clrspy-adv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "port.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(workload.Exe(t), "idle", "seconds=30", "stdin=1")
	cmd.Env = append(os.Environ(), "DOTNET_DiagnosticPorts="+path+",connect,nosuspend")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	ln.SetDeadline(time.Now().Add(30 * time.Second))
	rc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	adv := make([]byte, advertiseSize)
	if _, err := io.ReadFull(rc, adv); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	add("advertise", adv)
	return seeds
}
