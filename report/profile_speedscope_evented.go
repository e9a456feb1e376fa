package report

// Time-ordered speedscope: one "evented" profile per thread (frames opened
// and closed at the times the samples say), which speedscope's time-order
// view draws as the thread's timeline. Samples are spilled to a temporary
// file while the stream runs, as raw stack ids: symbols arrive last (the
// rundown), so frames are named only when the file is written. Memory is
// one small buffer per thread with samples waiting for their block, and an
// offset per written block; the rest is on disk.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/clrspy/clrspy/stacks"
)

// spillBlock is how many bytes of a thread's samples are buffered before
// they go to the spill file as one block.
const spillBlock = 4 << 10

// EventedSpeedscope collects samples for a time-ordered speedscope file.
// Feed Sample from stacks.Options.OnSample, then call Write once the
// stream ended and the builder's Result was taken; Close removes the spill
// file.
type EventedSpeedscope struct {
	f       *os.File
	off     int64
	threads []*spillThread // by stacks.RawSample.ThreadIndex
	err     error
}

type spillThread struct {
	buf     []byte
	blocks  []spillRef // written blocks in order
	samples int64
	last    int64 // Nanos of the previous sample
}

type spillRef struct {
	off int64
	n   int32
}

// NewEventedSpeedscope creates the spill file in dir ("" for the system's
// temporary directory).
func NewEventedSpeedscope(dir string) (*EventedSpeedscope, error) {
	f, err := os.CreateTemp(dir, "clrspy-speedscope-*.spill")
	if err != nil {
		return nil, fmt.Errorf("speedscope spill file: %w", err)
	}
	return &EventedSpeedscope{f: f}, nil
}

// Sample records one sample (the OnSample hook). It does not allocate
// except when a thread is new or a block is written.
func (e *EventedSpeedscope) Sample(s stacks.RawSample) {
	if e.err != nil {
		return
	}
	for s.ThreadIndex >= len(e.threads) {
		e.threads = append(e.threads, nil)
	}
	t := e.threads[s.ThreadIndex]
	if t == nil {
		t = &spillThread{buf: make([]byte, 0, spillBlock+3*binary.MaxVarintLen64)}
		e.threads[s.ThreadIndex] = t
	}
	id := uint64(s.Stack) << 1
	if s.External {
		id |= 1
	}
	t.buf = binary.AppendUvarint(t.buf, id)
	t.buf = binary.AppendVarint(t.buf, s.Nanos-t.last)
	t.buf = binary.AppendUvarint(t.buf, uint64(max(s.Weight, 0)))
	t.last = s.Nanos
	t.samples++
	if len(t.buf) >= spillBlock {
		e.flush(t)
	}
}

func (e *EventedSpeedscope) flush(t *spillThread) {
	if len(t.buf) == 0 || e.err != nil {
		return
	}
	if _, err := e.f.WriteAt(t.buf, e.off); err != nil {
		e.err = fmt.Errorf("speedscope spill file: %w", err)
		return
	}
	t.blocks = append(t.blocks, spillRef{e.off, int32(len(t.buf))})
	e.off += int64(len(t.buf))
	t.buf = t.buf[:0]
}

// Close removes the spill file.
func (e *EventedSpeedscope) Close() error {
	name := e.f.Name()
	err := e.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}

