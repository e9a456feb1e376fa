package main

import (
	"fmt"
	"os"
	"time"

	"github.com/clrspy/clrspy/source"
)

// progressMin is the input size from which a progress line is drawn.
const progressMin = 64 << 20

// showProgress draws a one-line progress indicator for a large trace file
// on stderr (a terminal only) until the returned function is called.
func showProgress(st *source.Stream) func() {
	if _, size := st.Progress(); !isTerminal(os.Stderr) || (size > 0 && size < progressMin) {
		return func() {}
	}
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
				n, total := st.Progress()
				if total > 0 {
					fmt.Fprintf(os.Stderr, "\rreading %s: %d%% (%d of %d MB)", st.Name, n*100/total, n>>20, total>>20)
				} else {
					fmt.Fprintf(os.Stderr, "\rreading %s: %d MB", st.Name, n>>20)
				}
				drawn = true
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(done)
			<-finished
		}
	}
}
