package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/web"
)

// guarded is the daemon's handler (watching no process) with o, served by
// an httptest server.
func guarded(t *testing.T, o HandlerOptions) *httptest.Server {
	t.Helper()
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{"no-such-process-here"}}})
	o.Web = web.Handler(web.NewMonitors(fleet.Static(), web.MonitorsOptions{}), web.Options{})
	h, err := d.Handler(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func status(t *testing.T, srv *httptest.Server, path, host string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, resp.Header, b.String()
}

// TestToken: with a token (a listener that is not loopback), every
// endpoint but /healthz answers 401 without it, or with a wrong one, and
// serves it as a bearer token or a Basic password; the websocket too.
func TestToken(t *testing.T) {
	srv := guarded(t, HandlerOptions{Token: "s3cret-token"})
	for _, p := range []string{"/metrics", "/targets", "/", "/debug/pprof/profile?pid=1&seconds=1", "/debug/pprof/heap?pid=1", "/targets.json", "/ws?target=1"} {
		code, h, body := status(t, srv, p, "", nil)
		if ch := strings.Join(h.Values("WWW-Authenticate"), ", "); code != 401 || ch != `Bearer realm="clrspy", Basic realm="clrspy"` || !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("%s without a token: %d %q %q", p, code, ch, body)
		}
		if code, _, _ := status(t, srv, p, "", map[string]string{"Authorization": "Bearer s3cret-tokeN"}); code != 401 {
			t.Errorf("%s with a wrong token: %d", p, code)
		}
	}
	if code, _, _ := status(t, srv, "/healthz", "", nil); code != 200 {
		t.Errorf("/healthz without a token: %d", code)
	}
	if code, _, _ := status(t, srv, "/metrics", "", map[string]string{"Authorization": "Bearer s3cret-token"}); code != 200 {
		t.Errorf("/metrics with the token: %d", code)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/targets", nil)
	req.SetBasicAuth("anyone", "s3cret-token")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("/targets with the token as Basic password: %v %v", resp.Status, err)
	} else {
		resp.Body.Close()
	}
}

// TestLoopbackHosts: on a loopback listener only loopback Host names are
// answered; a foreign one (DNS rebinding: the attacker's name resolved to
// 127.0.0.1) gets 421, the websocket upgrade included.
func TestLoopbackHosts(t *testing.T) {
	srv := guarded(t, HandlerOptions{LoopbackHosts: true})
	for host, want := range map[string]int{
		"localhost:9464": 200, "LOCALHOST": 200, "127.0.0.1:9464": 200, "127.3.4.5": 200, "[::1]:9464": 200,
		"evil.example:9464": 421, "localhost.evil.example": 421, "10.0.0.1:9464": 421, "[::2]:9464": 421,
	} {
		code, _, body := status(t, srv, "/targets", host, nil)
		if code != want {
			t.Errorf("Host %q: %d %q, want %d", host, code, body, want)
		}
	}
	// A heap snapshot (a blocking GC in the target) is refused before the
	// pid is even looked at.
	if code, _, _ := status(t, srv, "/debug/pprof/heap?pid=1", "evil.example:9464", nil); code != http.StatusMisdirectedRequest {
		t.Errorf("/debug/pprof/heap with a foreign Host: %d, want 421", code)
	}
	// The websocket: Host and Origin both the attacker's name.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := http.Header{"Origin": {"http://evil.example:9464"}}
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws?target=1", &websocket.DialOptions{Host: "evil.example:9464", HTTPHeader: hdr})
	if err == nil || resp == nil || resp.StatusCode != http.StatusMisdirectedRequest {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Errorf("websocket with a foreign Host: %d %v, want 421", code, err)
	}
}

// TestProfileSeconds: a profile's seconds must be a positive finite
// number within the cap; NaN, infinities, amounts that round to no
// duration (which would mean "no limit") and negatives are 400.
func TestProfileSeconds(t *testing.T) {
	srv := guarded(t, HandlerOptions{MaxProfile: time.Minute})
	for _, s := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "infinity", "1e-12", "0.001", "-1", "0", "-0", "1e400", "61", "0x10", "1_0", "%205", "5s"} {
		code, _, body := status(t, srv, "/debug/pprof/profile?pid=1&seconds="+s, "", nil)
		if code != 400 || !strings.Contains(body, "want a number of seconds from 0.01 to 60") {
			t.Errorf("seconds=%s: %d %q, want 400", s, code, body)
		}
	}
	for _, s := range []string{"1", "0.5", "60", "1e1"} {
		d, ok := profileSeconds(s, time.Minute)
		if !ok || d <= 0 || d > time.Minute {
			t.Errorf("seconds=%s: %v %v", s, d, ok)
		}
	}
}
