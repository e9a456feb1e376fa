package source

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
)

func TestSpecKind(t *testing.T) {
	cases := []struct {
		spec Spec
		kind Kind
		err  string
	}{
		{Spec{}, 0, "no target: give a .nettrace file, '-' for standard input, --pid, --name or -- COMMAND"},
		{Spec{File: "a.nettrace"}, File, ""},
		{Spec{File: "-"}, Stdin, ""},
		{Spec{Pid: 12}, Attach, ""},
		{Spec{Name: "app"}, Attach, ""},
		{Spec{Argv: []string{"dotnet", "x.dll"}}, Launch, ""},
		{Spec{File: "a", Pid: 1}, 0, "give either a trace file or --pid/--name, not both"},
		{Spec{Pid: 1, Name: "app"}, 0, "give --pid or --name, not both"},
		{Spec{Pid: 1, Argv: []string{"x"}}, 0, "give either a command after -- or --pid/--name, not both"},
		{Spec{File: "a", Argv: []string{"x"}}, 0, `unexpected argument "a" before --`},
		{Spec{Pid: -3}, 0, "--pid -3: a process id is positive"},
		{Spec{File: "a", Duration: time.Second}, 0, "--duration applies to live sessions only (--pid, --name or -- COMMAND)"},
		{Spec{Pid: 1, Duration: -time.Second}, 0, "--duration -1s: must not be negative"},
	}
	for _, c := range cases {
		k, err := c.spec.Kind()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if k != c.kind || msg != c.err {
			t.Errorf("%+v: kind %v, error %q; want %v, %q", c.spec, k, msg, c.kind, c.err)
		}
	}
}

var (
	hdr = nettrace.Header{SyncTimeUTC: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SyncTimeQPC: 1000,
		QPCFrequency: 1_000_000_000, PointerSize: 8, ProcessID: 42, NumberOfProcessors: 2}
	meta = &nettrace.Metadata{ID: 1, Provider: "Test-Provider", EventID: 7, EventName: "Tick", Version: 1}
)

