package main

import (
	"io"
	"os"

	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/source"
)

// Output files go through package outfile: written beside the final name
// and renamed into place when complete, never through a symbolic link.

// outputPerm is the permission of every file clrspy writes about st's
// process (its raw events, a report, a profile, a trigger's window): 0600
// when that process runs as another user than clrspy (root tracing a
// service), so that only root reads what it saved of it (command line,
// names, stacks, addresses). One rule for every output.
func outputPerm(st *source.Stream) os.FileMode {
	if st != nil && st.Pid > 0 {
		if uid := ipc.ProcessUID(st.Pid); uid >= 0 && uid != os.Geteuid() {
			return 0o600
		}
	}
	return 0o644
}

// createOutput opens path for writing, "-" being w.
func createOutput(path string, w io.Writer, perm os.FileMode) (*outfile.File, error) {
	return outfile.Open(path, w, outfile.Options{Perm: perm})
}
