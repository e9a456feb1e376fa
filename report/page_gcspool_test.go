package report

import (
	"bytes"
	"path/filepath"
	"testing"
)

// A page whose GC rows were retired and spooled in chunks writes what the
// page that kept them all in memory writes, byte for byte, with the same
// row count and reason names; so does one whose spool could not be made
// (the rows stay in memory).
func TestPageGCSpool(t *testing.T) {
	write := func(t *testing.T, p *Page) []byte {
		var b bytes.Buffer
		if err := WritePage(&b, p); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, name := range []string{"composite.nettrace", "gc-wks.nettrace", "gc-wks.truncated.nettrace"} {
		t.Run(name, func(t *testing.T) { testPageGCSpool(t, name, write) })
	}
}

func testPageGCSpool(t *testing.T, name string, write func(*testing.T, *Page) []byte) {
	{
		whole := pageOf(t, name)
		want := write(t, whole)
		if whole.GCs.spool != nil || whole.GCs.Len() < 20 {
			t.Fatalf("%s: %d rows, spool %v: the test needs more GCs, none spooled", name, whole.GCs.Len(), whole.GCs.spool)
		}
		keep, chunk := retiredGCsAfter, pageSpoolChunk
		retiredGCsAfter, pageSpoolChunk = 5, 7
		t.Cleanup(func() { retiredGCsAfter, pageSpoolChunk = keep, chunk })
		spooled := pageOf(t, name)
		t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
		unspooled := pageOf(t, name)
		s := spooled.GCs.spool
		if s == nil || s.err != nil || len(s.chunks) < 2 || s.rows%7 != 0 {
			t.Fatalf("%s: spool %+v, %d rows in memory", name, s, len(spooled.GCs.Number))
		}
		if u := unspooled.GCs.spool; u == nil || u.err == nil || u.rows != 0 || len(unspooled.GCs.Number) != whole.GCs.Len() {
			t.Fatalf("%s: without a temporary directory: spool %+v, %d rows in memory", name, u, len(unspooled.GCs.Number))
		}
		for _, p := range []*Page{spooled, unspooled} {
			if p.GCs.Len() != whole.GCs.Len() || len(p.GCReasons) != len(whole.GCReasons) {
				t.Errorf("%s: %d rows, %d reasons; in memory %d, %d", name, p.GCs.Len(), len(p.GCReasons), whole.GCs.Len(), len(whole.GCReasons))
			}
			if got := write(t, p); !bytes.Equal(got, want) {
				n := 0
				for n < min(len(got), len(want)) && got[n] == want[n] {
					n++
				}
				t.Errorf("%s: page differs at byte %d:\n got  %.120s\n want %.120s", name, n, got[n:], want[n:])
			}
		}
	}
}
