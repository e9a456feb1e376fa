package top

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/tui"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/source"
)

// Options is one clrspy top session.
type Options struct {
	// Stream is the opened target; Monitor was made for its header. Run
	// reads the stream into the monitor and closes it (but for a launched
	// program that still runs when the user quits: closing waits for the
	// program's exit, and the target keeps running).
	Stream  *source.Stream
	Monitor *monitor.Monitor
	// View configures the frame; View.Refresh is set from Refresh.
	View tui.Options
	// Refresh is how often the screen takes a snapshot (0: 1 s).
	Refresh time.Duration
	// SnapshotEvery appends the screen's data (tui.Screen) to SnapshotOut
	// as one JSON line this often (0: never), and once more at the end.
	SnapshotEvery time.Duration
	SnapshotOut   io.Writer
	// Input and Output are the terminal (nil: standard input, or the
	// controlling terminal when standard input is not one; standard
	// output).
	Input  io.Reader
	Output io.Writer
	// Notes collects notices that arrive while the screen is up (the
	// session's Spec.Notice); they are shown under the header.
	Notes *Notes
	// StopTimeout bounds the wait for the session's end once the user
	// quit (the runtime's rundown; 0: 10 s). Past it the session is
	// dropped.
	StopTimeout time.Duration
	// Memory reads the target's memory split and cgroup (the header's
	// memory line; nil: no line), every MemoryEvery (0: 2 s) on a
	// goroutine of its own while the session runs. An error leaves the
	// last line.
	Memory      func() (*memory.Split, *procfs.CgroupMemory, error)
	MemoryEvery time.Duration
	// ProgramOptions are passed to bubbletea after clrspy top's own
	// (tests: tea.WithoutSignals, tea.WithoutRenderer).
	ProgramOptions []tea.ProgramOption
}

func (c *Options) refresh() time.Duration {
	if c.Refresh <= 0 {
		return time.Second
	}
	return c.Refresh
}

// Result is how a session ended.
type Result struct {
	// End describes the stream's end; Err is its read error, if any.
	End analysis.End
	Err error
	// Quit: the user quit (q, Ctrl-C, SIGINT, SIGTERM) rather than the
	// stream ending first.
	Quit bool
	// TargetRunning: a launched program still runs (the user quit before
	// it exited); clrspy leaves it running.
	TargetRunning bool
	// ExitCode is a launched program's status once it exited (-1 while it
	// runs; 0 for other streams).
	ExitCode int
	// SnapshotErr is the first error writing SnapshotOut (writing stops).
	SnapshotErr error
	// Frames counts the frames the terminal received (View calls).
	Frames int
}

// Notes is a list of notices, safe for concurrent use.
type Notes struct {
	mu   sync.Mutex
	list []string
	read int
}

// Add records a notice (a source.Spec.Notice).
func (n *Notes) Add(s string) {
	n.mu.Lock()
	n.list = append(n.list, s)
	n.mu.Unlock()
}

// All returns every notice so far.
func (n *Notes) All() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.list...)
}

// unread returns the notices not returned before.
func (n *Notes) unread() []string {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.list[n.read:]
	n.read = len(n.list)
	return append([]string(nil), out...)
}

type (
	refreshMsg  struct{}
	snapshotMsg struct{}
	endedMsg    struct{}
)

// app is the bubbletea model: it owns the view model and takes a
// snapshot of the monitor at each refresh.
type app struct {
	cfg    *Options
	view   *tui.Model
	ended  bool
	frames int
	snapW  io.Writer
	snapEr error
	line   []byte

	// The latest memory reading (Options.Memory), set by its goroutine.
	memMu sync.Mutex
	memSS []memory.Sample // the last memoryReadings, oldest first
	memCg *procfs.CgroupMemory
}

// memoryReadings is how many memory readings the line judges the growth
// over: a minute at the default 2 s.
const memoryReadings = 30

