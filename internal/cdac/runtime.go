package cdac

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/internal/procfs"
)

// The object header word's bits (syncblk.h, .NET 9 and 10).
const (
	bitIsHashOrSyncBlockIndex = 0x08000000
	bitIsHashCode             = 0x04000000
	maskSyncBlockIndex        = 1<<26 - 1
	maskThinLockThreadID      = 0x0000FFFF
	maskThinLockRecursion     = 0x003F0000
	thinLockRecursionShift    = 16
)

// The AwareLock's state bits (syncblk.h's LockState).
const (
	lockIsLocked     = 1
	lockWaiterShift  = 6
	syncIndexFlags   = 0x80000000 // SyncBlockPrecious
	maxThreads       = 1 << 16
	maxSyncEntries   = 1 << 22
	syncEntriesChunk = 1024
	maxPathChars     = 4096
)

// Process is a live runtime read through its descriptor.
type Process struct {
	Runtime *Runtime
	D       *Descriptor
	mem     Memory
	close   func() error
	// root prefixes the module paths the runtime holds (/proc/PID/root).
	root    string
	modules map[uint64]*moduleNames
	types   map[uint64]string
}

type moduleNames struct {
	defs *clrmeta.TypeDefs
	path string
	// opened is the file read (path under the process's root).
	opened string
	err    error
}

// Open reads pid's runtime descriptor: ErrNoDescriptor (wrapped, with
// the version) for a runtime that exports none.
func Open(pid int) (*Process, error) {
	rt, err := FindRuntime(pid)
	if err != nil {
		return nil, err
	}
	m, err := procfs.OpenMem(pid)
	if err != nil {
		return nil, fmt.Errorf("reading the target's memory: %v", err)
	}
	d, err := ReadDescriptor(m, rt.Symbol)
	if err != nil {
		m.Close()
		return nil, err
	}
	p := New(m, d, procfs.Root(pid))
	p.Runtime, p.close = rt, m.Close
	return p, nil
}

// New reads a runtime whose descriptor is d in memory m; module paths are
// opened under root ("" as given).
func New(m Memory, d *Descriptor, root string) *Process {
	return &Process{D: d, mem: m, root: root, modules: map[uint64]*moduleNames{}, types: map[uint64]string{}}
}

// Close releases the target's memory.
func (p *Process) Close() error {
	if p.close != nil {
		return p.close()
	}
	return nil
}

func (p *Process) read(addr uint64, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := p.mem.ReadAt(b, int64(addr)); err != nil {
		return nil, err
	}
	return b, nil
}

