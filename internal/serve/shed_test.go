package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawGet sends one keep-alive GET on c and reads the answer's status and
// body.
func rawGet(t *testing.T, c net.Conn, path string) (int, string, http.Header) {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), resp.Header
}

// TestShedIdle: at the connection cap, a new client is not locked out by
// idle connections (keep-alive ones between requests, or ones that have
// sent nothing for a second): the one idle longest is closed for it.
// Connections in the middle of a request are never shed: with every slot
// busy, the new one gets 503. A refused request (421, 401, 403) closes its
// connection, so clients without access hold no slot.
func TestShedIdle(t *testing.T) {
	block := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) { <-block })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	h := guard(mux, HandlerOptions{LoopbackHosts: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Server(h)
	go srv.Serve(LimitListener(ln, 2, true, nil))
	defer srv.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Two keep-alive connections, idle after one request each.
	a, b := dial(), dial()
	for _, c := range []net.Conn{a, b} {
		if code, _, _ := rawGet(t, c, "/healthz"); code != 200 {
			t.Fatalf("healthz %d", code)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if code, body, _ := rawGet(t, dial(), "/healthz"); code != 200 || body != "ok" {
		t.Errorf("past the cap of idle connections: %d %q, want 200", code, body)
	}
	// a, idle longest, was shed.
	a.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := a.Read(make([]byte, 1)); err == nil || n != 0 {
		t.Errorf("the oldest idle connection is still open (%d, %v)", n, err)
	}
	// Busy connections are not shed.
	c1, c2 := dial(), dial()
	for _, c := range []net.Conn{c1, c2} {
		fmt.Fprintf(c, "GET /block HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	}
	time.Sleep(200 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	var code int
	var body string
	for time.Now().Before(deadline) {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			continue // the other idle one shed meanwhile, or a reset: again
		}
		bb, _ := io.ReadAll(resp.Body)
		code, body = resp.StatusCode, string(bb)
		if code == 503 {
			break
		}
	}
	if code != 503 || !strings.Contains(body, "too many connections") {
		t.Errorf("with every slot busy: %d %q, want 503", code, body)
	}
	close(block)
	// A refused request closes its connection.
	time.Sleep(100 * time.Millisecond)
	c := dial()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n")
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if resp.StatusCode != 421 || !resp.Close {
		t.Errorf("a 421 keeps its connection: %d close=%v", resp.StatusCode, resp.Close)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("after a 421 the connection is open: %v", err)
	}
}
