package nettrace_test

import (
	"io"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/nettrace"
)

func init() {
	nettrace.SetGenerator(func(w io.Writer, approxBytes int64, seed uint64) error {
		_, err := tracegen.Large(w, approxBytes, seed)
		return err
	})
	nettrace.SetRandom(tracegen.Random)
}
