package nettrace

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The benchmarks read a trace held in memory, so disk speed is out of the
// figure. BenchmarkRead* is the reader's full iteration in timestamp order
// with stacks resolved and no payload decoding; BenchmarkFloor* reads the
// same bytes through a 256 KB buffer and touches every byte once, the
// floor any reader pays. Report both from the same run.

func benchFile(b *testing.B, name string) []byte {
	data, err := os.ReadFile(filepath.Join(tracesDir, name))
	if err != nil {
		b.Skipf("trace not available: %v", err)
	}
	return data
}

func benchRead(b *testing.B, name string) {
	data := benchFile(b, name)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var events, stackIPs int
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		events = 0
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			events++
			stackIPs += len(ev.Stack)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
	b.ReportMetric(float64(events), "events")
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

func BenchmarkRead30(b *testing.B) {
	benchRead(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
}
func BenchmarkFloor30(b *testing.B) {
	benchFloor(b, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
}
func BenchmarkReadVoiceMemo(b *testing.B) { benchRead(b, "perfview__VoiceMemo.23092.nettrace") }
func BenchmarkFloorVoiceMemo(b *testing.B) {
	benchFloor(b, "perfview__VoiceMemo.23092.nettrace")
}
