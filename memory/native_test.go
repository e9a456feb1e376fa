package memory

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestByteSamplerUnbiased draws 200,000 allocations from a synthetic size
// distribution (log-uniform from 16 B to 1 MiB, the shape of a service's
// mallocs: many small, a few large), samples them every 64 KiB on
// average with a fixed seed, and compares the weighted estimates with the
// true totals. Each allocation is sampled independently with
// p = 1 - exp(-s/R) (a Poisson process over the bytes), so the byte
// estimate's variance is the sum of s²(1-p)/p and the count estimate's the
// sum of (1-p)/p: each estimate must be within 4 of its standard
// deviations of the truth (a fixed seed: the test gives the same answer
// every run; 4 σ is where an unlucky seed would fail once in 16,000).
func TestByteSamplerUnbiased(t *testing.T) {
	const rate = 64 << 10
	s := NewByteSampler(rate, 1)
	rng := rand.New(rand.NewPCG(7, 8))
	var trueBytes, trueCount, estBytes, estCount, varBytes, varCount float64
	// Also per size decade: the small allocations, sampled rarely, must
	// not be lost in the large ones' weight.
	var smallTrue, smallEst, smallVar float64
	sampled := 0
	var wantSamples, varSamples float64
	for i := 0; i < 200000; i++ {
		size := uint64(math.Exp(math.Log(16) + rng.Float64()*(math.Log(1<<20)-math.Log(16))))
		f := float64(size)
		p := s.Probability(size)
		trueBytes += f
		wantSamples += p
		varSamples += p * (1 - p)
		trueCount++
		varBytes += f * f * (1 - p) / p
		varCount += (1 - p) / p
		small := size < 1024
		if small {
			smallTrue += f
			smallVar += f * f * (1 - p) / p
		}
		if s.Take(size) {
			sampled++
			c, b := s.Weight(size)
			estBytes += b
			estCount += c
			if small {
				smallEst += b
			}
		}
	}
	check := func(what string, est, truth, variance float64) {
		sd := math.Sqrt(variance)
		t.Logf("%s: estimate %.0f, truth %.0f (%+.2f %%), σ %.0f (%.2f %%)", what, est, truth, 100*(est-truth)/truth, sd, 100*sd/truth)
		if math.Abs(est-truth) > 4*sd {
			t.Errorf("%s: estimate %.0f, truth %.0f: %.1f σ apart (σ %.0f)", what, est, truth, math.Abs(est-truth)/sd, sd)
		}
	}
	check("bytes", estBytes, trueBytes, varBytes)
	check("count", estCount, trueCount, varCount)
	check("bytes under 1 KiB", smallEst, smallTrue, smallVar)
	// The number of samples is the sum of the probabilities (an
	// allocation larger than the rate is sampled once at most).
	if math.Abs(float64(sampled)-wantSamples) > 4*math.Sqrt(varSamples) {
		t.Errorf("%d samples, want about %.0f", sampled, wantSamples)
	}
}

// TestByteSamplerProbability: the sampling probability and the weights
// at known sizes, and rate <= 1 sampling everything at face value.
func TestByteSamplerProbability(t *testing.T) {
	s := NewByteSampler(512<<10, 1)
	if p := s.Probability(512 << 10); math.Abs(p-(1-math.Exp(-1))) > 1e-12 {
		t.Errorf("p(512 KiB) = %v, want 1-1/e", p)
	}
	c, b := s.Weight(16 << 10)
	p := 1 - math.Exp(-1.0/32)
	if math.Abs(c-1/p) > 1e-9 || math.Abs(b-16384/p) > 1e-6 {
		t.Errorf("weight(16 KiB) = %v, %v; want %v, %v", c, b, 1/p, 16384/p)
	}
	all := NewByteSampler(1, 1)
	for _, size := range []uint64{1, 100, 1 << 30} {
		if !all.Take(size) {
			t.Errorf("rate 1: %d bytes not sampled", size)
		}
		if c, b := all.Weight(size); c != 1 || b != float64(size) {
			t.Errorf("rate 1: weight(%d) = %v, %v; want 1, %d", size, c, b, size)
		}
	}
}

