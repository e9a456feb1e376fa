package dbg

import (
	"fmt"
	"os"
	"testing"

	_ "github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

func TestDump(t *testing.T) {
	f, _ := os.Open(os.Getenv("TRACE"))
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	mx := map[string]int64{}
	var first int64
	for {
		ev, err := r.Next()
		if err != nil || ev == nil {
			break
		}
		if first == 0 {
			first = ev.Timestamp
		}
		k := ev.Meta.Provider + "/" + ev.Meta.Name
		if ev.Timestamp > mx[k] {
			mx[k] = ev.Timestamp
		}
	}
	for k, v := range mx {
		fmt.Printf("%10.1f ms %s\n", float64(h.DurationNanos(v-first))/1e6, k)
	}
}
