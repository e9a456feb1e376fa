package gcpause

import (
	"fmt"
	"os"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

func TestZZDump(t *testing.T) {
	f, _ := os.Open(os.Getenv("TRACE"))
	r, err := nettrace.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	n := 0
	for {
		ev, err := r.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		m := ev.Meta
		if m.Runtime != nettrace.Runtime {
			continue
		}
		ms := float64(h.Nanos(ev.Timestamp)) / 1e6
		s := ""
		switch m.EventID {
		case 1:
			g, err := clrevents.DecodeGCStart(ev.Payload, m.Version, 8)
			s = fmt.Sprintf("%+v %v", g, err)
		case 2:
			g, err := clrevents.DecodeGCEnd(ev.Payload, m.Version, 8)
			s = fmt.Sprintf("%+v %v", g, err)
		case 9:
			g, _ := clrevents.DecodeGCSuspendEEBegin(ev.Payload, m.Version, 8)
			if g.Reason == 0 {
				continue
			}
			s = fmt.Sprintf("%+v", g)
		case 4, 3, 7, 8, 35:
		default:
			continue
		}
		if ev.LostBefore > 0 {
			s += fmt.Sprintf(" LOST %d", ev.LostBefore)
		}
		fmt.Printf("%12.4f t%-6d %-22s %s\n", ms, ev.ThreadID, m.Name, s)
		n++
	}
}
