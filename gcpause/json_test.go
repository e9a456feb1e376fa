package gcpause

import (
	"encoding/json"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
)

// TestReasonRollupJSON: the row's JSON is the form clrspy gc --json's
// summary, the page and the live snapshot have always written (these keys
// in this order, times in ms), and reads back to the same row.
func TestReasonRollupJSON(t *testing.T) {
	r := ReasonRollup{Reason: clrevents.SuspendForGCPrep, Count: 3, Incomplete: 1,
		TotalNanos: 13432233, MaxNanos: 5590418, TotalSuspend: 120091, MaxSuspend: 7795}
	b, err := json.Marshal([]ReasonRollup{r})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"reason":"SuspendForGCPrep","code":6,"count":3,"incomplete":1,"total_ms":13.432233,"max_ms":5.590418,"total_suspend_ms":0.120091,"max_suspend_ms":0.007795}]`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var back []ReasonRollup
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || back[0] != r {
		t.Errorf("read back %+v, want %+v", back, r)
	}
}
