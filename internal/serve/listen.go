package serve

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/clrspy/clrspy/source"
)

// accept takes the runtimes that connect to the diagnostic port until ctx
// ends (Run closes the port).
func (d *Daemon) accept(ctx context.Context) {
	for {
		rt, err := d.port.Accept()
		if err != nil {
			return
		}
		go d.admit(ctx, rt)
	}
}

// admit starts monitoring a runtime that connected (it waits, suspended,
// until its session is open), or lets it go when --pid/--name leave it
// out.
func (d *Daemon) admit(ctx context.Context, rt *source.Runtime) {
	name := rt.Name()
	host := rt.HostPid()
	if ctx.Err() != nil || !d.matches([]int{rt.Pid, host}, name, nil) {
		if err := rt.Resume(); err != nil {
			d.log.Warn("resuming a runtime left out by --pid/--name", "pid", rt.Pid, "process", name, "error", errLine(err))
		}
		return
	}
	// host is the connecting process's pid by the kernel's word (0 when
	// not visible here): the perf sampler and /proc are only ever aimed
	// at it, never at the pid the runtime advertised.
	t := &target{d: d, key: "listen:" + hex.EncodeToString(rt.Cookie[:]), kind: source.Listen, pid: rt.Pid, hostPid: host,
		rt: rt, name: name, uid: rt.Uid()}
	d.mu.Lock()
	label := itoa(rt.Pid)
	if host > 0 {
		label = itoa(host)
		// Discovery may have attached to it first (a runtime started
		// without suspend): the session it has is enough.
		for _, o := range d.targets {
			if o.kind == source.Attach && o.pid == host && o.endedAt.IsZero() {
				d.mu.Unlock()
				rt.Resume()
				return
			}
		}
	}
	if !d.pidLabelFree(label) {
		// Two runtimes from other pid namespaces with the same pid: the
		// cookie tells them apart.
		label = fmt.Sprintf("%s-%s", label, hex.EncodeToString(rt.Cookie[:4]))
	}
	t.pidLabel = label
	d.startLocked(t)
	d.mu.Unlock()
}
