package hang

import (
	"slices"
	"testing"
)

// TestMixedFrames: the walk's native frames above the first managed one,
// then the sampler's managed frames in their place, then the thread's
// start; a thread with no managed frame keeps the walk whole.
func TestMixedFrames(t *testing.T) {
	w := &Walk{Kernel: []string{"futex_wait [kernel]"}, User: []WalkFrame{
		{Name: "pthread_cond_wait [libc.so.6]"}, {Name: "libcoreclr.so+0x10"},
		{Name: "[jit or stub code]", Managed: true}, {Name: "A.B()", Managed: true},
		{Name: "start_thread [libc.so.6]"}}}
	got := mixedFrames(w, []string{"M.Enter()", "A.B()", "A.Main()"})
	want := []string{"futex_wait [kernel]", "pthread_cond_wait [libc.so.6]", "libcoreclr.so+0x10", "M.Enter()", "A.B()", "A.Main()", "start_thread [libc.so.6]"}
	if !slices.Equal(got, want) {
		t.Errorf("joined %q, want %q", got, want)
	}
	if got := mixedFrames(w, nil); len(got) != 6 || got[3] != "[jit or stub code]" {
		t.Errorf("no managed frames: %q, want the walk's 6", got)
	}
	if got := mixedFrames(&Walk{Reason: "x"}, []string{"A()"}); got != nil {
		t.Errorf("nothing walked: %q, want nil", got)
	}
}

func TestAppFrame(t *testing.T) {
	if got := appFrame([]string{"System.Threading.Monitor.Enter()", "[native code]", "App.Run(int32)", "App.Main()"}); got != "App.Run(int32)" {
		t.Errorf("app frame %q, want App.Run(int32)", got)
	}
	if got := appFrame([]string{"System.Threading.Thread.Sleep(int32)"}); got != "" {
		t.Errorf("app frame %q of framework frames alone", got)
	}
}
