package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap are clrspy top's keys. No mouse is needed.
type KeyMap struct {
	Quit, Freeze, GCs, Locks, CPU, Sort, Filter, Help key.Binding
	// Exceptions shows the exceptions panel (x).
	Exceptions key.Binding
	// ThreadPool (t) shows the thread-pool panel (--threadpool); it is
	// in the help text, not the footer.
	ThreadPool key.Binding
	// Requests (r) shows the requests panel (--requests).
	Requests key.Binding
}

// DefaultKeyMap: q quit, space freeze, g/l/c panels, s sort, / filter,
// ? help.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Freeze: key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "freeze")),
		GCs:    key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "GCs")),
		Locks:  key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "locks")),
		CPU:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cpu")),
		Sort:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),

		Exceptions: key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "exceptions")),
		ThreadPool: key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "thread pool")),
		Requests:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "requests")),
	}
}

// ShortHelp is the footer's line (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Quit, k.Freeze, k.GCs, k.Locks, k.CPU, k.Sort, k.Filter, k.Help}
}

// FullHelp is the help screen's columns (help.KeyMap).
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Quit, k.Freeze, k.Help}, {k.GCs, k.Locks, k.CPU, k.Exceptions, k.Requests}, {k.Sort, k.Filter}}
}

// matches reports whether k is one of b's keys. The space bar arrives as
// its own key type, named " " by key.Matches's String.
func matches(k tea.KeyMsg, b key.Binding) bool { return key.Matches(k, b) }
