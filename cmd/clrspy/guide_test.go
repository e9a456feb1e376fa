package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestGuideCommands: every clrspy command docs/GUIDE.md shows names a
// command that exists, with flags it has under their current names (no
// deprecated alias, no hidden flag), and the guide marks nothing "(new)":
// every command it names is in the build.
func TestGuideCommands(t *testing.T) {
	data, err := os.ReadFile("../../docs/GUIDE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.Contains(text, "(new)") {
		t.Error(`docs/GUIDE.md still marks commands "(new)"`)
	}
	root := newRootCmd()
	cmdLine := regexp.MustCompile("clrspy [a-z][^`\n]*")
	n := 0
	for _, line := range cmdLine.FindAllString(text, -1) {
		words := strings.Fields(line)[1:]
		for i, w := range words { // one command: up to a shell operator or a launch
			if w == "&&" || w == "|" || w == ";" || w == "--" || strings.HasSuffix(w, ";") {
				words = words[:i]
				break
			}
		}
		c, rest, err := root.Find(words)
		if err != nil || c == root {
			continue // prose such as "clrspy starts the program"
		}
		n++
		for _, w := range rest {
			if !strings.HasPrefix(w, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			f := c.Flags().Lookup(name)
			if f == nil {
				f = c.InheritedFlags().Lookup(name)
			}
			switch {
			case f == nil:
				t.Errorf("docs/GUIDE.md: %q: %s has no --%s", line, c.CommandPath(), name)
			case f.Deprecated != "" || f.Hidden:
				t.Errorf("docs/GUIDE.md: %q: --%s is a deprecated spelling (%s)", line, name, f.Deprecated)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d commands found in docs/GUIDE.md", n)
	}
}
