// Package realtrace is test support for the seed corpora: it reads the real
// traces of ../shared/traces and hands out real event payloads, one per
// (trace, provider, event id, version), for the fuzz targets of the event
// decoders and analyses.
package realtrace

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// Dir is the real traces' directory as seen from a package directory.
const Dir = "../../shared/traces"

// Event is the first event of its kind in one trace.
type Event struct {
	Trace    string // file name without extension
	Provider nettrace.ProviderKind
	Name     string
	ID       uint32
	Version  uint32
	PtrSize  int
	Payload  []byte // cut to at most 2 KB
	Stack    []uint64
	Thread   uint64
}

// Label names the event for a seed file.
func (e Event) Label() string {
	return e.Trace + "-" + strings.ReplaceAll(e.Name, "/", "-") + "-v" + itoaU(e.Version)
}

func itoaU(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

var cache []Event

// Events returns the first event of every (provider, id, version) of the
// runtime providers (runtime, rundown, sample profiler) in every real
// trace, in file order.
func Events(t testing.TB) []Event {
	t.Helper()
	if cache != nil {
		return cache
	}
	files, _ := filepath.Glob(filepath.Join(Dir, "*.ne*"))
	if len(files) == 0 {
		t.Fatalf("no real traces in %s", Dir)
	}
	sort.Strings(files)
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			continue // unsupported versions
		}
		base := filepath.Base(path)
		trace := strings.TrimSuffix(base, filepath.Ext(base))
		seen := map[[3]uint32]bool{}
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.Meta.Runtime == nettrace.NotRuntime {
				continue
			}
			k := [3]uint32{uint32(ev.Meta.Runtime), ev.Meta.EventID, ev.Meta.Version}
			if seen[k] {
				continue
			}
			seen[k] = true
			p := ev.Payload[:min(len(ev.Payload), 2<<10)]
			cache = append(cache, Event{
				Trace: trace, Provider: ev.Meta.Runtime, Name: ev.Meta.Name, ID: ev.Meta.EventID, Version: ev.Meta.Version,
				PtrSize: r.Header().PointerSize, Payload: append([]byte{}, p...),
				Stack: append([]uint64(nil), ev.Stack...), Thread: ev.ThreadID,
			})
		}
	}
	return cache
}

// Runtime returns the events of the runtime provider with one of ids (all
// of them when ids is empty), capped at max per id.
func Runtime(t testing.TB, max int, ids ...uint32) []Event {
	return Of(t, nettrace.Runtime, max, ids...)
}

// Of is Runtime for any of the runtime providers.
func Of(t testing.TB, p nettrace.ProviderKind, max int, ids ...uint32) []Event {
	var out []Event
	n := map[uint32]int{}
	for _, e := range Events(t) {
		if e.Provider != p {
			continue
		}
		if len(ids) > 0 && !contains(ids, e.ID) {
			continue
		}
		if max > 0 && n[e.ID] >= max {
			continue
		}
		n[e.ID]++
		out = append(out, e)
	}
	return out
}

func contains(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Each calls fn with every event of the real trace named file (a base
// name in Dir), in order, until fn returns false.
func Each(t testing.TB, file string, fn func(ev *nettrace.Event, hdr *nettrace.Header) bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir, file))
	if err != nil {
		t.Fatal(err)
	}
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.Next()
		if err != nil || !fn(ev, r.Header()) {
			return
		}
	}
}
