package cdac

import (
	"errors"
	"fmt"
	"os"
)

// LockInfo is one lock as the runtime's memory has it now.
type LockInfo struct {
	Object uint64
	// Type is the object's type ("" when it could not be named; TypeErr
	// says why).
	Type    string
	TypeErr string
	// OwnerOSTid is the holding thread (0: not held).
	OwnerOSTid uint64
	Recursion  uint32
	Waiters    uint32
	// Thin: a thin lock in the object's header (no sync block, no waiter
	// count), read for an object the caller named.
	Thin bool
	// Managed: a System.Threading.Lock (its own fields, no sync block).
	Managed bool
}

// Locks is what a live runtime says of its locks.
type Locks struct {
	Runtime *Runtime
	// Held are the inflated locks held or waited for, then the thin
	// locks held of the objects asked about.
	Held []LockInfo
	// Types names the objects asked about (those it could).
	Types map[uint64]string
	// StackRefs lists, per OS thread, the objects of the contended locks
	// its stack refers to near its topmost transition Frame (the lock it
	// waits for is among them, with those its callers hold).
	StackRefs map[uint64][]uint64
	// BlockedOn is, per OS thread, the object of the lock the runtime's
	// ThreadBlockingInfo on its stack says it waits for (.NET 9+).
	BlockedOn map[uint64]uint64
	// LockBlockedOn is, per OS thread, the System.Threading.Lock its
	// ThreadBlockingInfo says it waits for (.NET 9+); the Lock, its holder
	// read from its fields, is among Held (Managed).
	LockBlockedOn map[uint64]uint64
	// LockErr says why a Lock a thread waits for could not be read.
	LockErr string
	// ManagedIDs are the runtime's threads' managed thread ids by OS
	// thread (Thread::m_ThreadId: Thread.ManagedThreadId).
	ManagedIDs map[uint64]uint32
}

// ReadLocks reads pid's sync block table (each lock's object named) and
// names objs, reading the thin lock of each that has no sync block.
func ReadLocks(pid int, objs []uint64) (*Locks, error) {
	p, err := Open(pid)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out := &Locks{Runtime: p.Runtime, Types: map[uint64]string{}}
	sl, err := p.SyncLocks()
	if err != nil {
		return nil, err
	}
	inflated := map[uint64]bool{}
	for _, l := range sl {
		li := LockInfo{Object: l.Object, OwnerOSTid: l.HolderOSTid, Recursion: l.Recursion, Waiters: l.Waiters}
		li.Type, li.TypeErr = p.name(l.Object)
		inflated[l.Object] = true
		out.Held = append(out.Held, li)
	}
	var contended []uint64
	blocks := map[uint64]bool{}
	objOf := map[uint64]uint64{}
	for _, l := range sl {
		if l.Waiters > 0 {
			contended = append(contended, l.Object)
			blocks[l.SyncBlock] = true
			objOf[l.SyncBlock] = l.Object
		}
	}
	ths, _ := p.Threads()
	out.ManagedIDs = map[uint64]uint32{}
	for _, th := range ths {
		if th.OSTid != 0 {
			out.ManagedIDs[th.OSTid] = th.ID
		}
	}
	if len(contended) > 0 {
		out.StackRefs = map[uint64][]uint64{}
		out.BlockedOn = map[uint64]uint64{}
		for _, th := range ths {
			if th.OSTid == 0 {
				continue
			}
			if on := p.BlockedOn(th, blocks); len(on) == 1 {
				out.BlockedOn[th.OSTid] = objOf[on[0]]
			}
			refs := p.StackRefs(th, contended)
			for _, o := range contended {
				if refs[o] {
					out.StackRefs[th.OSTid] = append(out.StackRefs[th.OSTid], o)
				}
			}
		}
	}
	byID := map[uint32]uint64{}
	for _, t := range ths {
		byID[t.ID] = t.OSTid
	}
	out.lockWaits(p, ths)
	for _, o := range objs {
		if n, _ := p.name(o); n != "" {
			out.Types[o] = n
		}
		if inflated[o] {
			continue
		}
		id, rec, infl, err := p.ThinLock(o)
		if err != nil || infl || id == 0 {
			continue
		}
		if tid := byID[id]; tid != 0 {
			out.Held = append(out.Held, LockInfo{Object: o, Type: out.Types[o], OwnerOSTid: tid, Recursion: rec + 1, Thin: true})
		}
	}
	return out, nil
}

// lockWaits reads the System.Threading.Locks the threads wait for, as
// their ThreadBlockingInfo records name them, and each Lock's holder.
func (out *Locks) lockWaits(p *Process, ths []Thread) {
	read := map[uint64]bool{}
	for _, th := range ths {
		if th.OSTid == 0 {
			continue
		}
		on := p.BlockedOnLock(th)
		if len(on) != 1 {
			continue
		}
		if out.LockBlockedOn == nil {
			out.LockBlockedOn = map[uint64]uint64{}
		}
		out.LockBlockedOn[th.OSTid] = on[0]
		if read[on[0]] {
			continue
		}
		read[on[0]] = true
		l, err := p.ReadManagedLock(on[0])
		if err != nil {
			out.LockErr = err.Error()
			continue
		}
		li := LockInfo{Object: l.Object, Type: lockTypeName, Waiters: l.Waiters, Managed: true}
		if l.Held {
			li.OwnerOSTid, li.Recursion = l.OwnerOSTid, l.Recursion+1
		}
		out.Held = append(out.Held, li)
	}
}

// NameObjects names objs' types in pid's runtime.
func NameObjects(pid int, objs []uint64) (map[uint64]string, error) {
	p, err := Open(pid)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out := map[uint64]string{}
	for _, o := range objs {
		if n, _ := p.name(o); n != "" {
			out[o] = n
		}
	}
	return out, nil
}

func (p *Process) name(obj uint64) (string, string) {
	n, err := p.TypeName(obj)
	if err != nil {
		return "", err.Error()
	}
	return n, ""
}

// Unavailable says in one line why a process's locks cannot be read from
// its memory (err from Open or ReadLocks).
func Unavailable(err error) string {
	switch {
	case errors.Is(err, ErrNoDescriptor):
		return err.Error()
	case errors.Is(err, os.ErrPermission):
		return fmt.Sprintf("%v (clrspy reads /proc/PID/mem: run it as the target's user or root, with ptrace permitted)", err)
	}
	return err.Error()
}