// Write writes the speedscope document: p's frames, then one evented
// profile per thread, busiest first. b must be the builder that made p
// (its last Result names the raw stacks).
func (e *EventedSpeedscope) Write(w io.Writer, b *stacks.Builder, p *stacks.Profile, name string) error {
	if e.err != nil {
		return e.err
	}
	for _, t := range e.threads {
		if t != nil {
			e.flush(t)
		}
	}
	if e.err != nil {
		return e.err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	head := struct {
		Schema             string   `json:"$schema"`
		Exporter           string   `json:"exporter"`
		Name               string   `json:"name"`
		ActiveProfileIndex int      `json:"activeProfileIndex"`
		Shared             ssShared `json:"shared"`
	}{"https://www.speedscope.app/file-format-schema.json", "clrspy", partialName(name, p.Notes), 0, ssShared{}}
	dense, frames := ssFrames(p)
	head.Shared.Frames = frames
	js, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// Splice the profiles into the object written so far.
	bw.Write(js[:len(js)-1])
	bw.WriteString(`,"profiles":[`)
	order := make([]int, 0, len(e.threads))
	for i, t := range e.threads {
		if t != nil && t.samples > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return int(min(max(e.threads[y].samples-e.threads[x].samples, -1), 1))
	})
	for n, ti := range order {
		if n > 0 {
			bw.WriteByte(',')
		}
		label := fmt.Sprintf("thread %d", ti)
		if ti < len(p.Threads) {
			label = p.Threads[ti].Label()
		}
		if err := e.writeThread(bw, b, dense, label, e.threads[ti]); err != nil {
			return err
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// writeThread replays one thread's samples: a sample at t with weight d
// holds its stack over [t-d, t]; consecutive samples share their common
// root frames, and a gap (the thread was not sampled) closes everything.
// dense maps the profile's frames to the document's (ssFrames): a method
// whose code version changed between two samples stays open.
func (e *EventedSpeedscope) writeThread(bw *bufio.Writer, b *stacks.Builder, dense []int32, label string, t *spillThread) error {
	lj, _ := json.Marshal(label)
	// startValue and endValue are known only at the end: write the events
	// first into the profile object, then the values after them (JSON
	// objects have no order).
	bw.WriteString(`{"type":"evented","name":`)
	bw.Write(lj)
	bw.WriteString(`,"unit":"nanoseconds","events":[`)
	var (
		open      []int32 // root first
		now       int64   // time of the last event
		first     = true
		start     int64
		events    int
		num       []byte
		ts        int64
		block     = make([]byte, 0, spillBlock+3*binary.MaxVarintLen64)
		rootFirst []int32
	)
	emit := func(kind byte, frame int32, at int64) {
		if events > 0 {
			bw.WriteByte(',')
		}
		events++
		bw.WriteString(`{"type":"`)
		bw.WriteByte(kind)
		bw.WriteString(`","frame":`)
		num = strconv.AppendInt(num[:0], int64(frame), 10)
		bw.Write(num)
		bw.WriteString(`,"at":`)
		num = strconv.AppendInt(num[:0], at, 10)
		bw.Write(num)
		bw.WriteByte('}')
	}
	closeTo := func(keep int, at int64) {
		for len(open) > keep {
			emit('C', open[len(open)-1], at)
			open = open[:len(open)-1]
		}
	}
	for _, ref := range t.blocks {
		block = block[:ref.n]
		if _, err := e.f.ReadAt(block, ref.off); err != nil {
			return fmt.Errorf("speedscope spill file: %w", err)
		}
		for p := 0; p < len(block); {
			id, n1 := binary.Uvarint(block[p:])
			dt, n2 := binary.Varint(block[p+n1:])
			wt, n3 := binary.Uvarint(block[p+n1+n2:])
			if n1 <= 0 || n2 <= 0 || n3 <= 0 {
				return fmt.Errorf("speedscope spill file: corrupt block at %d", ref.off)
			}
			p += n1 + n2 + n3
			ts += dt
			frames := b.StackOf(int32(id>>1), id&1 == 1)
			rootFirst = rootFirst[:0]
			for i := len(frames) - 1; i >= 0; i-- {
				rootFirst = append(rootFirst, dense[frames[i]])
			}
			from := max(ts-int64(wt), now, 0)
			if first {
				start, now, first = from, from, false
			}
			if from > now {
				closeTo(0, now) // not sampled in between
			}
			keep := 0
			for keep < len(open) && keep < len(rootFirst) && open[keep] == rootFirst[keep] {
				keep++
			}
			closeTo(keep, from)
			for _, f := range rootFirst[keep:] {
				emit('O', f, from)
				open = append(open, f)
			}
			now = max(ts, from)
		}
	}
	closeTo(0, now)
	bw.WriteString(`],"startValue":`)
	num = strconv.AppendInt(num[:0], start, 10)
	bw.Write(num)
	bw.WriteString(`,"endValue":`)
	num = strconv.AppendInt(num[:0], now, 10)
	bw.Write(num)
	bw.WriteByte('}')
	return nil
}
