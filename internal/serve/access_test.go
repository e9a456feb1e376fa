package serve

import (
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/plant"
)

// TestCrossSite: a request a page of another origin makes (an <img>, a
// form, a fetch) is refused on every route, /healthz and the pausing
// heap snapshot included, before the request does anything; same-origin
// requests and non-browser clients go on.
func TestCrossSite(t *testing.T) {
	srv := guarded(t, HandlerOptions{LoopbackHosts: true})
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, p := range []string{"/metrics", "/healthz", "/targets", "/debug/pprof/heap?pid=1", "/debug/pprof/profile?pid=1&seconds=1", "/triage?pid=1", "/debug/stacks?pid=1", "/ws?target=1"} {
		for _, hdr := range []map[string]string{
			{"Origin": "http://evil.example"},
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site"},
			{"Origin": "null"},
			{"Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"},
		} {
			code, _, body := status(t, srv, p, "", hdr)
			if code != 403 || !strings.Contains(body, "cross-site request") || strings.Count(strings.TrimSpace(body), "\n") > 0 {
				t.Errorf("%s with %v: %d %q, want 403 in one line", p, hdr, code, body)
			}
		}
	}
	for p, want := range map[string]int{"/metrics": 200, "/healthz": 200, "/debug/pprof/heap?pid=1": 404} {
		for _, hdr := range []map[string]string{nil, {"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}} {
			if code, _, body := status(t, srv, p, "", hdr); code != want {
				t.Errorf("%s with %v: %d %q, want %d", p, hdr, code, body, want)
			}
		}
	}
}

// fakeTarget files a target that is up, with no session, so the
// per-target checks can be tried without a process.
func fakeTarget(d *Daemon, pid string, uid int) *target {
	n, _ := strconv.Atoi(pid)
	return d.target(d.fleet.Add(fleet.Target{Pid: n, Listen: true, Uid: uid}))
}

// TestRateLimit: a target's heap snapshots and profiles are rate limited
// from the end of the last one: within the interval 429 with Retry-After
// (whole seconds, rounded up) in one line, after it the slot is free.
func TestRateLimit(t *testing.T) {
	d, err := New(Config{Config: fleet.Config{Names: []string{"none"}}, LogOutput: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	tg := fakeTarget(d, "4242", 0)
	req := httptest.NewRequest("GET", "/debug/pprof/heap?pid=4242", nil)
	slotOf := func(t *target) *slot { return &t.snapshotting }
	rec := httptest.NewRecorder()
	got, release := d.claim(rec, req, "4242", "a heap snapshot", time.Second, DefaultHeapEvery, slotOf)
	if got != tg {
		t.Fatalf("first claim: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	if again, _ := d.claim(rec, req, "4242", "a heap snapshot", time.Second, DefaultHeapEvery, slotOf); again != nil || rec.Code != 409 {
		t.Errorf("while held: %d %s, want 409", rec.Code, rec.Body)
	}
	release()
	rec = httptest.NewRecorder()
	if again, _ := d.claim(rec, req, "4242", "a heap snapshot", time.Second, DefaultHeapEvery, slotOf); again != nil || rec.Code != 429 ||
		rec.Header().Get("Retry-After") != "10" || !strings.HasPrefix(rec.Body.String(), "pid 4242: a heap snapshot was taken less than 10s ago") {
		t.Errorf("right after: %d Retry-After %q %q, want 429 and 10", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if tg.snapshotting.busy.Load() {
		t.Error("a refused request holds the slot")
	}
	// A short interval passes.
	rec = httptest.NewRecorder()
	got, _ = d.claim(rec, req, "4242", "a heap snapshot", time.Second, 50*time.Millisecond, slotOf)
	if got != nil {
		t.Fatal("claimed within 50ms")
	}
	time.Sleep(60 * time.Millisecond)
	rec = httptest.NewRecorder()
	if got, release = d.claim(rec, req, "4242", "a heap snapshot", time.Second, 50*time.Millisecond, slotOf); got == nil {
		t.Fatalf("after the interval: %d %s", rec.Code, rec.Body)
	}
	release()
	if limit(0, DefaultHeapEvery) != 10*time.Second || limit(-1, DefaultHeapEvery) != 0 || limit(3*time.Second, DefaultHeapEvery) != 3*time.Second {
		t.Error("limit's defaults")
	}
}

// TestTriageParams: /triage takes its seconds as the profiles do, by the
// one parser: NaN, infinities, hex, underscores, huge and tiny values are
// 400 before anything waits; a parameter given twice too.
func TestTriageParams(t *testing.T) {
	srv := guarded(t, HandlerOptions{MaxProfile: time.Minute})
	for _, s := range []string{"NaN", "Inf", "1e300", "0x1p-2", "1_0", "0", "-1", "1e-9", "61", ""} {
		code, _, body := status(t, srv, "/triage?pid=1&seconds="+s, "", nil)
		if code != 400 || !strings.Contains(body, "want a number of seconds from 0.01 to 60") {
			t.Errorf("seconds=%s: %d %q, want 400", s, code, body)
		}
	}
	for q, want := range map[string]string{
		"pid=1&pid=2":               "pid given 2 times: give it once",
		"pid=1&format=xml":          "format=xml: want json or text",
		"seconds=1":                 "give pid=N",
		"pid=1&seconds=%zz":         "the query does not parse",
		"pid=1&off_cpu=maybe":       "",
		"pid=1&seconds=1&seconds=2": "seconds given 2 times",
	} {
		code, _, body := status(t, srv, "/triage?"+q, "", nil)
		if want == "" {
			if code != 404 {
				t.Errorf("%s: %d %q, want 404 (no such pid)", q, code, body)
			}
			continue
		}
		if code != 400 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want 400 with %q", q, code, body, want)
		}
	}
	if code, _, body := status(t, srv, "/debug/pprof/profile?pid=1&off_cpu=maybe", "", nil); code != 400 || !strings.Contains(body, "off_cpu=maybe: want 1 or 0") {
		t.Errorf("off_cpu=maybe: %d %q", code, body)
	}
}

// TestPeerUsers: on loopback without a token, the kernel names the
// connection's user. Root (clrspy's user here) reads everything; another
// user (runuser -u clrspy-test curl) gets 403 on /metrics and the web
// view, /targets lists only its own processes, a pid endpoint of another
// user's process is 403 and one of its own goes on; /healthz is open.
func TestPeerUsers(t *testing.T) {
	uid, _ := plant.User(t)
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{"no-such-process-here"}}})
	fakeTarget(d, "4242", 0)
	fakeTarget(d, "4343", uid)
	h, err := d.Handler(HandlerOptions{LoopbackHosts: true, PeerUsers: true, HeapEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = connContext
	srv.Start()
	t.Cleanup(srv.Close)
	// As root.
	if code, _, body := status(t, srv, "/metrics", "", nil); code != 200 {
		t.Errorf("root /metrics: %d %q", code, body)
	}
	if code, _, body := status(t, srv, "/targets", "", nil); code != 200 || !strings.Contains(body, `"pid": 4242`) || !strings.Contains(body, `"pid": 4343`) {
		t.Errorf("root /targets: %d %q", code, body)
	}
	// As the other user.
	curl := func(path string) (int, string) {
		t.Helper()
		cmd := exec.Command("curl", "-s", "-w", "\n%{http_code}", srv.URL+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl %s as uid %d: %v", path, uid, err)
		}
		s := strings.TrimSpace(string(out))
		i := strings.LastIndexByte(s, '\n')
		code, _ := strconv.Atoi(s[i+1:])
		return code, strings.TrimSpace(s[:max(i, 0)])
	}
	for path, want := range map[string]int{"/metrics": 403, "/targets.json": 403, "/healthz": 200,
		"/debug/pprof/heap?pid=4242": 403, "/triage?pid=4242&seconds=1": 403, "/debug/pprof/profile?pid=4242&seconds=1": 403, "/debug/stacks?pid=4242": 403} {
		code, body := curl(path)
		if code != want || code == 403 && (!strings.HasPrefix(body, "forbidden: ") || strings.Count(body, "\n") > 0) {
			t.Errorf("uid %d %s: %d %q, want %d", uid, path, code, body, want)
		}
	}
	if code, body := curl("/targets"); code != 200 || strings.Contains(body, "4242") || !strings.Contains(body, `"pid": 4343`) {
		t.Errorf("uid %d /targets: %d %q, want its own process only", uid, code, body)
	}
	// Its own process passes the check (and gets the answer of a target
	// with no session yet, not 403).
	if code, body := curl("/triage?pid=4343&seconds=1"); code != 503 || body != "pid 4343: no session yet" {
		t.Errorf("uid %d, its own process: %d %q", uid, code, body)
	}
	if u, err := PeerUID("127.0.0.1:1", "127.0.0.1:2"); err == nil {
		t.Errorf("PeerUID of no socket: %d", u)
	}
	if a, _ := procNetAddr("127.0.0.1:9464"); a != "0100007F:24F8" {
		t.Errorf("procNetAddr: %s", a)
	}
	if a, _ := procNetAddr("[::1]:80"); a != fmt.Sprintf("%08X%08X%08X%08X:0050", 0, 0, 0, 0x01000000) {
		t.Errorf("procNetAddr v6: %s", a)
	}
}
