package fleet

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/clrspy/clrspy/source"
)

// accept takes the runtimes that connect to the diagnostic port until ctx
// ends (Run closes the port).
func (f *Fleet) accept(ctx context.Context) {
	for {
		rt, err := f.port.Accept()
		if err != nil {
			return
		}
		go f.admit(ctx, rt)
	}
}

// admit starts monitoring a runtime that connected (it waits, suspended,
// until its session is open), or lets it go when --pid/--name leave it
// out.
func (f *Fleet) admit(ctx context.Context, rt *source.Runtime) {
	name := rt.Name()
	host := rt.HostPid()
	if ctx.Err() != nil || !f.matches([]int{rt.Pid, host}, name, nil) {
		if err := rt.Resume(); err != nil {
			f.log.Warn("resuming a runtime left out by --pid/--name", "pid", rt.Pid, "process", name, "error", ErrLine(err))
		}
		return
	}
	// host is the connecting process's pid by the kernel's word (0 when
	// not visible here): the perf sampler and /proc are only ever aimed
	// at it, never at the pid the runtime advertised.
	t := &Source{f: f, key: "listen:" + hex.EncodeToString(rt.Cookie[:]), kind: source.Listen, pid: rt.Pid, hostPid: host,
		rt: rt, name: name, uid: rt.Uid()}
	f.mu.Lock()
	label := strconv.Itoa(rt.Pid)
	if host > 0 {
		label = strconv.Itoa(host)
		// Discovery may have attached to it first (a runtime started
		// without suspend): the session it has is enough.
		for _, o := range f.targets {
			if o.kind == source.Attach && o.pid == host && o.endedAt.IsZero() {
				f.mu.Unlock()
				rt.Resume()
				return
			}
		}
	}
	if !f.pidLabelFree(label) {
		// Two runtimes from other pid namespaces with the same pid: the
		// cookie tells them apart.
		label = fmt.Sprintf("%s-%s", label, hex.EncodeToString(rt.Cookie[:4]))
	}
	t.pidLabel = label
	f.startLocked(t)
	f.mu.Unlock()
}
