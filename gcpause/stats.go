package gcpause

import "github.com/clrspy/clrspy/analysis"

// failed counts a decode error; it reports whether err was one.
func (a *Analyzer) failed(err error) bool {
	if err == nil {
		return false
	}
	if a.decodeErrors == 0 {
		a.firstErr = err
	}
	a.decodeErrors++
	return true
}

// Stats implements analysis.Analyzer: the runtime provider's events seen,
// and payloads that did not decode.
func (a *Analyzer) Stats() analysis.Stats {
	return analysis.Stats{Events: a.used, DecodeErrors: uint64(a.decodeErrors), FirstError: a.firstErr}
}
