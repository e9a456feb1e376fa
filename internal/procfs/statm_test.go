package procfs

import (
	"os"
	"testing"
)

// TestStatm reads clrspy's own statm: resident and data pages, both
// non-zero, resident within the data and more (text, libraries).
func TestStatm(t *testing.T) {
	res, data, err := Statm(os.Getpid())
	if err != nil || res == 0 || data == 0 {
		t.Fatalf("statm: resident %d, data %d, %v", res, data, err)
	}
	if _, _, err := Statm(-1); err == nil {
		t.Error("statm of pid -1: no error")
	}
}
