package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMemoryErrors: every bad invocation is one clear line.
func TestMemoryErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memory"}, "memory needs a process: --pid N, --name NAME or -- COMMAND ARGS"},
		{[]string{"memory", "--pid", "1", "--name", "x"}, "--pid, --name and -- COMMAND name the process: give one"},
		{[]string{"memory", "app.nettrace"}, `unexpected argument "app.nettrace": memory reads a live process (--pid N, --name NAME or -- COMMAND)`},
		{[]string{"memory", "--pid", "999999999"}, "pid 999999999: no such process"},
		{[]string{"memory", "--pid", "1", "--interval", "0"}, "--interval 0s: want more than 0"},
		{[]string{"memory", "--pid", "1", "--images", "-1"}, "--images -1: want 0 or more"},
		{[]string{"memory", "--name", "no-such-process-clrspy"}, `no .NET process named "no-such-process-clrspy" (see clrspy ps)`},
		{[]string{"memory", "--pid", "1", "--native"}, "--native needs --duration: the allocations are followed for that long"},
		{[]string{"memory", "--pid", "1", "--native", "--duration", "1s", "--sample-rate", "0"}, "--sample-rate 0: want 1 or more"},
		{[]string{"memory", "--pid", "1", "--format", "pprof", "-o", "x.pb.gz"}, "--format pprof needs --native: the profile is of the native allocations"},
		{[]string{"memory", "--pid", "1", "--format", "folded"}, "--format folded needs --native: the profile is of the native allocations"},
		{[]string{"memory", "--pid", "1", "--format", "svg"}, `unknown --format "svg": use text, json, html, pprof or folded`},
		{[]string{"memory", "--pid", "1", "--json", "--format", "text"}, "--json and --format text contradict each other"},
		{[]string{"memory", "--pid", "1", "--pprof", "x.pb.gz"}, "--pprof needs --native: the profile is of the native allocations"},
		{[]string{"memory", "--pid", "1", "--native", "--duration", "1s", "--pprof", "-"}, "--pprof -: give a file (the report goes to standard output; --format pprof writes the profile there)"},
		{[]string{"memory", "--", "/nonexistent/prog"}, "starting /nonexistent/prog: fork/exec /nonexistent/prog: no such file or directory"},
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
}

// TestMemorySelf reads the test process itself (Go: no GC range of the
// .NET kind, a malloc-less heap): the parts add up to RSS, the text says
// so, and smaps_rollup read just before and after brackets RSS.
func TestMemorySelf(t *testing.T) {
	pid := strconv.Itoa(os.Getpid())
	stdout, _, err := runCaptured(t, "memory", "--json", "--pid", pid)
	if err != nil {
		t.Fatal(err)
	}
	var d memoryDoc
	if err := json.Unmarshal(stdout, &d); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	d.checkSum(t)
	if d.Pid != os.Getpid() || d.RssBytes == 0 || d.part("images") == 0 {
		t.Errorf("pid %d RSS %d images %d", d.Pid, d.RssBytes, d.part("images"))
	}
	if !strings.HasPrefix(d.Judgement, "one sample, no trend") {
		t.Errorf("judgement %q", d.Judgement)
	}
	text, _, err := runCaptured(t, "memory", "--pid", pid, "--images", "2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pid " + pid + " (", "GC heap", "native heap", "thread stacks", "mapped images (top 2 of", "judgement: one sample"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("text has no %q:\n%s", want, text)
		}
	}
}
