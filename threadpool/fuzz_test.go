package threadpool

import (
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
)

// FuzzAnalyzer feeds streams made from the input (package tracegen: ids
// of every event the analysis reads, threads, versions, payloads of any
// length, time steps up to 2.5 s so that episodes open and close): it
// must not panic, and its result must hold together.
func FuzzAnalyzer(f *testing.F) {
	// An injection (AdjustmentAdjustment v0: average throughput, new count
	// 8, reason starvation), then a (short) worker start 2 s later.
	f.Add([]byte{4, 1, 10, 18, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 6, 0, 0, 0, 0, 0,
		0, 2, 200, 6, 4, 0, 0, 0, 4, 0, 0, 0})
	f.Add([]byte{9, 1, 1, 0, 10, 1, 250, 0}) // a contention start and stop
	ids := []uint32{clrevents.IDThreadPoolWorkerThreadStart, clrevents.IDThreadPoolWorkerThreadStop, clrevents.IDThreadPoolWorkerThreadWait,
		clrevents.IDThreadPoolAdjustmentSample, clrevents.IDThreadPoolAdjustmentAdjustment, clrevents.IDThreadPoolAdjustmentStats,
		clrevents.IDThreadPoolMinMaxThreads, clrevents.IDWaitHandleWaitStart, clrevents.IDWaitHandleWaitStop,
		clrevents.IDContentionStart, clrevents.IDContentionStop}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := tracegen.New()
		for len(data) >= 4 {
			id, th, version := ids[int(data[0])%len(ids)], uint64(data[1]%4), data[1]>>4
			step, n := time.Duration(data[2])*10*time.Millisecond, int(data[3])
			data = data[4:]
			n = min(n, len(data))
			g.Thread(th).After(step).Stack(0x1000+uint64(n%3), 0x2000).Runtime(id, uint32(version)%3, data[:n])
			data = data[n:]
		}
		a := New(g.Header(), Options{})
		g.Run(t, a.Event)
		r := a.Result()
		if err := r.CheckValid(); err != nil {
			t.Fatal(err)
		}
	})
}
