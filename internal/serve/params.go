package serve

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// params is a request's query, read by the one parser every endpoint
// uses: each parameter at most once, seconds in plain decimal within the
// endpoint's bounds, words from a fixed list; anything else is 400 with
// one line saying what the parameter takes.
type params struct{ q url.Values }

// badParam is a 400 answer's line.
type badParam string

func (e badParam) Error() string { return string(e) }

func queryParams(r *http.Request) (params, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return params{}, badParam("the query does not parse: " + strings.TrimPrefix(err.Error(), "invalid URL escape "))
	}
	for k, v := range q {
		if len(v) > 1 {
			return params{}, badParam(fmt.Sprintf("%s given %d times: give it once", k, len(v)))
		}
	}
	return params{q}, nil
}

// pid is the required pid parameter (a target's pid label).
func (p params) pid() (string, error) {
	pid := p.q.Get("pid")
	if pid == "" {
		return "", badParam("give pid=N (the pid label; see /targets)")
	}
	return pid, nil
}

// seconds is the seconds parameter (def when absent): a finite plain
// decimal number whose duration is within [minProfile, maxDur]. NaN,
// infinities, hex, underscores, zero, negatives and amounts too small to
// be a duration are refused, so a request never holds a slot or a
// connection without a bound.
func (p params) seconds(def, maxDur time.Duration) (time.Duration, error) {
	s, ok := p.q["seconds"]
	if !ok {
		return def, nil
	}
	d, good := profileSeconds(s[0], maxDur)
	if !good {
		return 0, badParam(fmt.Sprintf("seconds=%s: want a number of seconds from %v to %v", s[0], minProfile.Seconds(), maxDur.Seconds()))
	}
	return d, nil
}

// word is the parameter name, one of allowed (def when absent).
func (p params) word(name, def string, allowed ...string) (string, error) {
	v, ok := p.q[name]
	if !ok {
		return def, nil
	}
	for _, a := range allowed {
		if v[0] == a {
			return a, nil
		}
	}
	return "", badParam(fmt.Sprintf("%s=%s: want %s", name, v[0], orList(allowed)))
}

// flag is a boolean parameter: 1, 0, true or false (false when absent).
func (p params) flag(name string) (bool, bool, error) {
	v, ok := p.q[name]
	if !ok {
		return false, false, nil
	}
	b, err := strconv.ParseBool(v[0])
	if err != nil {
		return false, true, badParam(fmt.Sprintf("%s=%s: want 1 or 0", name, v[0]))
	}
	return b, true, nil
}

func orList(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// minProfile is the shortest profile: below it a duration rounds to
// nothing, and a session's zero duration means "until stopped".
const minProfile = 10 * time.Millisecond

// profileSeconds parses seconds strictly: a finite number whose duration
// is within [minProfile, maxDur].
func profileSeconds(s string, maxDur time.Duration) (time.Duration, bool) {
	// Plain decimal notation only: ParseFloat also takes hex, underscores
	// and the names of NaN and the infinities.
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > maxDur.Seconds() {
		return 0, false
	}
	d := time.Duration(v * float64(time.Second))
	return d, d >= minProfile && d <= maxDur
}

// extendDeadlines moves a request's read and write deadlines past span
// (plus 30 s to write the answer): the server's own (Server) would cut a
// request that waits or streams for its seconds.
func extendDeadlines(w http.ResponseWriter, span time.Duration) {
	rc := http.NewResponseController(w)
	until := time.Now().Add(span + 30*time.Second)
	rc.SetReadDeadline(until)
	rc.SetWriteDeadline(until)
}