// writeTrace writes n events on two threads, losing lost events of thread
// 2 before its last event.
func writeTrace(t *testing.T, n int, lost uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := nettrace.NewWriter(&buf, hdr, nettrace.WriterOptions{BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	seq := [3]uint32{}
	for i := 0; i < n; i++ {
		th := uint64(1 + i%2)
		seq[th]++
		if th == 2 && i >= n-2 {
			seq[th] += lost
		}
		ev := nettrace.Event{Meta: meta, Timestamp: 2000 + int64(i)*100, ThreadID: th, CaptureThreadID: th,
			SequenceNumber: seq[th], Payload: []byte{byte(i), 0, 0, 0}}
		if err := w.WriteEvent(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// countingAnalyzer counts events and records whether Finish was called.
type countingAnalyzer struct {
	n        uint64
	finished bool
}

func (c *countingAnalyzer) Event(*nettrace.Event) { c.n++ }
func (c *countingAnalyzer) Stats() analysis.Stats { return analysis.Stats{Events: c.n} }
func (c *countingAnalyzer) Finish()               { c.finished = true }

func TestRunFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.nettrace")
	if err := os.WriteFile(path, writeTrace(t, 500, 7), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Open(Spec{File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Live() || st.Kind != File || st.Name != path || st.Header().ProcessID != 42 {
		t.Errorf("stream %+v", st)
	}
	a, b := &countingAnalyzer{}, &countingAnalyzer{}
	end, err := st.Run(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if end.Events != 500 || a.n != 500 || b.n != 500 || !a.finished || !b.finished {
		t.Errorf("end %+v, analyzers saw %d and %d (finished %v %v)", end, a.n, b.n, a.finished, b.finished)
	}
	if end.EventsLost != 7 || end.Truncated != nil || end.TargetExited {
		t.Errorf("end %+v: want 7 lost, complete", end)
	}
	if end.FirstTimestamp != 2000 || end.LastTimestamp != 2000+499*100 {
		t.Errorf("timestamps %d..%d", end.FirstTimestamp, end.LastTimestamp)
	}
	if read, size := st.Progress(); read != size || size == 0 {
		t.Errorf("progress %d of %d at the end", read, size)
	}
}

// TestRunTruncated: a cut stream delivers every complete event, is not an
// error, and End says where it was cut.
func TestRunTruncated(t *testing.T) {
	full := writeTrace(t, 500, 0)
	cut := full[:len(full)*2/3]
	st, err := Open(Spec{File: "-", Stdin: bytes.NewReader(cut)})
	if err != nil {
		t.Fatal(err)
	}
	a := &countingAnalyzer{}
	end, err := st.Run(a)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "stdin" || end.Truncated == nil || !errors.Is(end.Truncated, nettrace.ErrTruncated) {
		t.Fatalf("end %+v", end)
	}
	if end.Events == 0 || end.Events >= 500 || a.n != end.Events || !a.finished {
		t.Errorf("%d events delivered of 500, analyzer %d", end.Events, a.n)
	}
	if end.Truncated.Offset <= 0 || end.Truncated.Offset >= int64(len(cut)) {
		t.Errorf("cut at %d of %d bytes", end.Truncated.Offset, len(cut))
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.nettrace")
	junk := filepath.Join(dir, "junk.nettrace")
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(junk, []byte(strings.Repeat("not a trace ", 10)), 0o600)
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{File: filepath.Join(dir, "missing.nettrace")}, filepath.Join(dir, "missing.nettrace") + ": no such file"},
		{Spec{File: dir}, dir + " is a directory, not a trace file"},
		{Spec{File: empty}, empty + ": empty file"},
		{Spec{File: "-", Stdin: strings.NewReader("")}, "stdin: empty file"},
		{Spec{Pid: 1, Duration: time.Second}, "this command names no providers for a live session"},
	}
	for _, c := range cases {
		_, err := Open(c.spec)
		if err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	if _, err := Open(Spec{File: filepath.Join(dir, "missing.nettrace")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file's error does not unwrap to os.ErrNotExist: %v", err)
	}
	_, err := Open(Spec{File: junk})
	if err == nil || !strings.HasPrefix(err.Error(), junk+": ") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("junk: %v", err)
	}
}

// TestTee: the tee gets every byte of the stream, also what the reader
// left unread after Drain.
func TestTee(t *testing.T) {
	data := writeTrace(t, 300, 0)
	var copyBuf bytes.Buffer
	st, err := Open(Spec{File: "-", Stdin: bytes.NewReader(data), Tee: &copyBuf})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := st.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Drain(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copyBuf.Bytes(), data) {
		t.Errorf("tee copied %d of %d bytes", copyBuf.Len(), len(data))
	}
}

// TestRunKeep: with Spec.Keep rejecting every event, a file's analyses see
// only the ends of each thread's runs, and End still counts every event,
// the lost ones and the whole stream's first and last timestamps.
func TestRunKeep(t *testing.T) {
	var buf bytes.Buffer
	w, err := nettrace.NewWriter(&buf, hdr, nettrace.WriterOptions{BlockSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	// Thread 1 writes 300 events, then thread 2 200, with 7 lost before its
	// last one (a gap no run may hide).
	for i := 0; i < 500; i++ {
		th, seq := uint64(1), uint32(i+1)
		if i >= 300 {
			th, seq = 2, uint32(i-299)
			if i == 499 {
				seq += 7
			}
		}
		ev := nettrace.Event{Meta: meta, Timestamp: 2000 + int64(i)*100, ThreadID: th, CaptureThreadID: th,
			SequenceNumber: seq, Payload: []byte{byte(i), 0, 0, 0}}
		if err := w.WriteEvent(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.nettrace")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		st, err := Open(Spec{File: path, Threads: threads, Keep: func(*nettrace.Metadata) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		a := &countingAnalyzer{}
		end, err := st.Run(a)
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		if end.Events != 500 || end.Skipped == 0 || a.n != end.Events-end.Skipped || a.n > 100 {
			t.Errorf("%d threads: end %+v, the analysis saw %d", threads, end, a.n)
		}
		if end.EventsLost != 7 || end.FirstTimestamp != 2000 || end.LastTimestamp != 2000+499*100 {
			t.Errorf("%d threads: end %+v: want 7 lost, timestamps 2000..51900", threads, end)
		}
	}
}
