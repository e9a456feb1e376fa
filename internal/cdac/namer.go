package cdac

import "sync"

// Namer names lock objects of one live process, keeping its memory open
// and what it learnt (modules' metadata, method tables' names) between
// calls: for views that name locks again and again (top, serve).
type Namer struct {
	pid int
	mu  sync.Mutex
	p   *Process
	err error
}

// NewNamer names objects of pid (opened at the first call).
func NewNamer(pid int) *Namer { return &Namer{pid: pid} }

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
	out := map[uint64]string{}
	var why string
	for _, o := range objs {
		if o == 0 {
			continue
		}
		if !n.p.Current(o) {
			why = "the object moved or was collected since its event (no sync block points at its address now)"
			continue
		}
		t, err := n.p.TypeName(o)
		if err != nil {
			why = "the object's type could not be read: " + err.Error()
			continue
		}
		out[o] = t
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
