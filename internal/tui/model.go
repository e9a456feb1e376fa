package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/clrspy/clrspy/internal/monitor"
)

// Options configures a Model.
type Options struct {
	// Info and Warn are clrspy gc's thresholds: pauses from Info are
	// colored as Info, from Warn as Warn (0: 10 ms and 100 ms).
	Info, Warn time.Duration
	// SlowSuspend marks suspensions (time to stop the threads) longer
	// than it (0: 5 ms).
	SlowSuspend time.Duration
	// Locks and CPU say the session collects lock contention and CPU
	// samples (their panels say how to turn them on otherwise).
	Locks, CPU bool
	// Exceptions says the session collects exceptions with their stacks
	// (the x panel).
	Exceptions bool
	// ThreadPool says the session follows the thread pool (the t panel
	// and the starvation banner).
	ThreadPool bool
	// Requests says the session follows ASP.NET Core's requests (the r
	// panel).
	Requests bool
	// Refresh is the time between two Update calls: the timeline's period
	// (0: 1 s).
	Refresh time.Duration
	// Notes are shown under the header (the launched program's output
	// is discarded, ...).
	Notes []string
	// Location is the time zone of the table's clock times (nil: UTC).
	Location *time.Location
	// Renderer colors the frame for its output (nil: no color, as for a
	// file).
	Renderer *lipgloss.Renderer
}

func (c *Options) info() time.Duration        { return defDur(c.Info, 10*time.Millisecond) }
func (c *Options) warn() time.Duration        { return defDur(c.Warn, 100*time.Millisecond) }
func (c *Options) slowSuspend() time.Duration { return defDur(c.SlowSuspend, 5*time.Millisecond) }
func (c *Options) refresh() time.Duration     { return defDur(c.Refresh, time.Second) }
func (c *Options) location() *time.Location {
	if c.Location == nil {
		return time.UTC
	}
	return c.Location
}

func defDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Panel is the main area's content.
type Panel uint8

// Panels.
const (
	PanelGCs Panel = iota
	PanelLocks
	PanelCPU
	PanelExceptions
	PanelThreadPool
	PanelRequests
)

func (p Panel) String() string {
	switch p {
	case PanelLocks:
		return "locks"
	case PanelCPU:
		return "cpu"
	case PanelExceptions:
		return "exceptions"
	case PanelThreadPool:
		return "threadpool"
	case PanelRequests:
		return "requests"
	}
	return "gcs"
}

// Sort is the GC table's order.
type Sort uint8

// Sorts, in the order the s key cycles through them.
const (
	SortTime       Sort = iota // newest first
	SortPause                  // longest first
	SortGeneration             // highest generation first, then newest
)

func (s Sort) String() string {
	switch s {
	case SortPause:
		return "pause"
	case SortGeneration:
		return "generation"
	}
	return "time"
}

// maxFilter bounds the filter's length.
const maxFilter = 40

// historyKeep bounds the timeline's samples (five minutes at 1 s).
const historyKeep = 300

// Model is the view model of clrspy top: the latest snapshot, the
// timeline so far, and the state the keys change (panel, sort, filter,
// frozen, help). It does no I/O and reads no clock: the same snapshots,
// keys and size render the same frame.
type Model struct {
	cfg  Options
	st   styles
	keys KeyMap
	help help.Model
	// input is the filter being typed (editing).
	input  []rune
	width  int
	height int

	panel   Panel
	sort    Sort
	filter  string
	editing bool
	showHlp bool
	notes   []string

	latest *monitor.Snapshot
	hist   []sample
	// When frozen, the frame shows these; Update goes on filling latest
	// and hist.
	frozen     bool
	frozenSnap *monitor.Snapshot
	frozenHist []sample
	// mem is the memory line (SetMemory; nil: none); frozenMem the one
	// shown while frozen.
	mem, frozenMem *Memory
}

// New returns a Model of 80x24 with no snapshot yet.
func New(cfg Options) *Model {
	r := cfg.Renderer
	if r == nil {
		r = lipgloss.NewRenderer(nil)
		r.SetColorProfile(termenv.Ascii)
	}
	m := &Model{cfg: cfg, st: newStyles(r), keys: DefaultKeyMap(), width: 80, height: 24,
		notes: append([]string(nil), cfg.Notes...)}
	m.help = help.New()
	m.help.Styles = help.Styles{
		ShortKey: m.st.key, ShortDesc: m.st.dim, ShortSeparator: m.st.dim, Ellipsis: m.st.dim,
		FullKey: m.st.key, FullDesc: m.st.plain, FullSeparator: m.st.dim,
	}
	m.help.ShortSeparator = "  "
	return m
}

// SetSize sets the terminal's size in cells.
func (m *Model) SetSize(w, h int) { m.width, m.height = max(w, 1), max(h, 1) }

