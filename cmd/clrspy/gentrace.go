package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/internal/tracegen"
)

func init() { commands = append(commands, newGentraceCmd) }

// newGentraceCmd is a hidden developer command: it streams a synthetic but
// realistic trace of a given size, for scale tests and benchmarks
// (`clrspy gentrace --size 1GiB | clrspy stat -` needs no disk).
func newGentraceCmd() *cobra.Command {
	var size, out string
	var seed uint64
	c := &cobra.Command{
		Use:    "gentrace",
		Short:  "Write a synthetic trace of a given size (developer tool)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseTerminal(out, "gentrace"); err != nil {
				return err
			}
			n, err := parseSize(size)
			if err != nil {
				return err
			}
			f, err := createOutput(out, cmd.OutOrStdout(), 0o644)
			if err != nil {
				return err
			}
			bw := bufio.NewWriterSize(f, 1<<20)
			st, err := tracegen.Large(bw, n, seed)
			if err == nil {
				err = bw.Flush()
			}
			if err := f.Finish(err); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "gentrace: %d bytes, %d events (%d with stack), %d samples, %d GCs, %d allocation ticks, %d contentions\n",
				st.Bytes, st.Events, st.EventsWithStack, st.Samples, st.GCs, st.AllocTicks, st.Contentions)
			return nil
		},
	}
	c.Flags().StringVar(&size, "size", "100MiB", "approximate size (e.g. 1GiB, 500MB, 12345)")
	c.Flags().StringVarP(&out, "output", "o", "-", "file to write (- for stdout)")
	c.Flags().Uint64Var(&seed, "seed", 1, "generator seed (same seed, same bytes)")
	return c
}

// parseSize reads "1GiB", "500MB", "64KiB" or a plain byte count.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mul    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			v, err := strconv.ParseFloat(strings.TrimSuffix(s, u.suffix), 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("bad size %q", s)
			}
			return int64(v * float64(u.mul)), nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q (use e.g. 1GiB or 500MB)", s)
	}
	return v, nil
}
