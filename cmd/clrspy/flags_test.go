package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
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
	// A number whose name says memory is a size in MiB (rule 3).
	sizeWord = regexp.MustCompile(`(^|-)(buffer|ring|memory|mem|cache|size)($|-)`)
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
	for _, v := range flagRuleViolations(newRootCmd) {
		t.Error(v)
	}
}

// TestFlagRulesCatch: the walk finds what the rules forbid, with messages
// that say what to do (a command breaking each rule once).
func TestFlagRulesCatch(t *testing.T) {
	bad := func() *cobra.Command {
		root := newRootCmd()
		c := &cobra.Command{Use: "bad", Short: "breaks every rule", RunE: func(*cobra.Command, []string) error { return nil }}
		f := c.Flags()
		f.Int("timeout-ms", 0, "a time in a number")
		f.Int("cache-size", 0, "a size not in MiB")
		f.Int("ring-mb", 0, "a size without its unit")
		f.String("trace-out", "", "an old spelling")
		f.Bool("pid", false, "a second concept for --pid")
		f.Int("Bad_Name", 0, "bad name")
		f.Var(fixedValue{}, "wait", "a duration registered after normalizeFlags")
		root.AddCommand(c)
		return root
	}
	got := strings.Join(flagRuleViolations(bad), "\n")
	for _, want := range []string{
		"clrspy bad --timeout-ms: a int whose name says time: make it a duration",
		"clrspy bad --cache-size: a size is a whole number of MiB in a flag ending -mb",
		`clrspy bad --ring-mb: the help of a -mb flag says "MiB"`,
		`clrspy bad --trace-out: this concept is spelled --save-to; keep --trace-out only as aliasFlag(cmd, "trace-out", "save-to")`,
		"--pid: one name, one concept (rule 4): it is a bool in bad; a int in ",
		"clrspy bad --Bad_Name: flag names are lower-case words joined by '-'",
		"clrspy bad --wait: a duration flag that does not take plain seconds",
		`clrspy --help: the command list in root.go's Long text has no "bad" row`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no violation %q in:\n%s", want, got)
		}
	}
}

// fixedValue is a duration-typed value that is not wrapped.
type fixedValue struct{}

func (fixedValue) String() string   { return "0s" }
func (fixedValue) Set(string) error { return nil }
func (fixedValue) Type() string     { return "duration" }

// flagRuleViolations walks the commands of the root newRoot makes and
// returns one line per broken rule.
func flagRuleViolations(newRoot func() *cobra.Command) []string {
	var bad []string
	errorf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	root := newRoot()
	uses := map[string]map[string][]string{} // flag name -> concept -> commands
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
		help := newRoot()
		help.SetOut(&out)
		help.SetErr(&out)
		help.SetArgs(append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "clrspy")), "--help"))
		if err := help.Execute(); err != nil {
			errorf("%s --help: %v", c.CommandPath(), err)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			at := c.CommandPath() + " --" + f.Name
			if f.Deprecated != "" {
				// An old spelling: hidden, pointing at the new one.
				if !f.Hidden {
					errorf("%s: a deprecated alias must be hidden (docs/FLAGS.md rule 4)", at)
				}
				return
			}
			if f.Hidden {
				return
			}
			if !strings.Contains(out.String(), "--"+f.Name) {
				errorf("%s: not in the command's --help output (rule 7)", at)
			}
			if !flagName.MatchString(f.Name) {
				errorf("%s: flag names are lower-case words joined by '-' (docs/FLAGS.md rule 1)", at)
			}
			if strings.TrimSpace(f.Usage) == "" {
				errorf("%s: no help text (rule 1)", at)
			}
			if to, ok := renamed[f.Name]; ok {
				errorf("%s: this concept is spelled --%s; keep --%s only as aliasFlag(cmd, %q, %q) (rule 4, Vocabulary)", at, to, f.Name, f.Name, to)
			}
			typ := f.Value.Type()
			switch {
			case typ == "duration":
				if _, wrapped := f.Value.(secondsDuration); !wrapped {
					errorf("%s: a duration flag that does not take plain seconds (register it with f.DurationVar in the command's constructor, so normalizeFlags wraps it; rule 2)", at)
				}
				if _, err := time.ParseDuration(f.DefValue); err != nil {
					errorf("%s: default %q is not a duration with a unit (rule 2)", at, f.DefValue)
				}
			case timeWord.MatchString(f.Name) && typ != "bool":
				errorf("%s: a %s whose name says time: make it a duration (f.DurationVar; rule 2)", at, typ)
			}
			if strings.HasSuffix(f.Name, "-mb") {
				if !strings.HasPrefix(typ, "int") && !strings.HasPrefix(typ, "uint") {
					errorf("%s: a -mb flag is a whole number of MiB, not a %s (rule 3)", at, typ)
				}
				if !strings.Contains(f.Usage, "MiB") {
					errorf("%s: the help of a -mb flag says \"MiB\" (rule 3): %q", at, f.Usage)
				}
			}
			numeric := strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint") || strings.HasPrefix(typ, "float")
			if numeric && sizeWord.MatchString(f.Name) && !strings.HasSuffix(f.Name, "-mb") {
				errorf("%s: a size is a whole number of MiB in a flag ending -mb (rule 3)", at)
			}
			if otherSize.MatchString(f.Name) {
				errorf("%s: sizes are whole MiB in a flag ending -mb (rule 3)", at)
			}
			if f.Name == "output" && (f.Shorthand != "o" || typ != "string") {
				errorf("%s: --output is a string with the shorthand -o (rule 5)", at)
			}
			if uses[f.Name] == nil {
				uses[f.Name] = map[string][]string{}
			}
			uses[f.Name][concept(typ)] = append(uses[f.Name][concept(typ)], c.Name())
		})
	}
	walk(root)
	for name, by := range uses {
		if len(by) > 1 {
			var kinds []string
			for typ, cmds := range by {
				kinds = append(kinds, fmt.Sprintf("a %s in %s", typ, strings.Join(cmds, ", ")))
			}
			sort.Strings(kinds)
			errorf("--%s: one name, one concept (rule 4): it is %s", name, strings.Join(kinds, "; "))
		}
	}
	// Rule 7: the top-level help names every command.
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(c.Name()) + ` `).MatchString(root.Long) {
			errorf("clrspy --help: the command list in root.go's Long text has no %q row (rule 7)", c.Name())
		}
	}
	return bad
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
		{[]string{"report", "-o", "", "--", "false"}, `--output "": empty file name (give a path, or '-' for standard output)`},
		{[]string{"gc", "--json", "-o", "", "--pid", "1"}, `--output "": empty file name (give a path, or '-' for standard output)`},
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
