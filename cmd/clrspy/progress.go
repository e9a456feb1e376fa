package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// countingReader counts the bytes read through it, for progress display.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// withProgress wraps r so that, when stderr is a terminal and the input is
// large, a one-line progress indicator is drawn on stderr until the returned
// stop function is called. total is the input size (0 if unknown).
func withProgress(r io.Reader, what string, total int64) (io.Reader, func()) {
	if !term.IsTerminal(int(os.Stderr.Fd())) || (total > 0 && total < 64<<20) {
		return r, func() {}
	}
	cr := &countingReader{r: r}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		drawn := false
		for {
			select {
			case <-done:
				if drawn {
					fmt.Fprint(os.Stderr, "\r\033[K")
				}
				return
			case <-t.C:
				n := cr.n.Load()
				if total > 0 {
					fmt.Fprintf(os.Stderr, "\rreading %s: %d%% (%d of %d MB)", what, n*100/total, n>>20, total>>20)
				} else {
					fmt.Fprintf(os.Stderr, "\rreading %s: %d MB", what, n>>20)
				}
				drawn = true
			}
		}
	}()
	var once sync.Once
	return cr, func() { once.Do(func() { close(done); <-finished }) }
}

// inputSize is the size of a regular file behind r, or 0.
func inputSize(r io.Reader) int64 {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}
