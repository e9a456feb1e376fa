package symtab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/unwind"
)

// Kind classifies the code at an address.
type Kind uint8

// Kinds of code.
const (
	KindNone   Kind = iota // no executable mapping covers the address
	KindNative             // an ELF file (a shared library or the executable)
	KindImage              // a managed image mapped from a file (ReadyToRun code)
	KindAnon               // anonymous executable memory: JIT'd code and runtime stubs
	KindVDSO               // [vdso] and other kernel-provided code pages
)

// Sym is what Process.Symbolize says about an address.
type Sym struct {
	Name   string // function name (in a managed image, the ReadyToRun method's Namespace.Type.Method); "" when unknown
	Module string // base name of the file ("libc.so.6"), "" for anonymous memory
	Kind   Kind
	Offset uint64 // the address in the file's own address space (ELF vaddr), or the file offset for images
}

// Map is one line of /proc/PID/maps (package procfs parses them).
type Map = procfs.Mapping

// mapping is a Map with the file behind it resolved on first use.
type mapping struct {
	Map
	file   *File
	bias   uint64
	img    *image // a managed image's file (ReadyToRun code), when file is nil
	loaded bool
}

// image is a managed module file mapped for its ReadyToRun code: held
// open from the mapping's first use (the profile may be named after the
// process and its /proc/PID/root are gone), its method map read on the
// first address that needs it.
type image struct {
	f      *os.File
	size   int64
	r2r    *clrmeta.R2RMethods
	parsed bool
}

// method names the ReadyToRun method at file offset off.
func (im *image) method(off uint64) (string, bool) {
	if !im.parsed {
		im.parsed = true
		if r, err := clrmeta.ReadR2RMethods(im.f, im.size); err == nil {
			im.r2r = r
		}
		im.f.Close()
		im.f = nil
	}
	if im.r2r == nil {
		return "", false
	}
	return im.r2r.LookupFileOffset(off)
}

// isImage reports whether path names a managed module file.
func isImage(path string) bool {
	return strings.HasSuffix(path, ".dll") || strings.HasSuffix(path, ".exe") || strings.HasSuffix(path, ".r2r")
}

// Process is the address space of one live process.
type Process struct {
	Pid  int
	root string

	maps    []*mapping // current, sorted by start
	retired []*mapping // mappings seen earlier and gone since (symbolization only)
	files   map[string]*File
	images  map[string]*image

	perfMaps []string // where the perf map may be, decided at NewProcess
	// perfMapFile is the perf map, held open once found: it stays
	// readable after the process (and a private /tmp with it) is gone.
	perfMapFile *os.File

	lastRefresh time.Time
	// MinRefresh bounds how often a miss in Find re-reads /proc/PID/maps.
	MinRefresh time.Duration
	refreshes  int
	openErrs   map[string]error
}

// NewProcess reads pid's mappings.
func NewProcess(pid int) (*Process, error) {
	p := &Process{
		Pid: pid, root: procfs.Root(pid),
		files: make(map[string]*File), images: make(map[string]*image), openErrs: make(map[string]error),
		MinRefresh: 200 * time.Millisecond,
	}
	if err := p.Refresh(); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("perf-%d.map", NSPid(pid))
	p.perfMaps = []string{filepath.Join(p.root, "tmp", name)}
	if sameMountNS(pid) {
		// After the process exits /proc/PID/root is gone, the file is not.
		p.perfMaps = append(p.perfMaps, filepath.Join("/tmp", name))
	}
	p.openPerfMap()
	return p, nil
}

// openPerfMap opens the perf map if it exists and is not open yet.
func (p *Process) openPerfMap() {
	if p.perfMapFile != nil || len(p.perfMaps) == 0 {
		return
	}
	if f, err := procfs.OpenRegular(p.perfMaps[0], 0); err == nil {
		p.perfMapFile = f
	}
}

// Close releases the perf map and the image files held open.
func (p *Process) Close() error {
	for _, im := range p.images {
		if im != nil && im.f != nil {
			im.f.Close()
			im.f = nil
		}
	}
	if p.perfMapFile == nil {
		return nil
	}
	err := p.perfMapFile.Close()
	p.perfMapFile = nil
	return err
}

// sameMountNS reports whether pid sees the same file system as we do.
func sameMountNS(pid int) bool {
	a := procfs.Namespace(procfs.Self, "mnt")
	return a != "" && a == procfs.Namespace(pid, "mnt")
}

// Refresh re-reads /proc/PID/maps. Mappings that disappeared are kept for
// naming addresses sampled while they existed.
func (p *Process) Refresh() error {
	p.lastRefresh = time.Now()
	p.refreshes++
	p.openPerfMap()
	b, err := procfs.MapsText(p.Pid)
	if err != nil {
		return err
	}
	old := make(map[Map]*mapping, len(p.maps))
	for _, m := range p.maps {
		old[m.Map] = m
	}
	var cur []*mapping
	for _, m := range procfs.ParseMaps(b) {
		if !m.Exec() {
			continue
		}
		if o := old[m]; o != nil {
			cur = append(cur, o)
			delete(old, m)
			continue
		}
		cur = append(cur, &mapping{Map: m})
	}
	for _, o := range old {
		p.retired = append(p.retired, o)
	}
	sort.Slice(cur, func(i, j int) bool { return cur[i].Start < cur[j].Start })
	p.maps = cur
	return nil
}

// Refreshes counts reads of /proc/PID/maps.
func (p *Process) Refreshes() int { return p.refreshes }

