package serve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Listen binds the HTTP endpoints' address: an error names --listen and
// the cause without Go's operation prefix ("listen tcp 127.0.0.1:9464:
// bind: ...").
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
			var se *os.SyscallError
			if errors.As(oe.Err, &se) {
				err = se.Err
			}
		}
		return nil, fmt.Errorf("--listen %s: %v", addr, err)
	}
	return ln, nil
}

// RefusalNotice is LimitListener's refused for a cap of max connections:
// it says at most once a minute, through say, that new connections are
// refused, with their count so far.
func RefusalNotice(max int, say func(string)) func() {
	var refused, lastSaid atomic.Int64
	return func() {
		n := refused.Add(1)
		now := time.Now().Unix()
		if last := lastSaid.Load(); now-last >= 60 && lastSaid.CompareAndSwap(last, now) {
			say(fmt.Sprintf("warning: %d connections open (--max-connections): refusing new ones with 503 (%d refused so far)", max, n))
		}
	}
}