// Ptr reads a target pointer.
func (p *Process) Ptr(addr uint64) (uint64, error) {
	b, err := p.read(addr, p.D.PtrSize)
	if err != nil {
		return 0, err
	}
	if p.D.PtrSize == 4 {
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// U32 reads a 32-bit value.
func (p *Process) U32(addr uint64) (uint32, error) {
	b, err := p.read(addr, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// globalPtr reads the pointer an indirect global points at (the runtime's
// variable holding it).
func (p *Process) globalPtr(name string) (uint64, error) {
	at, err := p.D.Global(name)
	if err != nil {
		return 0, err
	}
	return p.Ptr(at)
}

// Thread is one runtime Thread of the thread store.
type Thread struct {
	Addr uint64
	// ID is the thin lock id (Thread::m_ThreadId): what an object's
	// header and an AwareLock name the holder by.
	ID    uint32
	OSTid uint64 // 0: not started, or ended
	State uint32
}

// Threads walks the thread store's list.
func (p *Process) Threads() ([]Thread, error) {
	d := p.D
	ts, err := p.globalPtr("ThreadStore")
	if err != nil {
		return nil, fmt.Errorf("thread store: %w", err)
	}
	first, err := d.MustField("ThreadStore", "FirstThreadLink")
	if err != nil {
		return nil, err
	}
	link, err := d.MustField("Thread", "LinkNext")
	if err != nil {
		return nil, err
	}
	idOff, err := d.MustField("Thread", "Id")
	if err != nil {
		return nil, err
	}
	osOff, err := d.MustField("Thread", "OSId")
	if err != nil {
		return nil, err
	}
	stOff, hasState := d.Field("Thread", "State")
	next, err := p.Ptr(ts + uint64(first))
	if err != nil {
		return nil, fmt.Errorf("thread store: %w", err)
	}
	var out []Thread
	seen := map[uint64]bool{}
	for next != 0 {
		if len(out) >= maxThreads || seen[next] {
			return out, errors.New("thread store: the thread list does not end")
		}
		seen[next] = true
		th := next - uint64(link)
		id, err := p.U32(th + uint64(idOff))
		if err != nil {
			return out, fmt.Errorf("thread %#x: %w", th, err)
		}
		os, err := p.Ptr(th + uint64(osOff))
		if err != nil {
			return out, fmt.Errorf("thread %#x: %w", th, err)
		}
		t := Thread{Addr: th, ID: id, OSTid: os}
		if hasState {
			t.State, _ = p.U32(th + uint64(stOff))
		}
		out = append(out, t)
		if next, err = p.Ptr(th + uint64(link)); err != nil {
			return out, fmt.Errorf("thread %#x: %w", th, err)
		}
	}
	return out, nil
}

// awareLock is where syncblk.h's AwareLock keeps its fields, and the
// offset of SyncBlock's m_pInteropInfo that follows it, which the
// descriptor has: the check that the layout is one of these two.
//   - holder by ids (.NET 10): m_lockState, m_Recursion, m_HoldingThreadId,
//     m_HoldingOSThreadId, m_TransientPrecious, m_dwSyncIndex, m_SemEvent,
//     two DWORDs;
//   - holder by Thread* (the layout before it): m_lockState, m_Recursion,
//     m_HoldingThread, m_TransientPrecious, m_dwSyncIndex, m_SemEvent, two
//     DWORDs; the Thread is found in the thread store.
//
// holdingThread is -1 in the first, holdingID and holdingOS in the second.
type awareLock struct {
	state, recursion, holdingID, holdingOS, holdingThread, syncIndex, size, interop int
}

func (p *Process) awareLayout() (awareLock, error) {
	byIDs := awareLock{state: 0, recursion: 4, holdingID: 8, holdingOS: 16, holdingThread: -1, syncIndex: 28, size: 32, interop: 56}
	byThread := awareLock{state: 0, recursion: 4, holdingID: -1, holdingOS: -1, holdingThread: 8, syncIndex: 20, size: 24, interop: 48}
	if p.D.PtrSize == 4 {
		byIDs = awareLock{state: 0, recursion: 4, holdingID: 8, holdingOS: 12, holdingThread: -1, syncIndex: 20, size: 24, interop: 40}
		byThread = awareLock{state: 0, recursion: 4, holdingID: -1, holdingOS: -1, holdingThread: 8, syncIndex: 16, size: 20, interop: 36}
	}
	got, ok := p.D.Field("SyncBlock", "InteropInfo")
	if !ok {
		return byIDs, errors.New("the runtime's data descriptor has no SyncBlock.InteropInfo to check the lock layout against")
	}
	switch got {
	case byIDs.interop:
		return byIDs, nil
	case byThread.interop:
		return byThread, nil
	}
	return byIDs, fmt.Errorf("this runtime's SyncBlock is not laid out as clrspy knows it (InteropInfo at %d, not %d or %d): its lock owners are not read",
		got, byIDs.interop, byThread.interop)
}

// SyncLock is an inflated lock: a sync block's AwareLock, with its object.
type SyncLock struct {
	Index  uint32
	Object uint64
	// SyncBlock is its sync block's address (its AwareLock's: the first
	// field).
	SyncBlock uint64
	Held      bool
	// HolderID is the holding thread's thin lock id, HolderOSTid its OS
	// thread id (the AwareLock keeps both); 0 when not held.
	HolderID    uint32
	HolderOSTid uint64
	Recursion   uint32
	// Waiters is the number of threads registered as waiting for it.
	Waiters uint32
}

// SyncLocks walks the sync block table: every entry with a sync block
// whose lock is held or waited for (an entry's back pointer to its sync
// block must name the entry, or it is not one).
func (p *Process) SyncLocks() ([]SyncLock, error) {
	l, err := p.awareLayout()
	if err != nil {
		return nil, err
	}
	table, err := p.globalPtr("SyncTableEntries")
	if err != nil {
		return nil, fmt.Errorf("sync block table: %w", err)
	}
	if table == 0 {
		return nil, nil
	}
	esize := 2 * p.D.PtrSize
	if t, ok := p.D.Types["SyncTableEntry"]; ok && t.Size > 0 {
		esize = t.Size
	}
	sbOff, err := p.D.MustField("SyncTableEntry", "SyncBlock")
	if err != nil {
		return nil, err
	}
	objOff := sbOff + p.D.PtrSize
	if o, ok := p.D.Field("SyncTableEntry", "Object"); ok {
		objOff = o
	}
	ptr := func(b []byte) uint64 {
		if p.D.PtrSize == 4 {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	}
	var out []SyncLock
	var byAddr map[uint64]Thread // the thread store, for a holder by Thread*
	// Entry 0 is never used; the table ends at the first entry that was
	// never handed out (both pointers zero: freed ones keep a tagged
	// free-list link).
	for base := uint32(0); base < maxSyncEntries; base += syncEntriesChunk {
		chunk, err := p.read(table+uint64(base)*uint64(esize), syncEntriesChunk*esize)
		if err != nil {
			// The table's end may be the end of its allocation: read what
			// remains one entry at a time.
			chunk = nil
		}
		for i := uint32(0); i < syncEntriesChunk; i++ {
			idx := base + i
			if idx == 0 {
				continue
			}
			var e []byte
			if chunk != nil {
				e = chunk[int(i)*esize : int(i+1)*esize]
			} else if e, err = p.read(table+uint64(idx)*uint64(esize), esize); err != nil {
				return out, nil
			}
			sb, obj := ptr(e[sbOff:]), ptr(e[objOff:])
			if sb == 0 && obj == 0 {
				return out, nil
			}
			if sb == 0 || obj&1 != 0 {
				continue // a hash code's entry, or a free one
			}
			a, err := p.read(sb, l.size)
			if err != nil {
				continue
			}
			if binary.LittleEndian.Uint32(a[l.syncIndex:])&^syncIndexFlags != idx {
				continue // not this entry's sync block
			}
			st := binary.LittleEndian.Uint32(a[l.state:])
			s := SyncLock{Index: idx, Object: obj, SyncBlock: sb, Held: st&lockIsLocked != 0, Waiters: st >> lockWaiterShift}
			if s.Held {
				s.Recursion = binary.LittleEndian.Uint32(a[l.recursion:])
				if l.holdingThread >= 0 {
					th, err := p.threadAt(ptr(a[l.holdingThread:]), &byAddr)
					if err != nil {
						return nil, err
					}
					s.HolderID, s.HolderOSTid = th.ID, th.OSTid
				} else {
					s.HolderID = binary.LittleEndian.Uint32(a[l.holdingID:])
					s.HolderOSTid = ptr(a[l.holdingOS:])
				}
			}
			if s.Held || s.Waiters > 0 {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// threadAt is the thread store's Thread at addr (read once into *byAddr).
func (p *Process) threadAt(addr uint64, byAddr *map[uint64]Thread) (Thread, error) {
	if *byAddr == nil {
		ths, err := p.Threads()
		if err != nil {
			return Thread{}, err
		}
		*byAddr = map[uint64]Thread{}
		for _, t := range ths {
			(*byAddr)[t.Addr] = t
		}
	}
	return (*byAddr)[addr], nil
}

// ThinLock reads obj's header word: the thin lock's holder (a thin lock
// id, 0 when free) and recursion; inflated reports that the header holds
// a sync block index (or a hash code) instead.
func (p *Process) ThinLock(obj uint64) (holderID, recursion uint32, inflated bool, err error) {
	off := uint64(4)
	if v, ok := p.D.Globals["SyncBlockValueToObjectOffset"]; ok {
		off = v
	}
	w, err := p.U32(obj - off)
	if err != nil {
		return 0, 0, false, err
	}
	if w&bitIsHashOrSyncBlockIndex != 0 {
		return 0, 0, true, nil
	}
	return w & maskThinLockThreadID, (w & maskThinLockRecursion) >> thinLockRecursionShift, false, nil
}

// TypeName names obj's type: its MethodTable's TypeDef in its module's
// metadata (an array as its element's name with []).
func (p *Process) TypeName(obj uint64) (string, error) {
	mt, err := p.Ptr(obj)
	if err != nil {
		return "", err
	}
	if u, ok := p.D.Globals["ObjectToMethodTableUnmask"]; ok {
		mt &^= u
	}
	return p.MethodTableName(mt)
}

// MethodTableName names the type of MethodTable mt.
func (p *Process) MethodTableName(mt uint64) (string, error) {
	if n, ok := p.types[mt]; ok {
		return n, nil
	}
	n, err := p.mtName(mt, 0)
	if err == nil {
		p.types[mt] = n
	}
	return n, err
}

const (
	wflagsHasComponentSize = 0x80000000
	wflagsCategoryArrayMsk = 0x000C0000
	wflagsCategoryArray    = 0x00080000
	tokenOverflow          = 0xFFFFFF
)

func (p *Process) mtName(mt uint64, depth int) (string, error) {
	d := p.D
	if mt == 0 || depth > 8 {
		return "", errors.New("no method table")
	}
	fl, err := d.MustField("MethodTable", "MTFlags")
	if err != nil {
		return "", err
	}
	fl2, err := d.MustField("MethodTable", "MTFlags2")
	if err != nil {
		return "", err
	}
	modOff, err := d.MustField("MethodTable", "Module")
	if err != nil {
		return "", err
	}
	flags, err := p.U32(mt + uint64(fl))
	if err != nil {
		return "", fmt.Errorf("method table %#x: %w", mt, err)
	}
	if flags&wflagsHasComponentSize != 0 && flags&wflagsCategoryArrayMsk == wflagsCategoryArray {
		// An array: PerInstInfo is its element's type handle.
		pi, ok := d.Field("MethodTable", "PerInstInfo")
		if !ok {
			return "", errors.New("the runtime's data descriptor has no MethodTable.PerInstInfo")
		}
		el, err := p.Ptr(mt + uint64(pi))
		if err != nil {
			return "", err
		}
		if el&2 != 0 {
			return "", errors.New("an array of a type the method tables do not describe")
		}
		n, err := p.mtName(el, depth+1)
		if err != nil {
			return "", err
		}
		return n + "[]", nil
	}
	f2, err := p.U32(mt + uint64(fl2))
	if err != nil {
		return "", fmt.Errorf("method table %#x: %w", mt, err)
	}
	rid := f2 >> 8
	if rid == 0 || rid >= tokenOverflow {
		return "", fmt.Errorf("method table %#x: no TypeDef row", mt)
	}
	mod, err := p.Ptr(mt + uint64(modOff))
	if err != nil {
		return "", fmt.Errorf("method table %#x: %w", mt, err)
	}
	m := p.module(mod)
	if m.err != nil {
		return "", m.err
	}
	n := m.defs.Name(rid)
	if n == "" {
		return "", fmt.Errorf("%s has no TypeDef row %d", m.path, rid)
	}
	if flags&wflagsHasComponentSize == 0 && flags&wflagsGenericsMask != 0 {
		if args := p.typeArgs(mt, depth); len(args) > 0 {
			n = genericName(n, args)
		}
	}
	return n, nil
}

// wflagsGenericsMask: the MethodTable is an instantiation (or the generic
// definition itself) when these low flags are not 0.
const wflagsGenericsMask = 0x30

// maxTypeArgs bounds the type arguments read of one instantiation.
const maxTypeArgs = 32

// typeArgs names the type arguments of generic instantiation mt: its
// last dictionary (PerInstInfo's, after those of its generic parents,
// counted by the GenericsDictInfo just before it) starts with their type
// handles. A type handle that is no MethodTable (a TypeDesc: a pointer,
// a type variable) is "?"; nil when none can be read.
func (p *Process) typeArgs(mt uint64, depth int) []string {
	pi, ok := p.D.Field("MethodTable", "PerInstInfo")
	nt, ok3 := p.D.Field("GenericsDictInfo", "NumTypeArgs")
	nd, ok2 := p.D.Field("GenericsDictInfo", "NumDicts")
	if !ok2 && ok3 && nt >= 2 {
		// .NET 9's descriptor has NumTypeArgs alone: methodtable.h's
		// GenericsDictInfo keeps the WORD count of dictionaries before it.
		nd, ok2 = nt-2, true
	}
	if !ok || !ok2 || !ok3 {
		return nil
	}
	per, err := p.Ptr(mt + uint64(pi))
	if err != nil || per == 0 {
		return nil
	}
	ps := uint64(p.D.PtrSize)
	info, err := p.read(per-ps, p.D.PtrSize)
	if err != nil {
		return nil
	}
	dicts := binary.LittleEndian.Uint16(info[nd:])
	n := binary.LittleEndian.Uint16(info[nt:])
	if dicts == 0 || n == 0 || n > maxTypeArgs {
		return nil
	}
	dict, err := p.Ptr(per + ps*uint64(dicts-1))
	if err != nil || dict == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = "?"
		th, err := p.Ptr(dict + ps*uint64(i))
		if err != nil || th == 0 || th&2 != 0 {
			continue
		}
		if a, err := p.mtName(th, depth+1); err == nil {
			out[i] = a
		}
	}
	return out
}

// genericName writes definition name def ("System.Collections.Generic.List`1",
// "Ns.Outer`1+Inner") with its type arguments: List<Workload.Item>.
func genericName(def string, args []string) string {
	var b strings.Builder
	for i := 0; i < len(def); i++ {
		if def[i] != '`' {
			b.WriteByte(def[i])
			continue
		}
		for i+1 < len(def) && def[i+1] >= '0' && def[i+1] <= '9' {
			i++
		}
	}
	return b.String() + "<" + strings.Join(args, ",") + ">"
}

// module reads a Module's file path and its metadata, once.
func (p *Process) module(mod uint64) *moduleNames {
	if m, ok := p.modules[mod]; ok {
		return m
	}
	m := &moduleNames{}
	p.modules[mod] = m
	m.path, m.err = p.modulePath(mod)
	if m.err == nil {
		path := p.root + m.path
		if _, err := os.Stat(path); err != nil {
			path = m.path
		}
		m.opened = path
		m.defs, m.err = clrmeta.OpenTypeDefs(path)
	}
	return m
}

func (p *Process) modulePath(mod uint64) (string, error) {
	off, err := p.D.MustField("Module", "Path")
	if err != nil {
		return "", err
	}
	s, err := p.Ptr(mod + uint64(off))
	if err != nil {
		return "", fmt.Errorf("module %#x: %w", mod, err)
	}
	if s == 0 {
		return "", fmt.Errorf("module %#x has no path (loaded from memory)", mod)
	}
	var u []uint16
	for len(u) < maxPathChars {
		b, err := p.read(s+uint64(2*len(u)), 128)
		if err != nil {
			// The string may end near the end of a page: a char at a time.
			if b, err = p.read(s+uint64(2*len(u)), 2); err != nil {
				return "", fmt.Errorf("module %#x path: %w", mod, err)
			}
		}
		for i := 0; i+1 < len(b); i += 2 {
			c := binary.LittleEndian.Uint16(b[i:])
			if c == 0 {
				return string(utf16.Decode(u)), nil
			}
			u = append(u, c)
		}
	}
	return "", fmt.Errorf("module %#x: path longer than %d characters", mod, maxPathChars)
}

// Current reports whether obj is, now, the object of a sync block: its
// header holds a sync block index whose table entry points back at obj.
// An address an event gave may since have been moved or collected by a
// GC; only a current one is named.
func (p *Process) Current(obj uint64) bool {
	off := uint64(4)
	if v, ok := p.D.Globals["SyncBlockValueToObjectOffset"]; ok {
		off = v
	}
	w, err := p.U32(obj - off)
	if err != nil || w&(bitIsHashOrSyncBlockIndex|bitIsHashCode) != bitIsHashOrSyncBlockIndex {
		return false
	}
	idx := uint64(w & maskSyncBlockIndex)
	table, err := p.globalPtr("SyncTableEntries")
	if err != nil || table == 0 || idx == 0 {
		return false
	}
	esize := uint64(2 * p.D.PtrSize)
	if t, ok := p.D.Types["SyncTableEntry"]; ok && t.Size > 0 {
		esize = uint64(t.Size)
	}
	sbOff, _ := p.D.Field("SyncTableEntry", "SyncBlock")
	o, err := p.Ptr(table + idx*esize + uint64(sbOff+p.D.PtrSize))
	return err == nil && o == obj
}

// stackWindow is how much of a thread's stack is read around its topmost
// explicit Frame (a blocked thread's is the transition into the wait).
const stackWindow = 16 << 10

// stackBelow is how much below the Frame is read: the native frames of
// the wait itself (deeper, the stack holds what earlier calls left).
const stackBelow = 4 << 10

// StackRefs reports which of values appear, pointer-aligned, in the
// thread's stack near its topmost explicit Frame (Thread.Frame: the
// transition to native code a blocked thread made; the waiting frames'
// locals and spills lie around it). A lock object a thread waits for is
// there (Monitor.Enter's argument), as are those its callers hold.
func (p *Process) StackRefs(th Thread, values []uint64) map[uint64]bool {
	off, ok := p.D.Field("Thread", "Frame")
	if !ok || len(values) == 0 {
		return nil
	}
	f, err := p.Ptr(th.Addr + uint64(off))
	if err != nil || f == 0 || f == ^uint64(0) || f < stackWindow {
		return nil
	}
	want := map[uint64]bool{}
	for _, v := range values {
		want[v] = true
	}
	out := map[uint64]bool{}
	ps := uint64(p.D.PtrSize)
	// Read the window a page at a time: its ends may be unmapped.
	lo := (f - stackBelow) &^ 0xfff
	for at := lo; at < f+stackWindow; at += 0x1000 {
		b, err := p.read(at, 0x1000)
		if err != nil {
			continue
		}
		for i := uint64(0); i+ps <= uint64(len(b)); i += ps {
			var v uint64
			if ps == 4 {
				v = uint64(binary.LittleEndian.Uint32(b[i:]))
			} else {
				v = binary.LittleEndian.Uint64(b[i:])
			}
			if want[v] {
				out[v] = true
			}
		}
	}
	return out
}

// blockingBelow is how much below the Frame BlockedOn reads: the native
// frames of the wait, where the runtime keeps its ThreadBlockingInfo.
const blockingBelow = 8 << 10

// BlockedOn finds the runtime's own record of what the thread waits for:
// .NET 9+ pushes a ThreadBlockingInfo (object pointer, kind, timeout,
// next; sequential, blittable) on the waiting thread's stack, whose
// object pointer for a Monitor is its AwareLock, the start of its sync
// block. It returns the sync blocks of syncBlocks that a record with kind
// MonitorLock points at, in the stack window around the thread's topmost
// transition Frame (debuggers find the list through the thread static
// t_first; the records themselves are what is read here).
func (p *Process) BlockedOn(th Thread, syncBlocks map[uint64]bool) []uint64 {
	off, ok := p.D.Field("Thread", "Frame")
	if !ok || len(syncBlocks) == 0 || p.D.PtrSize != 8 {
		return nil
	}
	f, err := p.Ptr(th.Addr + uint64(off))
	if err != nil || f == 0 || f == ^uint64(0) || f < blockingBelow {
		return nil
	}
	lo, hi := (f-blockingBelow)&^0xfff, f+stackWindow
	var out []uint64
	for at := lo; at < hi; at += 0x1000 {
		// A page and the record's 24 bytes after it.
		b, err := p.read(at, 0x1000+24)
		if err != nil {
			if b, err = p.read(at, 0x1000); err != nil {
				continue
			}
		}
		for i := 0; i+24 <= len(b); i += 8 {
			v := binary.LittleEndian.Uint64(b[i:])
			if !syncBlocks[v] {
				continue
			}
			kind := binary.LittleEndian.Uint32(b[i+8:])
			next := binary.LittleEndian.Uint64(b[i+16:])
			// MonitorLock (0), and a next record that is none or on this
			// stack.
			if kind == 0 && (next == 0 || (next > lo && next < hi+0x100000)) && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// The managed System.Threading.Lock (Lock.cs, .NET 9 and 10): the runtime
// lays out its one reference field (_waitEvent) first, then its 4-byte
// fields in declaration order, then the 2-byte ones; its instance size
// (BaseSize, header and method table included) checks that layout.
const (
	lockOffOwner     = 16 // _owningThreadId: on CoreCLR the holder's OS thread id (0: free)
	lockOffState     = 20 // _state: bit 0 held, the waiters counted from bit 7 (WaiterCountIncrement 0x80)
	lockOffRecursion = 24 // _recursionCount: entries past the first
	lockBaseSize     = 40
	lockWaitersShift = 7
	lockTypeName     = "System.Threading.Lock"
	// blockingKindLock is ThreadBlockingInfo.ObjectKind.Lock: the record's
	// object pointer is then the stack slot holding the Lock reference.
	blockingKindLock = 2
)

// ManagedLock is a System.Threading.Lock as its fields have it now.
type ManagedLock struct {
	Object uint64
	Held   bool
	// OwnerOSTid is the holder's OS thread id (CoreCLR's Lock keeps it:
	// its OwningOSThreadId).
	OwnerOSTid uint64
	Recursion  uint32
	Waiters    uint32
}

// BlockedOnLock finds the System.Threading.Lock objects that the
// runtime's ThreadBlockingInfo records on th's stack name (kind Lock,
// pushed by Lock's slow path while the thread waits; the record's object
// pointer is the stack slot that holds the Lock), in the same window
// around the thread's topmost transition Frame as BlockedOn.
func (p *Process) BlockedOnLock(th Thread) []uint64 {
	off, ok := p.D.Field("Thread", "Frame")
	if !ok || p.D.PtrSize != 8 {
		return nil
	}
	f, err := p.Ptr(th.Addr + uint64(off))
	if err != nil || f == 0 || f == ^uint64(0) || f < blockingBelow {
		return nil
	}
	lo, hi := (f-blockingBelow)&^0xfff, f+stackWindow
	win := make([]byte, hi-lo)
	for at := lo; at < hi; at += 0x1000 {
		if b, err := p.read(at, 0x1000); err == nil {
			copy(win[at-lo:], b)
		}
	}
	var out []uint64
	for i := 0; i+24 <= len(win); i += 8 {
		slot := binary.LittleEndian.Uint64(win[i:])
		if slot < lo || slot >= lo+uint64(len(win))-8 || slot&7 != 0 || binary.LittleEndian.Uint32(win[i+8:]) != blockingKindLock {
			continue
		}
		next := binary.LittleEndian.Uint64(win[i+16:])
		if next != 0 && (next < lo || next >= hi+0x100000) {
			continue
		}
		obj := binary.LittleEndian.Uint64(win[slot-lo:])
		if obj == 0 || slices.Contains(out, obj) {
			continue
		}
		if n, err := p.TypeName(obj); err == nil && n == lockTypeName {
			out = append(out, obj)
		}
	}
	return out
}

// ReadManagedLock reads a System.Threading.Lock's holder, recursion and
// waiters, after checking that obj is one and laid out as clrspy knows.
func (p *Process) ReadManagedLock(obj uint64) (ManagedLock, error) {
	n, err := p.TypeName(obj)
	if err != nil {
		return ManagedLock{}, err
	}
	if n != lockTypeName {
		return ManagedLock{}, fmt.Errorf("object %#x is a %s, not a %s", obj, n, lockTypeName)
	}
	mt, err := p.Ptr(obj)
	if err != nil {
		return ManagedLock{}, err
	}
	if u, ok := p.D.Globals["ObjectToMethodTableUnmask"]; ok {
		mt &^= u
	}
	if bs, ok := p.D.Field("MethodTable", "BaseSize"); ok {
		if size, err := p.U32(mt + uint64(bs)); err != nil || size != lockBaseSize {
			return ManagedLock{}, fmt.Errorf("this runtime's %s is %d bytes, not the %d clrspy knows the layout of: its owner is not read", lockTypeName, size, lockBaseSize)
		}
	}
	b, err := p.read(obj+lockOffOwner, 12)
	if err != nil {
		return ManagedLock{}, err
	}
	st := binary.LittleEndian.Uint32(b[lockOffState-lockOffOwner:])
	l := ManagedLock{Object: obj, Held: st&1 != 0, Waiters: st >> lockWaitersShift}
	if l.Held {
		l.OwnerOSTid = uint64(binary.LittleEndian.Uint32(b))
		l.Recursion = binary.LittleEndian.Uint32(b[lockOffRecursion-lockOffOwner:])
	}
	return l, nil
}