func find(ms []*mapping, addr uint64) *mapping {
	i := sort.Search(len(ms), func(i int) bool { return ms[i].Start > addr }) - 1
	if i >= 0 && addr < ms[i].End {
		return ms[i]
	}
	return nil
}

// lookup finds the current mapping of addr, re-reading the maps (at most
// every MinRefresh) when none covers it.
func (p *Process) lookup(addr uint64) *mapping {
	if m := find(p.maps, addr); m != nil {
		return m
	}
	if time.Since(p.lastRefresh) >= p.MinRefresh {
		if p.Refresh() == nil {
			return find(p.maps, addr)
		}
	}
	return nil
}

// load resolves the file behind m once.
func (p *Process) load(m *mapping) {
	if m.loaded {
		return
	}
	m.loaded = true
	if !m.FileBacked() {
		return
	}
	key := m.Path + "\x00" + strconv.FormatUint(m.Inode, 10)
	f, ok := p.files[key]
	if !ok {
		var err error
		f, err = openFile(m.Path, filepath.Join(p.root, m.Path), p.root)
		if err != nil {
			// Not readable through the target's root (no access to
			// /proc/PID/root): the same path in our namespace, if it is
			// the same file.
			if st, serr := os.Stat(m.Path); serr == nil && inode(st) == m.Inode {
				f, err = openFile(m.Path, m.Path, "")
			}
		}
		if err != nil {
			p.openErrs[m.Path] = err
			f = nil
		} else {
			// Read the symbols now, while /proc/PID/root still exists:
			// the profile is named after the process may have exited.
			f.loadSymbols()
		}
		p.files[key] = f
	}
	if f == nil {
		if isImage(m.Path) {
			m.img = p.openImage(key, m.Path, m.Inode)
		}
		return
	}
	if bias, ok := f.Bias(m.Start, m.Offset); ok {
		m.file, m.bias = f, bias
	}
}

// openImage opens a managed module file once per path and inode (through
// the target's root, else the same file in our namespace); nil when it
// cannot be read.
func (p *Process) openImage(key, path string, ino uint64) *image {
	if im, ok := p.images[key]; ok {
		return im
	}
	var im *image
	fh, err := procfs.OpenRegular(filepath.Join(p.root, path), 0)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && inode(st) == ino {
			fh, err = procfs.OpenRegular(path, 0)
		}
	}
	if err == nil {
		if st, serr := fh.Stat(); serr == nil {
			im = &image{f: fh, size: st.Size()}
		} else {
			fh.Close()
		}
	}
	p.images[key] = im
	return im
}

// LoadAll reads the files of every executable mapping now (symbols and
// CFI), so that the first samples in each do not wait for them.
func (p *Process) LoadAll() {
	for _, m := range p.maps {
		p.load(m)
		if m.file != nil {
			m.file.CFI()
		}
	}
}

// Find implements unwind.Finder: the CFI of the file mapped at pc, or nil
// for anonymous code (JIT'd code: frame pointers).
func (p *Process) Find(pc uint64) (*unwind.Table, uint64, bool) {
	m := p.lookup(pc)
	if m == nil {
		return nil, 0, false
	}
	p.load(m)
	if m.file == nil {
		return nil, 0, true
	}
	return m.file.CFI(), m.bias, true
}

// Symbolize names addr: the ELF symbol covering it, or in a managed
// image the ReadyToRun method whose code holds it (Name "" when none),
// with its module and offset, or the kind of anonymous memory it is in. Addresses of mappings
// that are gone are found among the retired ones.
func (p *Process) Symbolize(addr uint64) Sym {
	m := find(p.maps, addr)
	if m == nil {
		for i := len(p.retired) - 1; i >= 0; i-- {
			if r := p.retired[i]; addr >= r.Start && addr < r.End {
				m = r
				break
			}
		}
	}
	if m == nil {
		return Sym{Kind: KindNone}
	}
	if strings.HasPrefix(m.Path, "[") {
		return Sym{Name: m.Path, Module: m.Path, Kind: KindVDSO}
	}
	if !m.FileBacked() {
		return Sym{Kind: KindAnon}
	}
	p.load(m)
	base := filepath.Base(m.Path)
	if m.file == nil {
		off := addr - m.Start + m.Offset
		var name string
		if m.img != nil {
			name, _ = m.img.method(off)
		}
		return Sym{Name: name, Module: base, Kind: KindImage, Offset: off}
	}
	va := addr - m.bias
	name, _ := m.file.Symbol(va)
	return Sym{Name: name, Module: base, Kind: KindNative, Offset: va}
}

// Files lists the ELF files loaded so far with where their symbols came
// from (for diagnostics).
func (p *Process) Files() []*File {
	var out []*File
	for _, f := range p.files {
		if f != nil {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// NSPid is pid as the target's own pid namespace numbers it (the number
// in its perf map's name), from the NSpid line of /proc/PID/status.
func NSPid(pid int) int {
	n, _ := procfs.NSpid(pid)
	return n
}

// PerfMapPath is where the runtime of the process writes its perf map,
// seen through the target's root.
func (p *Process) PerfMapPath() string { return p.perfMaps[0] }

// ReadPerfMap reads the target's perf map; nil when there is none.
func (p *Process) ReadPerfMap() *PerfMap {
	p.openPerfMap()
	if f := p.perfMapFile; f != nil {
		if b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62)); err == nil {
			return ParsePerfMap(b)
		}
	}
	for _, path := range p.perfMaps[1:] {
		if f, err := procfs.OpenRegular(path, 0); err == nil {
			b, err := io.ReadAll(f)
			f.Close()
			if err == nil {
				return ParsePerfMap(b)
			}
		}
	}
	return nil
}
