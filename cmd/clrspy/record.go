package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/source"
)

func init() { commands = append(commands, newRecordCmd, newRunCmd) }

// sessionFlags are the provider choices of record and run.
type sessionFlags struct {
	profiles  []string
	providers string
}

func addSessionFlags(cmd *cobra.Command) *sessionFlags {
	sf := &sessionFlags{}
	cmd.Flags().StringSliceVar(&sf.profiles, "profile", nil, "named provider set(s), comma-separated (default gc):\n"+ipc.ProfileHelp())
	cmd.Flags().StringVar(&sf.providers, "providers", "", "extra providers in dotnet-trace form: Provider[:keywords[:level[:args]]],...")
	return sf
}

// resolve merges the chosen profiles and providers.
func (sf *sessionFlags) resolve() ([]ipc.Provider, error) {
	return ipc.Resolve(sf.profiles, sf.providers)
}

func newRecordCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "record (--pid N | --name NAME | -- COMMAND ARGS...) -o FILE.nettrace",
		Short: "Save a live session to a .nettrace file",
		Long: `record opens an EventPipe session on a running .NET process (or on a program it
starts suspended) and writes the runtime's nettrace stream to a file, byte for
byte. The session ends with a rundown (so every method can be named) when
--duration passes, on Ctrl-C/SIGTERM, or when the process exits. A target that
exits during the recording ends it: the file is closed with a proper end, so it
reads as complete up to the target's death. Until the end the stream goes to
FILE.partial-XXXXXXXX beside FILE, renamed to FILE at the end: FILE is never a
partial trace, and a clrspy killed outright leaves everything it received in
the .partial file (a trace cut short, readable up to the cut). The file is
readable by its owner only (0600) when the process runs as another user.

With --save-on-pause-over D, record keeps only a bounded ring of the stream in
memory (metadata, stacks and method loads kept valid) and, when a GC pause
longer than D ends, writes the window from --before the pause to --after its
end to -o as a readable .nettrace, then stops the session (or, with --rearm,
goes on and writes FILE-2, FILE-3, ... at later long pauses).`,
		Example: `  clrspy record --pid 4242 --profile gc,cpu --duration 30s -o app.nettrace
  clrspy record --name MyService --save-on-pause-over 200ms --before 30s --after 5s -o slow-gc.nettrace
  clrspy record --providers 'Microsoft-Windows-DotNETRuntime:0x4000:4' -o locks.nettrace -- dotnet app.dll`,
	}
	t := addTargetFlags(cmd)
	sf := addSessionFlags(cmd)
	trig := addRecordTriggerFlags(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "trace file to write ('-' for standard output)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if out == "" {
			return errors.New("record needs -o FILE.nettrace")
		}
		if !t.live(cmd) {
			return errors.New("record needs a live target: --pid, --name or -- COMMAND")
		}
		if err := refuseTerminal(out, "record"); err != nil {
			return err
		}
		if trig.over != 0 {
			if trig.over < 0 || trig.before < 0 || trig.after < 0 || trig.maxMB <= 0 {
				return errors.New("--save-on-pause-over, --before, --after and --ring-mb must be positive")
			}
			if out == "-" {
				return errors.New("--save-on-pause-over writes a file: give -o FILE.nettrace")
			}
			// The trigger needs the GC events whatever else is recorded.
			sf.profiles = append(sf.profiles, "gc")
			return recordTriggered(cmd, args, t, sf, trig, out)
		}
		return recordSession(cmd, args, t, sf, out)
	}
	return cmd
}

func newRunCmd() *cobra.Command {
	var out string
	var duration time.Duration
	var bufferMB uint32
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND ARGS...",
		Short: "Start a .NET program under a session from its first instruction",
		Long: `run starts the program with a suspending diagnostic port, opens the session
while the runtime waits, then resumes it, so not one GC from startup is
missed. The program's stdin, stdout and stderr pass through and clrspy exits
with its exit code. A one-line summary of the session goes to stderr; -o
also keeps the trace.`,
		Example: `  clrspy run --profile gc,cpu -o app.nettrace -- dotnet app.dll`,
	}
	sf := addSessionFlags(cmd)
	cmd.Flags().StringVarP(&out, "output", "o", "", "also write the trace to this file")
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop the session after this long, then send the program SIGTERM")
	cmd.Flags().Uint32Var(&bufferMB, "buffer-mb", 256, "runtime-side event buffer of the session, in MiB")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if cmd.ArgsLenAtDash() < 0 {
			return errors.New("run needs a command after --: clrspy run [flags] -- COMMAND [ARGS]")
		}
		t := &targetFlags{duration: duration, bufferMB: bufferMB}
		return recordSession(cmd, args, t, sf, out)
	}
	return cmd
}

