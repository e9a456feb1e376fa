package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clrspy/clrspy/internal/outfile"
)

// The rules every command's flags follow are written in docs/FLAGS.md and
// checked by TestFlagRules. What they need at run time is here, applied
// to every command from newRootCmd, so a new command gets it unasked:
// durations that also take a plain number of seconds, one-line messages
// for a bad flag value, and output paths checked before anything starts.

// annOutput is the annotation marking a flag that names something clrspy
// writes: "file" or "dir". A flag named "output" is a file without it.
const annOutput = "clrspy_output"

// markOutput says that flag name of cmd names a file (kind "file") or a
// directory ("dir") clrspy writes to: it is checked before the command
// attaches or starts anything.
func markOutput(cmd *cobra.Command, name, kind string) {
	if err := cmd.Flags().SetAnnotation(name, annOutput, []string{kind}); err != nil {
		panic(err) // a programming error: the flag is registered first
	}
}

// outputKind is "file", "dir" or "" (not an output) for f.
func outputKind(f *pflag.Flag) string {
	if v := f.Annotations[annOutput]; len(v) > 0 {
		return v[0]
	}
	if f.Name == "output" {
		return "file"
	}
	return ""
}

// checkOutputs checks every output path cmd was given, as outfile.Create
// will (directory exists and takes a new file, the name is not a
// directory, a link or someone else's pipe), before the command attaches
// or starts a program: a bad -o costs one line, not a whole session.
// Defaults count too (report's report.html), except under --live, which
// writes only a given -o.
func checkOutputs(cmd *cobra.Command) error {
	live := false
	if f := cmd.Flags().Lookup("live"); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
		live = true
	}
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		kind := outputKind(f)
		v := f.Value.String()
		if err == nil && kind != "" && v == "" && f.Changed {
			err = fmt.Errorf("--%s \"\": empty %s name (give a path, or '-' for standard output)", f.Name, kind)
			return
		}
		if err != nil || kind == "" || v == "" || v == "-" || (!f.Changed && live) {
			return
		}
		// The messages name the path (as Create's do), not the flag.
		if kind == "dir" {
			err = outfile.CheckDir(v, v)
		} else {
			err = outfile.Check(v)
		}
	})
	return err
}

// secondsDuration is a duration flag's value that also takes a plain
// number of seconds ("--duration 10" is ten seconds), with a message that
// says what is expected.
type secondsDuration struct{ v pflag.Value }

func (d secondsDuration) String() string { return d.v.String() }
func (d secondsDuration) Type() string   { return d.v.Type() }

func (d secondsDuration) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
			return errors.New("want a duration: a number of seconds, or a number with a unit (500ms, 10s, 2m, 1h30m)")
		}
		s = strconv.FormatFloat(f, 'f', -1, 64) + "s"
	}
	if err := d.v.Set(s); err != nil {
		return errors.New("want a duration: a number with a unit (500ms, 10s, 2m, 1h30m) or a plain number of seconds")
	}
	return nil
}

// normalizeFlags gives every command's duration flags the plain-seconds
// form, and the commands the output check and the flag messages.
func normalizeFlags(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkOutputs(cmd) }
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		wrap := func(f *pflag.Flag) {
			if _, done := f.Value.(secondsDuration); !done && f.Value.Type() == "duration" {
				f.Value = secondsDuration{f.Value}
			}
		}
		c.Flags().VisitAll(wrap)
		c.PersistentFlags().VisitAll(wrap)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// flagError turns pflag's "invalid argument "abc" for "--pid" flag:
// strconv.ParseInt: parsing "abc": invalid syntax" into what the flag
// expects: "--pid abc: want a process id (a whole number)".
func flagError(_ *cobra.Command, err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return err
	}
	f := ive.GetFlag()
	return fmt.Errorf("--%s %s: %s", f.Name, strconv.Quote(ive.GetValue()), expected(f, errors.Unwrap(ive)))
}

// expected says what a flag of f's type takes.
func expected(f *pflag.Flag, cause error) string {
	t := f.Value.Type()
	switch {
	case f.Name == "pid":
		return "want a process id (a whole number; clrspy ps lists them)"
	case t == "bool":
		return "want true or false"
	case strings.HasPrefix(t, "uint"):
		return "want a whole number, 0 or more"
	case strings.HasPrefix(t, "int") && strings.HasSuffix(t, "Slice"):
		return "want whole numbers (repeat the flag, or separate them with commas)"
	case strings.HasPrefix(t, "int"):
		return "want a whole number"
	case strings.HasPrefix(t, "float"):
		return "want a number"
	case cause != nil:
		return cause.Error()
	}
	return "not a valid value"
}

// aliasFlag registers old as a hidden, deprecated spelling of the flag
// name (same value): scripts written for the old name keep working, and
// a one-line notice names the new one.
func aliasFlag(cmd *cobra.Command, old, name string) {
	fs := cmd.Flags()
	n := fs.Lookup(name)
	fs.AddFlag(&pflag.Flag{Name: old, Usage: n.Usage, Value: n.Value, DefValue: n.DefValue, NoOptDefVal: n.NoOptDefVal, Annotations: n.Annotations})
	if err := fs.MarkDeprecated(old, "use --"+name); err != nil {
		panic(err)
	}
}
