package nettrace

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// TestNextAllocatesNothing: once a Reader has read a stream (Reset then
// reuses its queues, chunks, block buffers and stack slabs), reading it
// again allocates nothing per event or per block: every batch of events
// whose blocks brought no metadata record, no sequence point and no stack
// (those allocate their records, thread lists and the stack cache's
// growth up to its budget) costs 0 allocations, with every
// event kept, with every one rejected and with gc's filter, on the
// generated trace (samples and allocations with stacks on 64 threads, GC
// sequences).
func TestNextAllocatesNothing(t *testing.T) {
	data := generated(t, 4<<20, 5)
	for name, keep := range map[string]func(*Metadata) bool{
		"all":  nil,
		"none": keepFilters["none"],
		"gc":   keepGCBench,
	} {
		t.Run(name, func(t *testing.T) {
			r, err := NewReaderOptions(bytes.NewReader(data), Options{Keep: keep})
			if err != nil {
				t.Fatal(err)
			}
			readToEnd(t, r)
			if err := r.Reset(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			const batch = 256
			var done bool
			var st [2]counts // at the start of AllocsPerRun's warm-up and of its measured run (Stats would allocate its map)
			calls := 0
			read := func() {
				st[calls%2] = r.cnt
				calls++
				for range batch {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							t.Fatal(err)
						}
						done = true
						return
					}
				}
			}
			measured, clean := 0, 0
			for !done {
				a := testing.AllocsPerRun(1, read)
				after := r.cnt
				before := st[(calls-1)%2]
				measured++
				if after.metadata != before.metadata || after.sps != before.sps || after.stacks != before.stacks || done {
					// Records, thread lists, stack generations: allocated
					// per record, sequence point or stack, not per event.
					continue
				}
				clean++
				if a != 0 {
					t.Fatalf("%d allocations reading batch %d (blocks read %v)", int(a), measured, after.blocks)
				}
			}
			st1 := r.Stats()
			t.Logf("%d batches of %d events, %d without metadata, sequence points or stacks; %d delivered, %d skipped",
				measured, batch, clean, st1.Events, st1.Skipped)
			if clean*3 < measured {
				t.Fatalf("only %d of %d batches measured", clean, measured)
			}
		})
	}
}

func readToEnd(t *testing.T, r *Reader) {
	t.Helper()
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(fmt.Errorf("reading: %w", err))
			}
			return
		}
	}
}