// recordSession copies a live session to out (when set) and reads it
// through the nettrace reader for the summary line.
func recordSession(cmd *cobra.Command, args []string, t *targetFlags, sf *sessionFlags, out string) error {
	providers, err := sf.resolve()
	if err != nil {
		return err
	}
	spec, err := t.spec(cmd, args, providers)
	if err != nil {
		return err
	}
	var tee *capture.Tee
	if out != "" {
		// Opened before the target, so that a bad -o fails before a
		// session starts (capture.Tee: never a partial FILE).
		if tee, err = capture.NewTee(&spec, out, os.Stdout, 0o644); err != nil {
			return err
		}
		defer tee.Abort() // a no-op once closed
	}
	start := time.Now()
	st, stopWatch, err := openTarget(spec)
	if err != nil {
		return err
	}
	if tee != nil {
		tee.Opened(st)
	}
	noteMovementLive(st, providers)
	r, err := capture.Record(st, tee, stopWatch)
	if err != nil {
		return err
	}
	where := ""
	if out != "" && out != "-" {
		where = " to " + out
	}
	if r.End.TargetExited && st.Kind == source.Attach {
		notice(fmt.Sprintf("target exited (pid %d) after %.1fs: the recording ends there", st.Pid, time.Since(start).Seconds()))
	}
	if tee != nil {
		if err := tee.Close(r.End); err != nil {
			return err
		}
	}
	notice(fmt.Sprintf("%s: %d events (%d GCs, %d lost), %d bytes%s in %.1fs",
		st.Name, r.Events, r.GCs, r.End.EventsLost, r.Bytes, where, time.Since(start).Seconds()))
	if r.ReadErr != nil {
		warn("%v", r.ReadErr)
	}
	if r.CloseErr != nil && !errors.Is(r.CloseErr, os.ErrClosed) {
		warn("%v", r.CloseErr)
	}
	if code := st.ExitCode(); code > 0 {
		return &exitError{code: code}
	}
	return nil
}

// recordTriggered runs a live session through the GC pause analysis and the
// ring trigger, writing only the window around a long pause.
func recordTriggered(cmd *cobra.Command, args []string, t *targetFlags, sf *sessionFlags, o *triggerFlags, out string) error {
	providers, err := sf.resolve()
	if err != nil {
		return err
	}
	st, stopWatch, err := t.open(cmd, args, providers)
	if err != nil {
		return err
	}
	noteMovementLive(st, providers)
	defer st.Close()
	notice(fmt.Sprintf("%s: armed: waiting for a GC pause over %v (ring: %v before, %v after, at most %d MB)",
		st.Name, o.over, o.before, o.after, o.maxMB))
	// Stop waits for the runtime to end the session, which needs the read
	// loop to go on: Stream.Stop stops in the background.
	trig := o.newTrigger(st.Header(), out, outputPerm(st), notice, st.Stop)
	// The pause analysis first: the trigger hears of a GC's start before
	// it records the GCStart event.
	a := gcpause.New(st.Header(), gcpause.Options{OnGC: trig.GC, OnGCStart: trig.GCStart, MaxGCs: 1, MaxSuspensions: 1})
	_, err = run(st, stopWatch, a, trig)
	trig.Finish()
	if trig.Saved() == 0 && len(trig.Errors()) == 0 {
		notice(fmt.Sprintf("no GC pause over %v: nothing written", o.over))
	}
	if len(trig.Errors()) > 0 {
		return trig.Errors()[0]
	}
	if err != nil {
		return err
	}
	st.Close()
	if code := st.ExitCode(); code > 0 {
		return &exitError{code: code}
	}
	return nil
}
