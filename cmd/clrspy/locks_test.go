package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

const locksTrace = "../../../shared/traces/filtrace__contention.nettrace"

func runLocksCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs(append([]string{"locks"}, args...))
	err := root.Execute()
	return out.String(), err
}

// TestLocksFile runs the command on the real .NET 10 contention trace in
// each output format.
func TestLocksFile(t *testing.T) {
	out, err := runLocksCmd(t, "--json", locksTrace)
	if err != nil {
		t.Fatal(err)
	}
	var d locksDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Summary.Contentions != 197 || d.Summary.Unpaired != 0 || len(d.Locks) != 1 || len(d.Threads) != 4 {
		t.Errorf("summary %+v, %d locks, %d threads", d.Summary, len(d.Locks), len(d.Threads))
	}

	out, err = runLocksCmd(t, locksTrace)
	if err != nil || !strings.Contains(out, "197 waits on 1 lock(s)") || !strings.Contains(out, "HoldLock(int32)") {
		t.Errorf("text: %v\n%s", err, out)
	}

	pb := filepath.Join(t.TempDir(), "locks.pb.gz")
	if _, err := runLocksCmd(t, "--format", "pprof", "-o", pb, locksTrace); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	if n != 197 || p.DefaultSampleType != "delay" {
		t.Errorf("pprof: %d contentions, default %q", n, p.DefaultSampleType)
	}
}

// TestLocksErrors: bad input is one clear line.
func TestLocksErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml", locksTrace}, `unknown --format "xml": use text, json or pprof`},
		{[]string{"--json", "--format", "pprof", locksTrace}, "--json and --format pprof contradict each other"},
		{[]string{"no-such.nettrace"}, "no-such.nettrace: no such file"},
		{[]string{"../../README.md"}, "README.md: not a trace: starts with 23 20 63 6c 72 73 70 79"},
	} {
		_, err := runLocksCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