// readMemory takes a memory reading every MemoryEvery until ctx ends.
func (a *app) readMemory(ctx context.Context) {
	every := a.cfg.MemoryEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	tk := time.NewTicker(every)
	defer tk.Stop()
	start := time.Now()
	for {
		if sp, cg, err := a.cfg.Memory(); err == nil && sp != nil {
			s := memory.Sample{AtNs: int64(time.Since(start)), Split: *sp}
			if cg != nil {
				s.CgroupUsage = cg.Usage
			}
			a.memMu.Lock()
			if len(a.memSS) == memoryReadings {
				a.memSS = append(a.memSS[:0], a.memSS[1:]...)
			}
			a.memSS, a.memCg = append(a.memSS, s), cg
			a.memMu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

func (a *app) Init() tea.Cmd {
	cmds := []tea.Cmd{func() tea.Msg { return refreshMsg{} }}
	if a.snapW != nil {
		cmds = append(cmds, a.snapshotTick())
	}
	return tea.Batch(cmds...)
}

func (a *app) refreshTick() tea.Cmd {
	return tea.Tick(a.cfg.refresh(), func(time.Time) tea.Msg { return refreshMsg{} })
}

func (a *app) snapshotTick() tea.Cmd {
	return tea.Tick(a.cfg.SnapshotEvery, func(time.Time) tea.Msg { return snapshotMsg{} })
}

func (a *app) refresh() {
	for _, n := range a.cfg.Notes.unread() {
		a.view.AddNote(n)
	}
	a.memMu.Lock()
	if len(a.memSS) > 0 {
		a.view.SetMemory(a.memSS, a.memCg)
	}
	a.memMu.Unlock()
	a.view.Update(a.cfg.Monitor.Snapshot())
}

func (a *app) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.view.SetSize(msg.Width, msg.Height)
	case tea.KeyMsg:
		if a.view.HandleKey(msg) {
			return a, tea.Quit
		}
	case refreshMsg:
		if a.ended {
			return a, nil
		}
		a.refresh()
		return a, a.refreshTick()
	case endedMsg:
		// The stream's end: one last snapshot (the session's state, a
		// launched program's status), then the frame stays until q.
		a.ended = true
		a.refresh()
		a.writeSnapshot()
	case snapshotMsg:
		if a.ended {
			return a, nil
		}
		a.writeSnapshot()
		return a, a.snapshotTick()
	}
	return a, nil
}

func (a *app) View() string {
	a.frames++
	return a.view.View()
}

// writeSnapshot appends the screen's data as one JSON line.
func (a *app) writeSnapshot() {
	if a.snapW == nil || a.snapEr != nil {
		return
	}
	sc := a.view.LiveScreen()
	if sc == nil {
		return
	}
	b, err := json.Marshal(sc)
	if err == nil {
		a.line = append(append(a.line[:0], b...), '\n')
		_, err = a.snapW.Write(a.line)
	}
	if err != nil {
		a.snapEr = fmt.Errorf("writing snapshots: %w", err)
		a.view.AddNote(a.snapEr.Error() + " (no more are written)")
	}
}

type readResult struct {
	end analysis.End
	err error
}

// Run shows the live screen until the user quits, reading the stream
// into the monitor meanwhile. When the target exits, the last frame stays
// (with the exit status) until the user quits. Quitting stops the session
// cleanly (the runtime's rundown is read) and leaves the target running.
func Run(ctx context.Context, cfg Options) (Result, error) {
	if cfg.Stream == nil || cfg.Monitor == nil {
		return Result{}, errors.New("top: no stream or monitor")
	}
	if cfg.SnapshotEvery > 0 && cfg.SnapshotOut == nil {
		return Result{}, errors.New("top: snapshots need a writer")
	}
	cfg.View.Refresh = cfg.refresh()
	a := &app{cfg: &cfg, view: tui.New(cfg.View)}
	if cfg.SnapshotEvery > 0 {
		a.snapW = cfg.SnapshotOut
	}
	opts := []tea.ProgramOption{tea.WithAltScreen(), tea.WithFPS(20)}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if cfg.Output != nil {
		opts = append(opts, tea.WithOutput(cfg.Output))
	}
	opts = append(opts, cfg.ProgramOptions...)
	p := tea.NewProgram(a, opts...)

	s, mon := cfg.Stream, cfg.Monitor
	sessCtx, stop := context.WithCancel(ctx)
	defer stop()
	if cfg.Memory != nil {
		go a.readMemory(sessCtx)
	}
	done := make(chan readResult, 1)
	go func() {
		end, err := mon.Run(sessCtx, s)
		if end.TargetExited && s.Kind == source.Launch {
			// The program is gone: Close reaps it and gives its status.
			s.Close()
			mon.SetExitCode(s.ExitCode())
		}
		done <- readResult{end, err}
		p.Send(endedMsg{})
	}()

	_, perr := p.Run()
	var res Result
	var rr readResult
	select {
	case rr = <-done:
	default:
		// The user quit first: stop the session and read to its end.
		res.Quit = true
		stop()
		timeout := cfg.StopTimeout
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		select {
		case rr = <-done:
		case <-time.After(timeout):
			if sess := s.Session(); sess != nil {
				sess.Close()
			}
			rr = <-done
			if rr.err == nil {
				rr.err = fmt.Errorf("the session did not end within %v of the stop: dropped", timeout)
			}
		}
	}
	if !a.ended {
		// The program loop is over: the view is this goroutine's now. The
		// snapshot file ends with the stopped session's figures.
		a.ended = true
		a.refresh()
		a.writeSnapshot()
	}
	res.End, res.Err, res.Frames, res.SnapshotErr = rr.end, rr.err, a.frames, a.snapEr
	res.ExitCode = s.ExitCode()
	if s.Kind == source.Launch && !rr.end.TargetExited {
		// Closing would wait for the program: it runs on, on its own.
		res.TargetRunning = true
	} else {
		s.Close()
		res.ExitCode = s.ExitCode()
	}
	if perr != nil && !errors.Is(perr, tea.ErrInterrupted) {
		return res, fmt.Errorf("terminal: %w", perr)
	}
	return res, nil
}
