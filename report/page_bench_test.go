package report

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/browsertest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// pageTrace writes a synthetic trace of gcs blocking GCs (every
// generation, with heap statistics) and distinct stack samples (each
// sampled once, on 8 threads, 8 to 40 frames deep over 2,000 named
// methods), spread over a minute: the shape of the page-load figure.
func pageTrace(w io.Writer, gcs, distinct int) error {
	rng := rand.New(rand.NewPCG(7, 11))
	h := nettrace.Header{SyncTimeUTC: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SyncTimeQPC: 1e9, QPCFrequency: 1e9,
		PointerSize: 8, ProcessID: 4242, NumberOfProcessors: 8, ExpectedCPUSamplingRate: 1e6}
	wr, err := nettrace.NewWriter(w, h, nettrace.WriterOptions{})
	if err != nil {
		return err
	}
	meta := func(prov string, id, ver uint32, kw uint64, lvl, op uint8) *nettrace.Metadata {
		return &nettrace.Metadata{Provider: prov, EventID: id, Version: ver, Keywords: kw, Level: lvl, Opcode: op, HasFields: true}
	}
	var (
		mSample       = meta(nettrace.ProviderSampleProfiler, 0, 0, 0, 4, 0)
		mStart        = meta(nettrace.ProviderRuntime, 1, 2, 1, 4, 1)
		mEnd          = meta(nettrace.ProviderRuntime, 2, 1, 1, 4, 2)
		mRestartEnd   = meta(nettrace.ProviderRuntime, 3, 1, 1, 4, 132)
		mHeapStats    = meta(nettrace.ProviderRuntime, 4, 2, 1, 4, 133)
		mRestartBegin = meta(nettrace.ProviderRuntime, 7, 1, 1, 4, 136)
		mSuspendEnd   = meta(nettrace.ProviderRuntime, 8, 1, 1, 4, 137)
		mSuspendBegin = meta(nettrace.ProviderRuntime, 9, 1, 1, 4, 10)
		mMethod       = meta(nettrace.ProviderRuntime, 143, 2, 0x18, 4, 37)
	)
	var buf []byte
	u16 := func(v uint16) { buf = binary.LittleEndian.AppendUint16(buf, v) }
	u32 := func(v uint32) { buf = binary.LittleEndian.AppendUint32(buf, v) }
	u64 := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	str := func(s string) {
		for _, c := range s {
			u16(uint16(c))
		}
		u16(0)
	}
	now := int64(1e9 + 1000)
	var ev nettrace.Event
	emit := func(m *nettrace.Metadata, thread uint64, stack []uint64) {
		now += 10
		ev = nettrace.Event{Meta: m, Timestamp: now, ThreadID: thread, CaptureThreadID: thread, Stack: stack, Payload: buf}
		wr.WriteEvent(&ev)
		buf = buf[:0]
	}
	const methods = 2000
	addr := func(m int) uint64 { return 0x7f0000100000 + uint64(m)*0x400 }
	for m := 0; m < methods; m++ {
		u64(0x7f0000900000 + uint64(m)*0x40)
		u64(0x7f0000a00000)
		u64(addr(m))
		u32(0x3f0)
		u32(0x06000000 + uint32(m))
		u32(0)
		str(fmt.Sprintf("Bench.Area%d.Type%d", m%23, m%97))
		str(fmt.Sprintf("Method%d", m))
		str("void  (int32)")
		u16(0)
		u64(0)
		emit(mMethod, 1, nil)
	}
	// Stack i is distinct by its two leaf frames (2,000 x 2,000 pairs)
	// called from one of 300 caller chains (request handlers, say) of 6 to
	// 38 frames over 500 "framework" methods: distinct leaves under shared
	// paths, the shape of a real server's profile.
	chains := make([][]uint64, 300)
	for c := range chains {
		chain := make([]uint64, 6+rng.IntN(33))
		for j := range chain {
			chain[j] = addr(1500+rng.IntN(500)) + 48
		}
		chains[c] = chain
	}
	stack := func(i int) []uint64 {
		st := []uint64{addr(i%methods) + 16, addr((i/methods)%methods) + 32}
		return append(st, chains[(i*7919)%len(chains)]...)
	}
	span := int64(60e9)
	gcEvery, sampleEvery := span/int64(gcs), span/int64(distinct)
	nextGC, nextSample := now+gcEvery, now
	gc, s := 0, 0
	for gc < gcs || s < distinct {
		if s < distinct && (nextSample <= nextGC || gc >= gcs) {
			now = max(now, nextSample)
			u32(2) // managed
			emit(mSample, uint64(100+s%8), stack(s))
			s++
			nextSample += sampleEvery
			continue
		}
		now = max(now, nextGC)
		gc++
		depth := uint32(0)
		if r := rng.IntN(20); r >= 18 {
			depth = 2
		} else if r >= 14 {
			depth = 1
		}
		u32(1)
		u32(uint32(gc))
		u16(0)
		emit(mSuspendBegin, 50, nil)
		u16(0)
		emit(mSuspendEnd, 50, nil)
		u32(uint32(gc))
		u32(depth)
		u32(0)
		u32(0)
		u16(0)
		u64(0)
		emit(mStart, 50, nil)
		now += int64(200_000 + rng.IntN(3_000_000*int(depth+1)))
		for i := 0; i < 10; i++ {
			u64(uint64(rng.IntN(100 << 20)))
		}
		u32(uint32(rng.IntN(50)))
		u32(0)
		u32(uint32(100 + rng.IntN(900)))
		u16(0)
		u64(uint64(rng.IntN(1 << 20)))
		u64(0)
		emit(mHeapStats, 51, nil)
		u32(uint32(gc))
		u32(depth)
		u16(0)
		emit(mEnd, 50, nil)
		u16(0)
		emit(mRestartBegin, 50, nil)
		u16(0)
		emit(mRestartEnd, 50, nil)
		nextGC += gcEvery
	}
	return wr.Close()
}

