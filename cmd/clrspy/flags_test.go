package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renamed lists old spellings that must only exist as hidden, deprecated
// aliases (docs/FLAGS.md, Vocabulary): a flag by one of these names that
// shows in --help is a second name for a concept.
var renamed = map[string]string{
	"stop-on-pause-over":    "save-on-pause-over",
	"capture-on-pause-over": "save-on-pause-over",
	"trace-out":             "save-to",
	"capture-dir":           "save-dir",
	"capture-before":        "before",
	"capture-after":         "after",
	"capture-ring-mb":       "ring-mb",
	"capture-max-files":     "save-max-files",
	"capture-max-mb":        "save-max-mb",
}

var (
	flagName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	// A name that says time is a duration (rule 2).
	timeWord = regexp.MustCompile(`(^|-)(timeout|interval|duration|delay|grace|period|every|wait|ms|us|ns|sec|secs|seconds|minutes)($|-)`)
	// Sizes are -mb (rule 3).
	otherSize = regexp.MustCompile(`-(kb|gb|bytes|mib|gib|kib)$`)
)

// concept is a flag's type with a repeatable form counted as the same
// concept (--pid int, serve's repeatable --pid intSlice).
func concept(t string) string {
	return strings.TrimSuffix(strings.TrimSuffix(t, "Slice"), "Array")
}

// TestFlagRules walks every command (whatever commands exist: new ones
// are checked too) and checks each flag against docs/FLAGS.md. A failure
// names the command, the flag and the rule to follow.
func TestFlagRules(t *testing.T) {
	root := newRootCmd()
	types := map[string]string{} // flag name -> type and first command
	where := map[string]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || c.HasParent() && c.Parent().Name() == "completion" {
			return
		}
		// --help must run and list every visible flag.
		var out bytes.Buffer
		help := newRootCmd()
		help.SetOut(&out)
		help.SetErr(&out)
		help.SetArgs(append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "clrspy")), "--help"))
		if err := help.Execute(); err != nil {
			t.Errorf("clrspy %s --help: %v", c.CommandPath(), err)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			at := c.CommandPath() + " --" + f.Name
			if f.Deprecated != "" {
				// An old spelling: hidden, pointing at the new one.
				if !f.Hidden {
					t.Errorf("%s: a deprecated alias must be hidden (docs/FLAGS.md rule 4)", at)
				}
				return
			}
			if f.Hidden {
				return
			}
			if !strings.Contains(out.String(), "--"+f.Name) {
				t.Errorf("%s: not in the command's --help output (rule 7)", at)
			}
			if !flagName.MatchString(f.Name) {
				t.Errorf("%s: flag names are lower-case words joined by '-' (docs/FLAGS.md rule 1)", at)
			}
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s: no help text (rule 1)", at)
			}
			if to, ok := renamed[f.Name]; ok {
				t.Errorf("%s: this concept is spelled --%s; keep --%s only as aliasFlag(cmd, %q, %q) (rule 4, Vocabulary)", at, to, f.Name, f.Name, to)
			}
			typ := f.Value.Type()
			switch {
			case typ == "duration":
				if _, wrapped := f.Value.(secondsDuration); !wrapped {
					t.Errorf("%s: a duration flag that does not take plain seconds (register it before newRootCmd's normalizeFlags runs; rule 2)", at)
				}
				if _, err := time.ParseDuration(f.DefValue); err != nil {
					t.Errorf("%s: default %q is not a duration with a unit (rule 2)", at, f.DefValue)
				}
			case timeWord.MatchString(f.Name) && typ != "bool":
				t.Errorf("%s: a %s whose name says time: make it a duration (f.DurationVar; rule 2)", at, typ)
			}
			if strings.HasSuffix(f.Name, "-mb") {
				if !strings.HasPrefix(typ, "int") && !strings.HasPrefix(typ, "uint") {
					t.Errorf("%s: a -mb flag is a whole number of MiB, not a %s (rule 3)", at, typ)
				}
				if !strings.Contains(f.Usage, "MiB") {
					t.Errorf("%s: the help of a -mb flag says \"MiB\" (rule 3): %q", at, f.Usage)
				}
			}
			if otherSize.MatchString(f.Name) {
				t.Errorf("%s: sizes are whole MiB in a flag ending -mb (rule 3)", at)
			}
			if f.Name == "output" && (f.Shorthand != "o" || typ != "string") {
				t.Errorf("%s: --output is a string with the shorthand -o (rule 5)", at)
			}
			if prev, ok := types[f.Name]; ok && concept(prev) != concept(typ) {
				t.Errorf("%s is a %s, but %s is a %s: one name, one concept (rule 4)", at, typ, where[f.Name], prev)
			} else if !ok {
				types[f.Name], where[f.Name] = typ, at
			}
		})
	}
	walk(root)
	// Rule 7: the top-level help names every command.
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.Name()) + ` `).MatchString(root.Long) {
			t.Errorf("clrspy --help: the command list in root.go's Long text has no %q row (rule 7)", c.Name())
		}
	}
}

// TestFlagValues: what the run-time rules do with a value (durations in
// plain seconds, one-line messages for a bad value, outputs checked
// before anything starts).
func TestFlagValues(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gc", "--pid", "abc"}, `--pid "abc": want a process id (a whole number; clrspy ps lists them)`},
		{[]string{"gc", "--duration", "10x", "--pid", "1"}, `--duration "10x": want a duration: a number with a unit (500ms, 10s, 2m, 1h30m) or a plain number of seconds`},
		{[]string{"locks", "--buffer-mb", "-1", "--pid", "1"}, `--buffer-mb "-1": want a whole number, 0 or more`},
		{[]string{"profile", "--pid", "1", "-o", dir + "/none/cpu.pb.gz"}, "cannot write " + dir + "/none/cpu.pb.gz: no such directory " + dir + "/none"},
		{[]string{"gc", "--json", "-o", dir, "--pid", "1"}, dir + " is a directory: name a file in it"},
		{[]string{"report", "-o", dir + "/none/r.html", "--", "false"}, "cannot write " + dir + "/none/r.html: no such directory " + dir + "/none"},
		{[]string{"gc", "--save-on-pause-over", "1s", "--save-to", dir + "/none/x.nettrace", "--pid", "1"}, "cannot write " + dir + "/none/x.nettrace: no such directory " + dir + "/none"},
	} {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetArgs(c.args)
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.Execute()
		if err == nil || err.Error() != c.want {
			t.Errorf("clrspy %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	// A plain number of seconds is a duration.
	var d time.Duration
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.DurationVar(&d, "duration", 0, "")
	f := fs.Lookup("duration")
	f.Value = secondsDuration{f.Value}
	for in, want := range map[string]time.Duration{"10": 10 * time.Second, "1.5": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond, "0": 0} {
		if err := fs.Set("duration", in); err != nil || d != want {
			t.Errorf("--duration %s: %v %v, want %v", in, d, err, want)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "1e12", "0x10", "ten"} {
		if err := fs.Set("duration", bad); err == nil {
			t.Errorf("--duration %s accepted (%v)", bad, d)
		}
	}
}
