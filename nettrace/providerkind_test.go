package nettrace

import "testing"

// Name is classifyProvider's inverse.
func TestProviderKindName(t *testing.T) {
	for k := Runtime; k <= EventPipe; k++ {
		if k.Name() == "" || classifyProvider(k.Name()) != k {
			t.Errorf("kind %d: name %q classifies as %d", k, k.Name(), classifyProvider(k.Name()))
		}
	}
	if NotRuntime.Name() != "" {
		t.Errorf("NotRuntime has name %q", NotRuntime.Name())
	}
}
