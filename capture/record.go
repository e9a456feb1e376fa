package capture

import (
	"errors"
	"io"
	"os"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// FilePerm is the permission of every file clrspy writes about st's
// process (its raw events, a report, a profile, a trigger's window): 0600
// when that process runs as another user than clrspy (root tracing a
// service), so that only root reads what it saved of it (command line,
// names, stacks, addresses); else 0644.
func FilePerm(st *source.Stream) os.FileMode {
	if st != nil && st.Pid > 0 {
		if uid := ipc.ProcessUID(st.Pid); uid >= 0 && uid != os.Geteuid() {
			return 0o600
		}
	}
	return 0o644
}

// Tee is a live session's copy to a file (`record`, `run -o`, `top
// --record`, `snapshot --save`), faithful: every chunk read from the
// session goes to it, unbuffered, before the reader sees it. It is
// written beside its name (FILE.partial-XXXXXXXX) and renamed to it at
// the end: FILE is never a partial trace, and a clrspy killed outright
// leaves everything received in the partial file (a trace cut short,
// readable up to the cut).
type Tee struct {
	f *outfile.File
}

// NewTee creates path ("-": stdout, when given) as spec's copy (spec.Tee), before
// the session opens, so that a bad path fails before a session starts.
// perm is the complete file's permission (0: 0644); Opened narrows it.
// Defer Abort: it drops the copy unless Close completed it.
func NewTee(spec *source.Spec, path string, stdout io.Writer, perm os.FileMode) (*Tee, error) {
	var f *outfile.File
	var err error
	if stdout != nil {
		f, err = outfile.Open(path, stdout, outfile.Options{Perm: perm})
	} else {
		f, err = outfile.Create(path, outfile.Options{Perm: perm})
	}
	if err != nil {
		return nil, err
	}
	spec.Tee = f
	return &Tee{f: f}, nil
}

// Opened narrows the file's permission to its owner's once st is open
// and its process's owner known (FilePerm).
func (t *Tee) Opened(st *source.Stream) {
	if FilePerm(st) == 0o600 {
		t.f.SetPerm(0o600)
	}
}

// Drain ends the copy's reading once st's reader stopped: what it left
// unread (after an error) still belongs in the copy (readErr: that
// read's error). A file that could not take more (a full disk) drops the
// session first (a runtime whose stream nobody reads blocks, and a
// launched program could not exit), closes st and returns the file's
// error ("writing FILE: ..."; Abort removes the partial file).
func (t *Tee) Drain(st *source.Stream) (readErr, err error) {
	readErr = st.Drain()
	if err := t.f.Err(); err != nil {
		if s := st.Session(); s != nil {
			s.Close()
		}
		st.Close()
		return readErr, err
	}
	return readErr, nil
}

// Close completes the copy once st has ended (end: its end): a target
// that died mid-block ends the copy after its last complete block, with
// the stream's end marker, so it reads as complete up to the death; the
// file then takes its name and permission.
func (t *Tee) Close(end analysis.End) error {
	if tr := end.Truncated; end.TargetExited && tr != nil {
		if err := t.f.Seal(tr.Offset, nettrace.EndOfStreamV4); err != nil {
			return err
		}
	}
	return t.f.Close()
}

// Abort drops the copy (a no-op once Close completed it).
func (t *Tee) Abort() { t.f.Abort() }

// Recorded is what Record read of a live session.
type Recorded struct {
	Events, GCs uint64
	// ReadErr is the reader's error (a stream cut short is none), or
	// else the copy's drain's; CloseErr the session's closing's.
	ReadErr, CloseErr error
	End               analysis.End
	Bytes             int64 // read from the session
}

// Record is `record`'s and `run`'s loop: it reads st to its end (the
// copy to tee, nil for none, is made as the chunks arrive), counting
// events and GCs, calls stopWatch, drains what the session still holds
// (into tee) and closes st. Its error is the copy's failure ("writing
// FILE: ...", the partial file removed); the tee is left for the caller
// to Close with the End.
func Record(st *source.Stream, tee *Tee, stopWatch func()) (Recorded, error) {
	var r Recorded
	for {
		ev, err := st.Next()
		if err != nil {
			if err != io.EOF && !errors.Is(err, nettrace.ErrTruncated) {
				r.ReadErr = err
			}
			break
		}
		r.Events++
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCStart {
			r.GCs++
		}
	}
	stopWatch()
	if tee != nil {
		drainErr, err := tee.Drain(st)
		if err != nil {
			return r, err
		}
		if r.ReadErr == nil {
			r.ReadErr = drainErr
		}
	} else if err := st.Drain(); err != nil && r.ReadErr == nil {
		r.ReadErr = err
	}
	r.End = st.End()
	r.CloseErr = st.Close()
	if s := st.Session(); s != nil {
		r.Bytes = s.BytesRead()
	}
	return r, nil
}
