package main

import (
	"bufio"
	"io"
	"os"

	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/procfs"
)

// inputStdin is standard input as the trace readers take it: buffered,
// so that its first bytes can be looked at (a .gcdump on stdin) and still
// be read. One reader per os.Stdin (tests replace it).
func inputStdin() *bufio.Reader {
	if stdinBuf.f != os.Stdin {
		stdinBuf.f, stdinBuf.r = os.Stdin, bufio.NewReaderSize(os.Stdin, 64<<10)
	}
	return stdinBuf.r
}

var stdinBuf struct {
	f *os.File
	r *bufio.Reader
}

// isGcdumpInput says whether the input path (a file, or "-" for standard
// input) is a .gcdump: by its first bytes, whatever its name (a name
// ending .gcdump counts too, so that its reader says what is wrong).
func isGcdumpInput(path string) bool {
	if path == "-" {
		b, _ := inputStdin().Peek(64)
		return heapgraph.IsGCDump(b)
	}
	if isGcdump(path) {
		return true
	}
	f, err := procfs.OpenRegular(path, 0)
	if err != nil {
		return false // the trace reader says why
	}
	defer f.Close()
	b := make([]byte, 64)
	n, _ := io.ReadFull(f, b)
	return heapgraph.IsGCDump(b[:n])
}