// BenchmarkPageLoad: the report page of a trace with 10,000 GCs and
// 100,000 distinct stacks, opened in headless Chromium: time from the
// navigation to the first contentful paint, to the end of the first
// render pass (summary and timeline drawn) and until every panel is drawn
// (go test -run '^$' -bench PageLoad ./report/; docs/PERFORMANCE.md).
func BenchmarkPageLoad(b *testing.B) {
	dir := b.TempDir()
	trace := filepath.Join(dir, "page.nettrace")
	f, err := os.Create(trace)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := pageTrace(bw, 10_000, 100_000); err != nil {
		b.Fatal(err)
	}
	bw.Flush()
	f.Close()
	st, err := source.Open(source.Spec{File: trace})
	if err != nil {
		b.Fatal(err)
	}
	an := NewPageAnalyses(st.Header(), PageAnalysesOptions{})
	end, err := st.Run(an.Analyzers()...)
	if err != nil {
		b.Fatal(err)
	}
	var stats analysis.Stats
	for _, a := range an.Analyzers() {
		stats.Add(a.Stats())
	}
	pp := an.Parts()
	pp.Input = NewInput(st.Name, st.Live(), end, stats)
	pp.FirstNanos, pp.LastNanos = st.Header().Nanos(end.FirstTimestamp), st.Header().Nanos(end.LastTimestamp)
	st.Close()
	page := NewPage(pp)
	if page.GCs.Len() != 10_000 || page.CPU == nil || len(page.CPU.StackNode) != 100_000 {
		b.Fatalf("%d GCs, %d stacks", page.GCs.Len(), len(page.CPU.StackNode))
	}
	html := filepath.Join(dir, "page.html")
	hf, err := os.Create(html)
	if err != nil {
		b.Fatal(err)
	}
	if err := WritePage(hf, page); err != nil {
		b.Fatal(err)
	}
	hf.Close()
	fi, _ := os.Stat(html)
	br := browsertest.New(b, browsertest.Options{Width: 1400, Height: 1000})
	b.ResetTimer()
	var fcp, first, drawn float64
	for i := 0; i < b.N; i++ {
		if err := br.Open("file://" + html); err != nil {
			b.Fatal(err)
		}
		if err := br.WaitFor(`document.documentElement.dataset.drawn === '1'`, 120*time.Second); err != nil {
			b.Fatal(err)
		}
		t := browsertest.MustEval[[3]float64](b, br, `[performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1,
			window.clrspy.stats.firstPassAt, window.clrspy.stats.drawnAt]`)
		fcp += t[0]
		first += t[1]
		drawn += t[2]
		if i == 0 {
			b.Log(browsertest.MustEval[map[string]float64](b, br, `({renders: window.clrspy.stats.renders, scriptAt: window.clrspy.stats.scriptAt, parsedAt: window.clrspy.stats.parsedAt, loadedAt: window.clrspy.stats.loadedAt, ...window.clrspy.stats.parts})`))
		}
	}
	b.ReportMetric(fcp/float64(b.N), "ms-first-paint")
	b.ReportMetric(first/float64(b.N), "ms-timeline-drawn")
	b.ReportMetric(drawn/float64(b.N), "ms-all-drawn")
	b.ReportMetric(float64(fi.Size())/1e6, "MB-page")
	b.ReportMetric(float64(len(page.CPU.NodeDepth)), "tree-nodes")
	if errs := br.Errors(); len(errs) > 0 {
		b.Errorf("console errors: %q", errs)
	}
}
