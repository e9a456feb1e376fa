//go:build compat

package nettrace

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// The benchmarks read traces of the compatibility suite (the figures in
// docs/PERFORMANCE.md are on them), held in memory, so disk speed is out of the
// figure. BenchmarkRead* is the reader's full iteration in timestamp order
// with stacks resolved and no payload decoding; BenchmarkFloor* reads the
// same bytes through a 256 KB buffer and touches every byte once, the
// floor any reader pays. Report both from the same run.

func benchFile(b *testing.B, name string) []byte {
	data, err := os.ReadFile(tracetest.CompatPath(b, name))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// benchRead reads the trace b.N times. With reuse, one Reader reads every
// pass (Reset), which is the steady state of a long stream: queues and
// buffers are grown once. Without it each pass pays a new Reader's set-up.
func benchRead(b *testing.B, name string, reuse bool) {
	benchReadData(b, benchFile(b, name), reuse, Options{})
}

func benchFloor(b *testing.B, name string) {
	data := benchFile(b, name)
	b.SetBytes(int64(len(data)))
	buf := make([]byte, 256<<10)
	var sum uint64
	for b.Loop() {
		rd := bytes.NewReader(data)
		for {
			n, err := rd.Read(buf)
			// Eight bytes at a time: every byte is read once, as cheaply
			// as Go reads memory.
			i := 0
			for ; i+8 <= n; i += 8 {
				sum += binary.LittleEndian.Uint64(buf[i:])
			}
			for ; i < n; i++ {
				sum += uint64(buf[i])
			}
			if err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(sum&1), "sink")
}

const trace30 = "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"

func BenchmarkRead30(b *testing.B) { benchRead(b, trace30, true) }
func BenchmarkRead30Threads2(b *testing.B) {
	benchReadData(b, benchFile(b, trace30), true, Options{Threads: 2})
}
func BenchmarkRead30Fresh(b *testing.B) { benchRead(b, trace30, false) }
func BenchmarkFloor30(b *testing.B)     { benchFloor(b, trace30) }
func BenchmarkReadVoiceMemo(b *testing.B) {
	benchRead(b, "perfview__VoiceMemo.23092.nettrace", true)
}
func BenchmarkFloorVoiceMemo(b *testing.B) {
	benchFloor(b, "perfview__VoiceMemo.23092.nettrace")
}
