package fleet

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/plant"
)

// TestStatic: a static fleet's target is up at once, listed with its
// pid and name, found by its pid label, and has no session until one is
// followed.
func TestStatic(t *testing.T) {
	f := Static()
	src := f.Add(Target{Name: "app", Pid: 77})
	if got := f.Lookup("77"); got != src || !src.Up() || src.Session() != nil || src.ProcPid() != 77 {
		t.Fatalf("lookup %v, up %v, session %v, proc pid %d", got, src.Up(), src.Session(), src.ProcPid())
	}
	ls := f.List()
	if len(ls) != 1 || ls[0].Pid != 77 || ls[0].Process != "app" || ls[0].State != "running" || ls[0].Sessions != 1 {
		t.Errorf("list %+v", ls)
	}
	if n := len(f.Sources(false)); n != 0 {
		t.Errorf("%d targets with a session, want none", n)
	}
	if f.Lookup("78") != nil || f.Session("1") != nil {
		t.Error("found what is not there")
	}
}

// TestRootNotice: clrspy running as root says once per target that it
// attaches to another user's process, as the one-shot commands do; not
// for root's own processes.
func TestRootNotice(t *testing.T) {
	uid, _ := plant.User(t)
	log := &strings.Builder{} // one goroutine logs
	f := Static()
	f.log = slog.New(slog.NewTextHandler(log, nil))
	theirs := f.Add(Target{Pid: 4545, Listen: true, Uid: uid})
	mine := f.Add(Target{Pid: 4646, Listen: true})
	for range 3 {
		theirs.noteOwner()
		mine.noteOwner()
	}
	want := "attaching as root to another user's process\" pid=4545"
	if n := strings.Count(log.String(), want); n != 1 || strings.Contains(log.String(), "pid=4646") {
		t.Errorf("log has %d notices for pid 4545 (want 1), or one for root's own:\n%s", n, log.String())
	}
}
