package source

import (
	"os"
	"os/signal"
	"syscall"
)

// InterruptOnSignals hands SIGINT and SIGTERM to the stream (Interrupt)
// until the returned function is called: a command's live session ends
// cleanly on Ctrl-C.
func (s *Stream) InterruptOnSignals() (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				s.Interrupt(sig)
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
