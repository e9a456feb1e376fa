package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/hang"
)

// StacksDocument is `clrspy stacks --json`: the envelope, then every
// thread, the groups of identical stacks and the deadlocks found.
type StacksDocument struct {
	Input
	Pid int `json:"pid"`
	// SampleMs is how long the sample profiler ran; WatchMs the --watch
	// session's length (0: none).
	SampleMs float64 `json:"sample_ms"`
	WatchMs  float64 `json:"watch_ms"`
	*hang.Result
}

// WriteStacksJSON writes d as indented JSON.
func WriteStacksJSON(w io.Writer, d *StacksDocument) error {
	return writeJSON(w, d, false)
}

// stackFrames is how many frames of a group the text shows.
const stackFrames = 12

// WriteStacksText writes the report for people: the deadlocks first, then
// the count of threads per wait, then each group of threads with the same
// stack (newest frame first), then the threads without managed frames.
func WriteStacksText(w io.Writer, d *StacksDocument) error {
	var b strings.Builder
	if l := d.PartialLine(); l != "" {
		b.WriteString(l + "\n")
	}
	r := d.Result
	fmt.Fprintf(&b, "%s: %d threads, %d with managed stacks", d.Source, len(r.Threads), r.Sampled)
	if d.WatchMs > 0 {
		fmt.Fprintf(&b, "; watched %.0f ms", d.WatchMs)
	}
	if p := r.TargetPaused; p.Count > 0 {
		what := "cost to the target: paused"
		if !d.Live {
			what = "the runtime's suspensions in the trace:"
		}
		fmt.Fprintf(&b, "\n%s %d times, %.1f ms in all (longest %.2f ms)", what, p.Count, p.TotalMs, p.MaxMs)
	}
	b.WriteString("\n")
	kinds := make([]string, 0, len(r.ByWaitKind))
	for k := range r.ByWaitKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.ByWaitKind[k]))
	}
	fmt.Fprintf(&b, "waits: %s\n", strings.Join(parts, ", "))
	byTid := map[uint64]*hang.Thread{}
	for i := range r.Threads {
		byTid[r.Threads[i].OSTid] = &r.Threads[i]
	}
	for _, dl := range r.Deadlocks {
		if dl.Suspected {
			fmt.Fprintf(&b, "\nSUSPECTED DEADLOCK: threads %s\n", tidList(dl.Threads))
			wrap(&b, "  ", "  ", dl.Reason)
		} else {
			fmt.Fprintf(&b, "\nDEADLOCK: threads %s\n", tidList(dl.Threads))
			if dl.Source == hang.SourceMemory {
				wrap(&b, "  ", "  ", dl.Reason)
			}
		}
		for _, l := range dl.Locks {
			switch {
			case l.OwnerOSTid != nil && l.LockID == 0 && l.WaitingMs == 0:
				// Read from memory: no event timed the wait or named the lock.
				fmt.Fprintf(&b, "  thread %s waits for the lock of %s,\n    object %s, held by thread %s\n",
					threadLabel(byTid, l.WaiterOSTid), typeOrUnknown(l.ObjectType), l.Object, threadLabel(byTid, *l.OwnerOSTid))
			case l.OwnerOSTid != nil:
				typ := ""
				if l.ObjectType != "" {
					typ = " of type " + l.ObjectType
				}
				fmt.Fprintf(&b, "  thread %s waits %.0f ms for lock %#x (object %s%s),\n    held by thread %s\n",
					threadLabel(byTid, l.WaiterOSTid), l.WaitingMs, l.LockID, l.Object, typ, threadLabel(byTid, *l.OwnerOSTid))
			default:
				fmt.Fprintf(&b, "  thread %s blocked (owner unknown)\n", threadLabel(byTid, l.WaiterOSTid))
			}
			writeFrames(&b, l.Frames, "      ")
		}
	}
	for _, c := range r.HangChains {
		kind := "running"
		if c.RootWait != nil {
			kind = c.RootWait.Kind
		}
		fmt.Fprintf(&b, "\nHANG CHAIN: threads %s wait, through lock owners, on thread %s (%s)\n",
			tidList(c.Waiters), threadLabel(byTid, c.Root), kind)
	}
	for _, g := range r.Groups {
		head := fmt.Sprintf("%d thread%s, %s", g.Count, plural(g.Count), g.WaitKind)
		if g.AppFrame != "" {
			// The application's frame first: what its code was doing.
			app, _, _ := strings.Cut(g.AppFrame, "(")
			head += " in " + app
		}
		head = clip(head, 60) + ": "
		fmt.Fprintf(&b, "\n%s%s\n", head, tidListN(g.Threads, 100-len(head)))
		if t := byTid[g.Threads[0]]; t != nil {
			writeNativeTop(&b, t, "    ")
		}
		writeFrames(&b, g.Frames, "    ")
	}
	var bare []string
	for _, t := range r.Threads {
		if len(t.Frames) > 0 {
			continue
		}
		k := "running"
		if t.Wait != nil {
			k = t.Wait.Kind
		}
		s := fmt.Sprintf("%d %q %s %s", t.OSTid, t.Name, t.State, k)
		if t.Syscall != "" {
			s += " in " + t.Syscall
		}
		var user []string
		for _, f := range t.MixedFrames {
			if !strings.HasSuffix(f, kernelSuffix) && len(user) < 4 {
				user = append(user, f)
			}
		}
		if len(user) > 0 {
			s += "\n        at " + clip(strings.Join(user, " < "), 100-11)
		}
		bare = append(bare, s)
	}
	if len(bare) > 0 {
		fmt.Fprintf(&b, "\nno managed frames (%d):\n", len(bare))
		for _, s := range bare {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	for _, n := range r.Notes {
		wrap(&b, "note: ", "  ", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kernelSuffix marks the kernel's frames in a thread's mixed stack.
const kernelSuffix = " [kernel]"

// writeNativeTop writes the frames of t's mixed stack above its managed
// ones: its kernel frames on one line (innermost first), then each native
// frame.
func writeNativeTop(b *strings.Builder, t *hang.Thread, indent string) {
	if len(t.MixedFrames) == 0 || len(t.Frames) == 0 {
		return
	}
	top := t.MixedFrames
	if i := slices.Index(t.MixedFrames, t.Frames[0]); i >= 0 {
		top = t.MixedFrames[:i]
	}
	var kernel []string
	n := 0
	for _, f := range top {
		if k, ok := strings.CutSuffix(f, kernelSuffix); ok {
			kernel = append(kernel, k)
			continue
		}
		if n == stackFrames {
			fmt.Fprintf(b, "%s... native frames\n", indent)
			break
		}
		if len(kernel) > 0 {
			fmt.Fprintf(b, "%s%s\n", indent, clip("[kernel] "+strings.Join(kernel, " < "), 100-len(indent)))
			kernel = nil
		}
		fmt.Fprintf(b, "%s%s\n", indent, clip(f, 100-len(indent)))
		n++
	}
	if len(kernel) > 0 {
		fmt.Fprintf(b, "%s%s\n", indent, clip("[kernel] "+strings.Join(kernel, " < "), 100-len(indent)))
	}
}

func typeOrUnknown(t string) string {
	if t == "" {
		return "an object of unknown type"
	}
	return t
}

func writeFrames(b *strings.Builder, frames []string, indent string) {
	for i, f := range frames {
		if i == stackFrames {
			fmt.Fprintf(b, "%s... %d more\n", indent, len(frames)-i)
			break
		}
		fmt.Fprintf(b, "%s%s\n", indent, clip(f, 100-len(indent)))
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func tidList(ts []uint64) string { return tidListN(ts, 100) }

// tidListN lists at most 8 of ts, and as many as fit in width columns,
// then "+N" for the others.
func tidListN(ts []uint64, width int) string {
	var s string
	for n := min(8, len(ts)); n >= 1; n-- {
		parts := make([]string, 0, n+1)
		for _, t := range ts[:n] {
			parts = append(parts, fmt.Sprint(t))
		}
		if n < len(ts) {
			parts = append(parts, fmt.Sprintf("+%d", len(ts)-n))
		}
		if s = strings.Join(parts, " "); len(s) <= width {
			break
		}
	}
	return s
}

func threadLabel(by map[uint64]*hang.Thread, tid uint64) string {
	t := by[tid]
	if t == nil || t.Name == "" {
		return fmt.Sprint(tid)
	}
	return fmt.Sprintf("%d (%s)", tid, t.Name)
}

// WriteStacksFolded writes every thread's stack as folded stacks (one
// line per distinct stack, root first, frames separated by ';', then the
// number of threads: flamegraph.pl and speedscope read it), each ending
// in a frame that says what the threads wait on ("[monitor]",
// "[running]"); a thread without managed frames is "[native NAME]".
func WriteStacksFolded(w io.Writer, d *StacksDocument) error {
	counts := map[string]int{}
	for i := range d.Threads {
		t := &d.Threads[i]
		var parts []string
		if len(t.Frames) == 0 {
			parts = append(parts, "[native "+strings.TrimSpace(t.Name)+"]")
		}
		for j := len(t.Frames) - 1; j >= 0; j-- {
			parts = append(parts, t.Frames[j])
		}
		kind := "running"
		if t.Wait != nil {
			kind = t.Wait.Kind
		}
		parts = append(parts, "["+kind+"]")
		for j, p := range parts {
			parts[j] = strings.NewReplacer(";", ":", "\n", " ").Replace(p)
		}
		counts[strings.Join(parts, ";")]++
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%s %d\n", k, counts[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
