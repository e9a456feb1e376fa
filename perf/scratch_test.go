package perf

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/symtab"
	"github.com/clrspy/clrspy/unwind"
)

func TestScratchBroken(t *testing.T) {
	p := workload.Start(t, []string{"DOTNET_gcConcurrent=0"}, "gcsample", "wait=1")
	s, err := Open(p.Pid, Options{Hz: 499})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	proc, _ := symtab.NewProcess(p.Pid)
	p.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hist := map[string]int{}
	buf := make([]uint64, 0, 256)
	shown := 0
	s.Run(ctx, func(sm *Sample) {
		st := unwind.Stack{Base: sm.Regs.SP, Data: sm.Stack}
		ips, end := unwind.Unwind(&sm.Regs, &st, proc, buf[:0])
		if end == unwind.EndBroken {
			last := ips[len(ips)-1]
			sy := proc.Symbolize(last - 1)
			k := fmt.Sprintf("depth=%d last=%s!%s+%#x", len(ips), sy.Module, sy.Name, sy.Offset)
			hist[k]++
			if shown < 2 && len(ips) > 3 {
				shown++
				for i, ip := range ips {
					t.Logf("  %d %#x %+v", i, ip, proc.Symbolize(ip))
				}
				t.Logf("  user chain %x", sm.User)
			}
		}
	})
	var ks []string
	for k := range hist {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return hist[ks[i]] > hist[ks[j]] })
	for _, k := range ks[:min(15, len(ks))] {
		t.Logf("%4d %s", hist[k], k)
	}
}