// TestNativeOutstanding follows calls through Native with every
// allocation sampled (rate 1: weights are the sizes), across threads:
// malloc, calloc, realloc moving and shrinking a block, realloc(NULL) and
// realloc(p, 0), a failed malloc, free of an unknown pointer, a lost
// return, a return with no entry.
func TestNativeOutstanding(t *testing.T) {
	n := NewNative(NewByteSampler(1, 1))
	const (
		sA int32 = iota // stack ids
		sB
		sC
	)
	var now int64
	call := func(tid int, c Call, size, old uint64, stack int32, ret uint64) {
		now += 1000
		n.Enter(tid, c, size, old, true, stack, now)
		n.Return(tid, ret)
	}
	call(1, CallMalloc, 100, 0, sA, 0x1000)
	call(2, CallMalloc, 200, 0, sB, 0x2000)
	call(1, CallCalloc, 300, 0, sC, 0x3000)
	n.Free(0x2000)                               // B's block freed
	call(2, CallRealloc, 50, 0x1000, sB, 0x4000) // A's block moved: now B's, 50 bytes
	call(1, CallRealloc, 70, 0, sA, 0x5000)      // realloc(NULL): a malloc
	call(1, CallRealloc, 0, 0x5000, sA, 0)       // realloc(p, 0): a free
	call(2, CallMalloc, 1<<40, 0, sC, 0)         // failed: nothing
	call(2, CallRealloc, 1<<40, 0x4000, sC, 0)   // failed realloc: 0x4000 stays
	n.Free(0x9999)                               // never seen
	n.Free(0)
	n.Enter(3, CallMalloc, 10, 0, true, sA, now)       // return lost:
	n.Enter(3, CallMalloc, 20, 0, true, sA, now+200e6) // the next entry, 200 ms on, drops it
	n.Return(3, 0x6000)
	n.Return(3, 0x7000) // no entry
	// realloc(NULL, 40) calling malloc itself: one block, realloc's.
	n.Enter(4, CallRealloc, 40, 0, true, sC, now+300e6)
	n.Enter(4, CallMalloc, 40, 0, true, sA, now+300e6+500)
	n.Return(4, 0x8000)
	n.Return(4, 0x8000)
	names := func(id int32) []string { return []string{"malloc", "f" + strconv.Itoa(int(id))} }
	r := n.Result(names, 0)
	type row struct {
		name         string
		bytes, count float64
	}
	got := func(l []NativeStack) []row {
		var out []row
		for _, s := range l {
			out = append(out, row{s.Frames[1], s.Bytes, s.Count})
		}
		return out
	}
	wantOut := []row{{"f2", 340, 2}, {"f1", 50, 1}, {"f0", 20, 1}}
	if g := got(r.Outstanding); !equalRows(g, wantOut) {
		t.Errorf("outstanding %v, want %v", g, wantOut)
	}
	wantAlloc := []row{{"f2", 340, 2}, {"f1", 250, 2}, {"f0", 190, 3}}
	if g := got(r.Allocated); !equalRows(g, wantAlloc) {
		t.Errorf("allocated %v, want %v", g, wantAlloc)
	}
	if r.OutstandingBytes != 410 || r.AllocatedBytes != 780 {
		t.Errorf("totals %v outstanding, %v allocated; want 410, 780", r.OutstandingBytes, r.AllocatedBytes)
	}
	want := NativeStats{Calls: 12, Frees: 3, Sampled: 12, Unpaired: 2, Failed: 2}
	if r.Stats != want {
		t.Errorf("stats %+v, want %+v", r.Stats, want)
	}
	if top := n.Result(names, 1); len(top.Outstanding) != 1 || top.Outstanding[0].Frames[1] != "f2" {
		t.Errorf("top 1: %+v", top.Outstanding)
	}
}

// TestNativeUnsampled: unsampled calls are followed for pairing but not
// counted; a free of a sampled block by any thread removes it; stacks
// that name the same frames merge; weights are the sampler's.
func TestNativeUnsampled(t *testing.T) {
	n := NewNative(NewByteSampler(64<<10, 1))
	n.Enter(1, CallMalloc, 16<<10, 0, false, -1, 1)
	n.Return(1, 0x1000)
	n.Enter(1, CallMalloc, 16<<10, 0, true, 5, 2)
	n.Return(1, 0x2000)
	n.Enter(2, CallMalloc, 16<<10, 0, true, 6, 3)
	n.Return(2, 0x3000)
	n.Enter(2, CallMalloc, 16<<10, 0, true, 7, 4)
	n.Return(2, 0x4000)
	n.Free(0x1000) // unsampled: nothing to remove
	n.Free(0x4000) // stack 7's, freed on thread 1's behalf
	r := n.Result(func(int32) []string { return []string{"malloc", "same"} }, 0)
	p := 1 - math.Exp(-0.25)
	if len(r.Outstanding) != 1 || math.Abs(r.Outstanding[0].Bytes-2*16384/p) > 1e-6 || math.Abs(r.Outstanding[0].Count-2/p) > 1e-9 {
		t.Errorf("outstanding %+v, want one stack of %.0f bytes, %.2f blocks", r.Outstanding, 2*16384/p, 2/p)
	}
	if len(r.Allocated) != 1 || math.Abs(r.Allocated[0].Bytes-3*16384/p) > 1e-6 {
		t.Errorf("allocated %+v, want one stack of %.0f bytes", r.Allocated, 3*16384/p)
	}
	if s := r.Stats; s.Calls != 4 || s.Sampled != 3 || s.Unpaired != 0 {
		t.Errorf("stats %+v", s)
	}
	if r.SampleBytes != 64<<10 {
		t.Errorf("sample bytes %d", r.SampleBytes)
	}
}

func equalRows[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNativeNoAlloc: an unsampled call, its return and a free allocate
// nothing once the thread has been seen (every call of the target passes
// through).
func TestNativeNoAlloc(t *testing.T) {
	n := NewNative(NewByteSampler(512<<10, 1))
	var at int64
	step := func() {
		at += 1000
		n.Enter(1, CallMalloc, 64, 0, false, -1, at)
		n.Return(1, 0x1000)
		n.Free(0x1000)
	}
	step()
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Errorf("%.1f allocations per call, want 0", a)
	}
	if s := n.Stats(); s.Calls != 1002 || s.Frees != 1002 || s.Unpaired != 0 {
		t.Errorf("stats %+v", s)
	}
}