// Size is the terminal's size the frame is laid out for.
func (m *Model) Size() (w, h int) { return m.width, m.height }

// AddNote shows one more note under the header (a notice from the
// session).
func (m *Model) AddNote(n string) { m.notes = append(m.notes, n) }

// Update takes the snapshot of one refresh. Call it once per
// Options.Refresh: each call is one timeline sample.
func (m *Model) Update(s *monitor.Snapshot) {
	m.latest = s
	sm := sampleOf(s)
	if n := len(m.hist); n > 0 && sm.at < m.hist[n-1].at {
		sm.at = m.hist[n-1].at
	}
	if len(m.hist) == historyKeep {
		copy(m.hist, m.hist[1:])
		m.hist = m.hist[:historyKeep-1]
	}
	m.hist = append(m.hist, sm)
}

// Frozen reports whether the display is frozen.
func (m *Model) Frozen() bool { return m.frozen }

// Panel is the panel shown.
func (m *Model) Panel() Panel { return m.panel }

// SortOrder is the GC table's order.
func (m *Model) SortOrder() Sort { return m.sort }

// Filter is the GC table's filter ("" for none).
func (m *Model) Filter() string { return m.filter }

// SetFilter sets the GC table's filter.
func (m *Model) SetFilter(f string) { m.filter = f }

// Editing reports whether the filter is being typed (keys go to it).
func (m *Model) Editing() bool { return m.editing }

// HandleKey applies one key press and reports whether it asks to quit.
func (m *Model) HandleKey(k tea.KeyMsg) (quit bool) {
	if m.editing {
		// A one-line editor: typing appends, backspace deletes, ctrl+u
		// clears, enter applies, esc cancels.
		switch k.Type {
		case tea.KeyEnter:
			m.filter = strings.TrimSpace(string(m.input))
			m.editing = false
		case tea.KeyEsc:
			m.editing = false
		case tea.KeyCtrlC:
			return true
		case tea.KeyBackspace:
			if n := len(m.input); n > 0 {
				m.input = m.input[:n-1]
			}
		case tea.KeyCtrlU:
			m.input = m.input[:0]
		case tea.KeySpace:
			m.input = append(m.input, ' ')
		case tea.KeyRunes:
			if !k.Paste && len(m.input)+len(k.Runes) <= maxFilter {
				m.input = append(m.input, k.Runes...)
			}
		}
		return false
	}
	switch {
	case matches(k, m.keys.Quit):
		return true
	case matches(k, m.keys.Help):
		m.showHlp = !m.showHlp
	case k.Type == tea.KeyEsc:
		if m.showHlp {
			m.showHlp = false
		} else {
			m.filter = ""
		}
	case matches(k, m.keys.Freeze):
		m.setFrozen(!m.frozen)
	case matches(k, m.keys.GCs):
		m.panel = PanelGCs
	case matches(k, m.keys.Locks):
		m.panel = PanelLocks
	case matches(k, m.keys.CPU):
		m.panel = PanelCPU
	case matches(k, m.keys.Exceptions):
		m.panel = PanelExceptions
	case matches(k, m.keys.ThreadPool):
		m.panel = PanelThreadPool
	case matches(k, m.keys.Requests):
		m.panel = PanelRequests
	case matches(k, m.keys.Sort):
		m.sort = (m.sort + 1) % 3
	case matches(k, m.keys.Filter):
		m.editing = true
		m.showHlp = false
		m.input = append(m.input[:0], []rune(m.filter)...)
	}
	return false
}

func (m *Model) setFrozen(f bool) {
	m.frozen = f
	if f {
		m.frozenSnap = m.latest
		m.frozenHist = append([]sample(nil), m.hist...)
		m.frozenMem = m.mem
	} else {
		m.frozenSnap, m.frozenHist, m.frozenMem = nil, nil, nil
	}
}

// shown is the snapshot and timeline the frame shows.
func (m *Model) shown() (*monitor.Snapshot, []sample) {
	if m.frozen {
		return m.frozenSnap, m.frozenHist
	}
	return m.latest, m.hist
}

// View renders the frame: exactly Size()'s height in lines (or fewer),
// none wider than its width.
func (m *Model) View() string {
	s, h := m.shown()
	_, lines := m.frame(s, h, m.frozen)
	return clip(lines, m.width, m.height)
}

// Screen is the data of the frame View shows (nil before the first
// Update).
func (m *Model) Screen() *Screen {
	s, h := m.shown()
	if s == nil {
		return nil
	}
	sc, _ := m.frame(s, h, m.frozen)
	return sc
}

// LiveScreen is the data of the frame the latest snapshot makes, frozen
// or not (what --snapshot-every writes: collection goes on while the
// display is frozen). Nil before the first Update.
func (m *Model) LiveScreen() *Screen {
	if m.latest == nil {
		return nil
	}
	sc, _ := m.frame(m.latest, m.hist, m.frozen)
	return sc
}
