package stacks

import (
	"testing"
)

// TestMaxThreads: threads past the bound share one "[other threads]"
// thread; no sample is lost, and the profile says how many were folded.
// (A process that makes 600,000 threads made the profile hold 600,000
// thread states: 1.18 GB.)
func TestMaxThreads(t *testing.T) {
	b := New(testHeader, Options{MaxThreads: 4})
	for tick := int64(0); tick < 3; tick++ {
		for tid := uint64(1); tid <= 10; tid++ {
			b.Event(sampleEv(tick*1_000_000+int64(tid), 100+tid, managedType, 0x1000))
		}
	}
	p := b.Result()
	if len(p.Threads) != 5 || p.FoldedThreads != 6*3 || p.Total != 30 {
		t.Fatalf("%d threads, %d folded samples' threads, %d samples", len(p.Threads), p.FoldedThreads, p.Total)
	}
	other := p.Threads[4]
	if other.ID != FoldedThreadID || other.Name != FoldedThreadName || other.Samples != 18 {
		t.Errorf("folded thread %+v, want 18 samples", other)
	}
	var n int64
	for _, s := range p.Samples {
		n += s.Count
	}
	if n != 30 {
		t.Errorf("%d samples in the profile, want 30", n)
	}
}

// TestStackIDCache: samples naming the same stack id reuse its raw stack;
// after the reader's cache reset the id names other IPs, and the builder
// sees the difference (the content is compared, not trusted).
func TestStackIDCache(t *testing.T) {
	b := New(testHeader, Options{})
	ev := func(ts int64, id uint32, ips ...uint64) {
		e := sampleEv(ts, 1, managedType, ips...)
		e.StackID = id
		b.Event(e)
	}
	ev(1_000_000, 7, 0x10, 0x20)
	ev(2_000_000, 7, 0x10, 0x20)
	ev(3_000_000, 7, 0x30, 0x40) // id 7 after a reset: another stack
	ev(4_000_000, 8, 0x10, 0x20) // the first stack under another id
	if len(b.raws) != 2 {
		t.Fatalf("%d raw stacks, want 2", len(b.raws))
	}
	p := b.Result()
	if len(p.Samples) != 1 || p.Samples[0].Count != 4 {
		// Both raw stacks resolve to [unknown];[unknown] without symbols:
		// one merged sample of 4.
		t.Errorf("samples %+v", p.Samples)
	}
}
