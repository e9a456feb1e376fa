package clrevents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/nettrace"
)

// TestDecodeEveryCatalogEvent decodes every runtime event of every real
// trace that has a typed decoder, every version present, and requires no
// error. It also pins the set of (event, version) pairs decoded, so a
// decoder that stops covering a version the catalog has is noticed.
func TestDecodeEveryCatalogEvent(t *testing.T) {
	files, _ := filepath.Glob("../../shared/traces/*.ne*")
	if len(files) != 19 {
		t.Fatalf("want the 19 catalog traces, found %d", len(files))
	}
	decoded := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := nettrace.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, nettrace.ErrTruncated) {
					t.Fatalf("%s: %v", f, err)
				}
				break
			}
			if !HasDecoder(ev.Meta) {
				continue
			}
			if _, err := Decode(ev, r.Header().PointerSize); err != nil {
				t.Errorf("%s: %s v%d (%d bytes): %v", filepath.Base(f), ev.Meta.FullName(), ev.Meta.Version, len(ev.Payload), err)
				continue
			}
			decoded[fmt.Sprintf("%d/%d v%d", ev.Meta.Runtime, ev.Meta.EventID, ev.Meta.Version)]++
		}
		fh.Close()
	}
	var keys []string
	for k := range decoded {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	got := strings.Join(keys, ", ")
	// Runtime (1), rundown (2) and sample-profiler (4) events with their
	// versions, as present in the catalog (CATALOG.md §6).
	want := "1/1 v2, 1/10 v3, 1/10 v4, 1/11 v1, 1/12 v1, 1/14 v1, 1/142 v1, 1/142 v2, 1/143 v1, 1/143 v2, 1/144 v1, 1/144 v2, " +
		"1/15 v0, 1/151 v1, 1/152 v2, 1/153 v2, 1/2 v1, 1/202 v0, 1/204 v3, 1/205 v2, 1/205 v4, 1/21 v0, " +
		"1/22 v0, 1/23 v0, 1/3 v1, 1/301 v0, 1/302 v0, 1/35 v0, 1/39 v0, 1/4 v1, 1/4 v2, 1/7 v1, 1/8 v1, " +
		"1/81 v1, 1/81 v2, 1/85 v0, 1/9 v1, 1/90 v0, 1/91 v1, 2/144 v1, 2/144 v2, 2/152 v1, 2/154 v2, 4/0 v0"
	if got != want {
		t.Errorf("decoded event versions:\n got %s\nwant %s", got, want)
	}
	if decoded["1/1 v2"] != 478+385+7+6*5+1 {
		t.Errorf("GCStart decoded %d times", decoded["1/1 v2"])
	}
}

// FuzzDecode runs every typed decoder on arbitrary payloads and versions:
// no panic, and a decoded value or an error. Seeds are real payloads, one
// per (event, version) of the catalog traces.
func FuzzDecode(f *testing.F) {
	keys := make([]decodeKey, 0, len(decoders))
	for k := range decoders {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].p != keys[j].p {
			return keys[i].p < keys[j].p
		}
		return keys[i].id < keys[j].id
	})
	index := map[decodeKey]int{}
	for i, k := range keys {
		index[k] = i
	}
	files, _ := filepath.Glob("../../shared/traces/*.nettrace")
	seen := map[string]bool{}
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			f.Fatal(err)
		}
		r, err := nettrace.NewReader(fh)
		if err != nil {
			f.Fatal(err)
		}
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			k := decodeKey{ev.Meta.Runtime, ev.Meta.EventID}
			i, ok := index[k]
			s := fmt.Sprint(i, ev.Meta.Version)
			if !ok || seen[s] {
				continue
			}
			seen[s] = true
			f.Add(uint16(i), ev.Meta.Version, r.Header().PointerSize == 4, append([]byte(nil), ev.Payload...))
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, i uint16, version uint32, ptr4 bool, payload []byte) {
		k := keys[int(i)%len(keys)]
		ptr := 8
		if ptr4 {
			ptr = 4
		}
		v, err := decoders[k](payload, version%8, ptr)
		if err == nil && v == nil {
			t.Fatalf("%v: nil value without error", k)
		}
	})
}
