package ipc

import (
	"io"
	"time"

	"github.com/clrspy/clrspy/nettrace"
)

// ResetTypeLog makes the runtime forget which types it has named, so the
// next session with the Type keyword gets a BulkType event for every type
// it meets (a heap snapshot's types all named).
//
// The runtime (ETW::TypeSystemLog) names each type once: a process-wide
// table remembers the types logged, and is dropped only when a session is
// enabled or disabled and, after the change, no session has the Type
// keyword (0x80000) on. Measured on .NET 10: when a heap snapshot's
// session ends while another session stays open (clrspy serve or top, a
// dotnet-counters), the table is not dropped, and the next snapshot's
// objects come with types never named. Opening and closing a session
// without the Type keyword drops it (when no other session has the
// keyword on): ResetTypeLog opens such a session (GC keyword, informational, no
// rundown, a small buffer) and stops it at once. With the Type keyword
// on in another session nothing can drop the table: the types that
// session already saw stay unnamed (the caller detects and reports it).
func (c *Client) ResetTypeLog() error {
	s, err := c.StartSession(SessionConfig{
		Providers: []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordGC, Level: LevelInformational}},
		BufferMB:  1, NoRundown: true})
	if err != nil {
		return err
	}
	defer s.Close()
	// Stop is answered once the stream is written: read it meanwhile.
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, s)
		close(done)
	}()
	err = s.Stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return err
}
