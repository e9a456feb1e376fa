package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/clrspy/clrspy/internal/devprof"
)

func main() {
	root := newRootCmd()
	stop := devprof.Start()
	err := root.Execute()
	stop()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "clrspy:", ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "clrspy:", err)
	os.Exit(1)
}

// exitError carries a specific exit status (and an optional message) out of
// a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
