package hang

// Walk is a thread's native stack as the caller walked it from outside
// (package perf: /proc's kernel stack, and the user stack from the
// registers /proc gives of a thread in a system call), newest first.
type Walk struct {
	// Kernel are the kernel's frames (names).
	Kernel []string
	// User are the user frames: native code, then managed code where the
	// walk reached it, then the native frames that started the thread.
	User []WalkFrame
	// Reason says why a side is missing ("" when both were walked).
	Reason string
}

// WalkFrame is one user frame of a Walk.
type WalkFrame struct {
	Name string
	// Managed marks managed or JIT'd code (the sample's frames name it
	// better: they replace these).
	Managed bool
}

// maxMixed bounds a joined stack.
const maxMixed = 256

// mixedFrames joins a thread's walk with its managed frames (the
// sampler's, leaf first): the kernel frames, the native frames above the
// first managed one, the managed frames, then the native frames below the
// last managed one (the thread's start). A thread with no managed frame
// has the walk's frames alone.
func mixedFrames(w *Walk, managed []string) []string {
	if w == nil || (len(w.Kernel) == 0 && len(w.User) == 0) {
		return nil
	}
	out := make([]string, 0, min(maxMixed, len(w.Kernel)+len(w.User)+len(managed)))
	out = append(out, w.Kernel...)
	first, last := -1, -1
	for i, f := range w.User {
		if f.Managed {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	switch {
	case len(managed) == 0:
		for _, f := range w.User {
			out = append(out, f.Name)
		}
	case first < 0:
		// The walk stopped in native code (or read no user stack): the
		// managed frames follow what it has.
		for _, f := range w.User {
			out = append(out, f.Name)
		}
		out = append(out, managed...)
	default:
		for _, f := range w.User[:first] {
			out = append(out, f.Name)
		}
		out = append(out, managed...)
		for _, f := range w.User[last+1:] {
			out = append(out, f.Name)
		}
	}
	if len(out) > maxMixed {
		out = out[:maxMixed]
	}
	return out
}
