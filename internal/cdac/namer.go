package cdac

import (
	"sync"
	"time"
)

// Namer names lock objects of one live process, keeping its memory open
// and what it learnt (modules' metadata, method tables' names) between
// calls: for views that name locks again and again (top, serve). An
// object's name is checked again (its address may have been reused) once
// it is older than recheck.
type Namer struct {
	pid   int
	mu    sync.Mutex
	p     *Process
	err   error
	seen  map[uint64]named
	clock func() time.Time
}

type named struct {
	name, why string
	at        time.Time
}

// recheck is how long a name (or a failure) is kept before the address is
// read again.
const recheck = 5 * time.Second

// maxNamed bounds the names kept.
const maxNamed = 1 << 14

// NewNamer names objects of pid (opened at the first call).
func NewNamer(pid int) *Namer { return &Namer{pid: pid, seen: map[uint64]named{}, clock: time.Now} }

// Names names those of objs that are, now, lock objects (the object of a
// sync block: an address that moved since its event is not named), and
// says in one line why the others are not ("" when all are named).
func (n *Namer) Names(objs []uint64) (map[uint64]string, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p == nil && n.err == nil {
		n.p, n.err = Open(n.pid)
	}
	if n.err != nil {
		return nil, "the target's memory gives no type: " + Unavailable(n.err)
	}
	now := n.clock()
	out := map[uint64]string{}
	var why string
	for _, o := range objs {
		if o == 0 {
			continue
		}
		s, ok := n.seen[o]
		if !ok || now.Sub(s.at) >= recheck {
			s = named{at: now}
			if !n.p.Current(o) {
				s.why = "the object moved or was collected since its event (no sync block points at its address now)"
			} else if t, err := n.p.TypeName(o); err != nil {
				s.why = "the object's type could not be read: " + err.Error()
			} else {
				s.name = t
			}
			if len(n.seen) >= maxNamed {
				clear(n.seen)
			}
			n.seen[o] = s
		}
		if s.name != "" {
			out[o] = s.name
		} else {
			why = s.why
		}
	}
	return out, why
}

// Close releases the process's memory.
func (n *Namer) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.p != nil {
		return n.p.Close()
	}
	return nil
}
