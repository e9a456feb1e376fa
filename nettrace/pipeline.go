package nettrace

import (
	"errors"
	"sync"
)

// The pipeline of a Reader with Options.Threads > 1. The framer goroutine
// reads the stream, keeps the tables and emits items in stream order on
// items; it hands each V4 event block to a decoder goroutine (jobs), which
// sends the block's decoded chunks on the block's own channel, then nil.
// V6 and V3 blocks are decoded by the framer itself: their decoding reads
// (V6 labels, overrides) or writes (V3 inline metadata) the framer's
// tables. Next, on the caller's goroutine, takes the items and each block's
// chunks in order, so delivery is exactly that of a one-goroutine read.
//
// Decoders read the tables as the framer left them when it emitted their
// block: the framer only adds at the end of them while decoders run, and
// waits for every decoder (drain) before any other change (a metadata
// block, a redefined or out-of-range stack id). Memory ahead of Next is
// bounded by readAhead bytes of blocks, counted before a block is read
// (waitAhead), not only before it is queued: a block read while the framer
// waited to queue it was one more block in memory, and with 255 MiB blocks
// the read-ahead grew by blocks, not bytes (issue 29: a stream rejected at
// its first event cost 807 MB with two decoders, 1 GB through stdin). A
// block larger than what the budget has left is read only once Next waits
// for it: big blocks are then never read ahead of the one Next decodes.

// readAhead bounds the bytes of event blocks read but not yet taken by Next
// (one block always goes, however large).
const readAhead = 16 << 20

type pipeline struct {
	items chan item
	jobs  chan *blockBuf
	stop  chan struct{}
	wg    sync.WaitGroup // V4 blocks handed to decoders, not fully decoded
	gor   sync.WaitGroup // the goroutines

	mu       sync.Mutex
	cond     sync.Cond
	ahead    int64 // block bytes sent on items, not yet received
	starving bool  // Next waits for an item
}

// errStopped ends the framer when the pipeline is stopped.
var errStopped = errors.New("nettrace: pipeline stopped")

func (r *Reader) startPipeline() {
	// As many decoders as threads: decoding is about two thirds of the
	// reader's work, merging and delivery (on the caller's goroutine) the
	// rest, and the framer little; idle decoders wait on their channels.
	workers := r.opt.Threads
	p := &pipeline{
		items: make(chan item, 2*workers+4),
		jobs:  make(chan *blockBuf, workers),
		stop:  make(chan struct{}),
	}
	p.cond.L = &p.mu
	r.pipe = p
	p.gor.Add(1 + workers)
	go r.frame(p)
	for range workers {
		go r.decode(p)
	}
}

// frame is the framer goroutine.
func (r *Reader) frame(p *pipeline) {
	defer p.gor.Done()
	defer close(p.jobs)
	// What the header's parse emitted before the pipeline started goes
	// first: a stream without a Trace object reads its first block to
	// find that out, and that block must be decoded like any other.
	for i, it := range r.pend {
		r.pend[i] = item{}
		if err := p.send(r, it); err != nil {
			return
		}
	}
	r.pend = r.pend[:0]
	for {
		err := r.parse()
		if err == errStopped {
			return
		}
		if err != nil {
			r.emit(item{kind: itemEnd, err: err})
			return
		}
	}
}

// decode is a decoder goroutine.
func (r *Reader) decode(p *pipeline) {
	defer p.gor.Done()
	for b := range p.jobs {
		r.decodeAll(b, p.stop)
		p.wg.Done()
	}
}

// decodeAll decodes b chunk by chunk onto b.ch, then sends nil.
func (r *Reader) decodeAll(b *blockBuf, stop <-chan struct{}) {
	for !b.finished {
		c := r.getChunk()
		r.fill(b, c)
		if c.n == 0 {
			r.putChunks([]*recChunk{c})
			continue
		}
		select {
		case b.ch <- c:
		case <-stop:
			r.putChunks([]*recChunk{c})
			return
		}
	}
	select {
	case b.ch <- nil:
	case <-stop:
	}
}

// send hands an item from the framer to Next; an event block also goes to a
// decoder, or is decoded here (V6, V3).
func (p *pipeline) send(r *Reader, it item) error {
	var size int64
	if it.kind == itemBlock {
		b := it.b
		if b.ch == nil {
			b.ch = make(chan *recChunk, 16)
		}
		size = int64(len(b.data))
		p.mu.Lock()
		for p.ahead > 0 && p.ahead+size > readAhead && !p.stopped() {
			p.cond.Wait()
		}
		p.ahead += size
		p.mu.Unlock()
	}
	select {
	case p.items <- it:
	case <-p.stop:
		if it.b != nil {
			r.putBuf(it.b)
		}
		return errStopped
	}
	if it.kind != itemBlock {
		return nil
	}
	if it.b.kind != kindV4 {
		r.decodeAll(it.b, p.stop)
		return nil
	}
	p.wg.Add(1)
	select {
	case p.jobs <- it.b:
		return nil
	case <-p.stop:
		p.wg.Done()
		return errStopped
	}
}

// waitAhead holds the framer, before it reads a block of size bytes, until
// the read-ahead budget takes it, or, for a block larger than what is left
// of it, until nothing is ahead and Next waits for an item (so a stream of
// big blocks never deadlocks: Next always ends up waiting for the next
// one). Without a pipeline it returns at once; a stopped pipeline returns
// errStopped.
func (r *Reader) waitAhead(size int64) error {
	p := r.pipe
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.stopped():
			return errStopped
		case p.ahead+size <= readAhead, p.ahead == 0 && p.starving:
			return nil
		}
		p.cond.Wait()
	}
}

func (p *pipeline) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// receive takes the next item (Next's goroutine). When none is there it
// says so to the framer (waitAhead) before it waits.
func (p *pipeline) receive() item {
	var it item
	select {
	case it = <-p.items:
	default:
		p.mu.Lock()
		p.starving = true
		p.cond.Signal()
		p.mu.Unlock()
		it = <-p.items
		p.mu.Lock()
		p.starving = false
		p.mu.Unlock()
	}
	if it.kind == itemBlock {
		p.mu.Lock()
		p.ahead -= int64(len(it.b.data))
		p.cond.Signal()
		p.mu.Unlock()
	}
	return it
}

// drain waits until no decoder runs (framer, before changing its tables
// other than at their end).
func (r *Reader) drain() {
	if r.pipe != nil {
		r.pipe.wg.Wait()
	}
}

// stopPipeline ends the goroutines (waiting for a read under way) and takes
// back the blocks and chunks they had not handed over.
func (r *Reader) stopPipeline() {
	p := r.pipe
	close(p.stop)
	p.mu.Lock()
	p.cond.Broadcast()
	p.mu.Unlock()
	p.gor.Wait()
	r.pipe = nil // the framer reads it: only once it ended
	for {
		select {
		case it := <-p.items:
			if it.b != nil {
				r.dropChunks(it.b)
				r.putBuf(it.b)
			}
			continue
		default:
		}
		break
	}
	if b := r.cur; b != nil {
		r.dropChunks(b)
	}
}

// dropChunks takes back the chunks decoded into b's channel.
func (r *Reader) dropChunks(b *blockBuf) {
	for {
		select {
		case c := <-b.ch:
			if c != nil {
				r.putChunks([]*recChunk{c})
			}
			continue
		default:
		}
		return
	}
}
