package main

import (
	"io"
	"os"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/source"
)

// Output files go through package outfile: written beside the final name
// and renamed into place when complete, never through a symbolic link.

// outputPerm is the permission of every file clrspy writes about st's
// process (capture.FilePerm): one rule for every output.
func outputPerm(st *source.Stream) os.FileMode { return capture.FilePerm(st) }

// createOutput opens path for writing, "-" being w.
func createOutput(path string, w io.Writer, perm os.FileMode) (*outfile.File, error) {
	return outfile.Open(path, w, outfile.Options{Perm: perm})
}
