package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/flightrec"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/nettrace"
)

// triggerFlags are the flags of the "save the trace around a long GC
// pause" trigger (package flightrec): `record --save-on-pause-over` and
// `gc --save-on-pause-over` (serve's are spelled alike; docs/FLAGS.md).
type triggerFlags struct {
	over, before, after time.Duration
	out                 string
	rearm               bool
	maxMB               int
}

// addRecordTriggerFlags registers record's trigger flags; the window file
// is record's -o.
func addRecordTriggerFlags(c *cobra.Command) *triggerFlags {
	o := &triggerFlags{}
	f := c.Flags()
	f.DurationVar(&o.over, "save-on-pause-over", 0, "keep only a ring of the stream in memory; when a GC pause longer than this ends, write the window around it to -o and stop (see --rearm)")
	addWindowFlags(c, &o.before, &o.after)
	f.BoolVar(&o.rearm, "rearm", false, "with --save-on-pause-over: keep going and save every later long pause too (FILE-2, FILE-3, ...)")
	f.IntVar(&o.maxMB, "ring-mb", 512, "with --save-on-pause-over: memory bound of the ring, in MiB")
	aliasFlag(c, "stop-on-pause-over", "save-on-pause-over")
	return o
}

// addGCTriggerFlags registers gc's trigger flags.
func addGCTriggerFlags(c *cobra.Command, o *triggerFlags) {
	f := c.Flags()
	f.DurationVar(&o.over, "save-on-pause-over", 0, "when a GC pause longer than this ends, save the stream around it to --save-to (live sessions)")
	f.StringVar(&o.out, "save-to", "", "file the saved trace is written to (with --rearm: FILE, FILE-2, ...)")
	aliasFlag(c, "trace-out", "save-to")
	markOutput(c, "save-to", "file")
	addWindowFlags(c, &o.before, &o.after)
	f.BoolVar(&o.rearm, "rearm", false, "with --save-on-pause-over: save again at every later long pause (FILE-2, FILE-3, ...) instead of once")
	f.IntVar(&o.maxMB, "ring-mb", 512, "with --save-on-pause-over: memory bound of the ring, in MiB")
}

// check validates gc's trigger flags.
func (t *triggerFlags) check(live bool) error {
	switch {
	case t.over == 0 && t.out == "":
		return nil
	case t.over <= 0:
		return fmt.Errorf("--save-to needs --save-on-pause-over D")
	case t.out == "":
		return fmt.Errorf("--save-on-pause-over needs --save-to FILE")
	case !live:
		return fmt.Errorf("--save-on-pause-over applies to live sessions only (--pid, --name or -- COMMAND)")
	case t.before < 0 || t.after < 0 || t.maxMB <= 0:
		return fmt.Errorf("--before, --after and --ring-mb must be positive")
	}
	return nil
}

// numbered is FILE for the first save, FILE-2, FILE-3 ... after it.
func numbered(path string, n int) string {
	if n <= 1 {
		return path
	}
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), n, ext)
}

// newTrigger builds the trigger writing to out (files with perm); notices
// go to say, and done is called after the last save.
func (t *triggerFlags) newTrigger(hdr *nettrace.Header, out string, perm os.FileMode, say func(string), done func()) *flightrec.PauseTrigger {
	w := flightrec.Window{Over: t.over, Before: t.before, After: t.after, Rearm: t.rearm, RingBytes: t.maxMB << 20}
	return w.Trigger(hdr, func(n int, _ *gcpause.GC) (io.WriteCloser, string, error) {
		name := numbered(out, n)
		// Written beside name and renamed into place once complete;
		// a failed save is aborted (flightrec calls Abort).
		f, err := outfile.Create(name, outfile.Options{Perm: perm})
		if err != nil {
			return nil, name, err
		}
		return f, name, nil
	}, say, done)
}

// addWindowFlags registers the window's --before and --after, as every
// trigger spells them (record, gc, serve).
func addWindowFlags(c *cobra.Command, before, after *time.Duration) {
	c.Flags().DurationVar(before, "before", 30*time.Second, "with --save-on-pause-over: how much of the stream before the pause to keep")
	c.Flags().DurationVar(after, "after", 5*time.Second, "with --save-on-pause-over: how much of the stream after the pause to add")
}
