package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/source"
)

func init() {
	commands = append(commands, newRequestsCmd)
	ipc.RegisterProfile("requests", "ASP.NET Core and HttpClient request events, the task library's activity flow, GC, contention and exception events (clrspy requests reads them)",
		func() []ipc.Provider { return requestsProviders(false) })
}

// requestsSet: the request analysis, which reads the request events of
// Kestrel, Hosting and HttpClient (informational, no stacks), the task
// library's activity flow (noFlow: off), the response status through
// DiagnosticSource (noStatus: off) and the runtime's exception
// events, after the pause analysis, which hands it every suspension, and
// the lock analysis, which hands it every wait (contention events).
func requestsSet(noFlow, noStatus bool, slowest int) (*analysis.Set, *analysis.Ref[*requests.Analyzer]) {
	ps := []ipc.Provider{
		{Name: clrevents.ProviderKestrel, Level: 4},
		{Name: clrevents.ProviderHosting, Level: 4},
		{Name: clrevents.ProviderHTTP, Level: 4}}
	if !noStatus {
		// The response status: Hosting's HttpRequestIn.Stop, forwarded
		// with its request id and status (the specs are process-wide).
		ps = append(ps, ipc.Provider{Name: clrevents.ProviderDiagSource, Keywords: clrevents.KeywordsDiagSource, Level: 5, Args: clrevents.DiagSourceArgs})
	}
	if !noFlow {
		ps = append(ps, ipc.Provider{Name: clrevents.ProviderTPL, Keywords: clrevents.KeywordTasksFlowActivityIds, Level: 4})
	}
	s := analysis.NewSet()
	var ra *analysis.Ref[*requests.Analyzer]
	gcpause.In(s, gcpause.Options{MaxGCs: 1, MaxSuspensions: 1}) // its suspensions reach the requests on the Set's bus
	analysis.Add(s, analysis.Spec{Name: "locks", Keep: locks.WantsContention}, func(h *nettrace.Header) *locks.Analyzer {
		return locks.New(h, locks.Options{OnWait: func(w *analysis.Wait) { ra.Get().Wait(w) }, NoSamples: true, NoObjectTypes: true, MaxLocks: 1000, MaxStacks: 1})
	})
	ra = analysis.Add(s, analysis.Spec{Name: "requests", Keep: requests.Wants, Providers: ps}, func(h *nettrace.Header) *requests.Analyzer {
		return requests.New(h, requests.Options{Slowest: slowest})
	})
	return s, ra
}

// requestsProviders is the requests command's session (the requests
// profile's).
func requestsProviders(noFlow bool) []ipc.Provider {
	s, _ := requestsSet(noFlow, false, 0)
	return s.Providers()
}

func newRequestsCmd() *cobra.Command {
	var asJSON, noFlow, noStatus bool
	var out string
	var slowest int
	c := &cobra.Command{
		Use:   "requests [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "ASP.NET Core requests: latency per route and what GC pauses, locks and calls cost each one",
		Long: `requests pairs the requests an ASP.NET Core server reports (Kestrel's
RequestStart/RequestStop by request id; Hosting's by activity id where no Kestrel
events come) and breaks each request's wall time down: GC paused (the exact
overlap of the request with every stop-the-world GC pause), other runtime
suspensions, lock waits and blocked time of the threads that ran it, outgoing
HttpClient calls (time and count) and exceptions thrown while it ran.

Per route (the path with numbers and ids folded: /orders/{n}) it reports the
count, rate, p50/p90/p99/p99.9 and max latency, the requests a GC pause hit, and
p99 of those hit and of those not hit; per GC, the requests in flight it froze
and the request time it cost; and the slowest requests (--slowest) whole.

A live session turns on the task library's activity flow (TplEventSource
keyword 0x80) so that outgoing calls and waits on any thread are attributed to
their request; --no-flow leaves it off (cheaper for the target: threads are
then attributed to the request that last started on them and outgoing calls
are counted, not timed). The request events are taken without stacks.

The response status comes from Hosting's HttpRequestIn.Stop, which
Microsoft-Diagnostics-DiagnosticSource forwards with the specs clrspy gives it.
Those specs are process-wide: the last session to enable the provider sets them
for every session, so clrspy's replace another tool's (dotnet-monitor's, say)
and another's replace clrspy's (the report then says the status is unknown).
--no-status leaves DiagnosticSource alone.

Output: text (default) or --json (contract: docs/requests.md).`,
		Example: `  clrspy requests --pid 1234 --duration 30s
  clrspy requests --json app.nettrace | jq '.routes[] | {route, p99_ms, hit_by_pause}'
  clrspy requests --slowest 50 -- dotnet api.dll`,
	}
	t := addReadFlags(c, 1)
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	f.StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout")
	f.IntVar(&slowest, "slowest", requests.DefaultSlowest, "how many of the slowest requests to show whole")
	f.BoolVar(&noFlow, "no-flow", false, "live sessions: leave the task library's activity flow off (outgoing calls are then not timed)")
	f.BoolVar(&noStatus, "no-status", false, "live sessions: leave Microsoft-Diagnostics-DiagnosticSource alone (its specs are process-wide); statuses are then unknown")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if slowest < 1 {
			return fmt.Errorf("--slowest %d: want 1 or more", slowest)
		}
		if noFlow && !t.live(cmd) {
			return fmt.Errorf("--no-flow applies to live sessions: a trace file's events already carry activity ids or not")
		}
		if noStatus && !t.live(cmd) {
			return fmt.Errorf("--no-status applies to live sessions: a trace file's events carry the status or not")
		}
		return runRequests(cmd, t, args, asJSON, out, slowest, noFlow, noStatus)
	}
	return c
}

func runRequests(cmd *cobra.Command, t *targetFlags, args []string, asJSON bool, out string, slowest int, noFlow, noStatus bool) error {
	set, ra := requestsSet(noFlow, noStatus, slowest)
	r, err := runSet(cmd, t, args, set, setRun{keep: true, edit: func(s *source.Spec) { s.NoStackwalk = true }})
	if err != nil {
		return err
	}
	res := ra.Get().Result()
	return r.write(cmd, out, func(w io.Writer) error { return writeRequests(w, r.in, res, asJSON) })
}

func writeRequests(w io.Writer, in report.Input, res *requests.Result, asJSON bool) error {
	if asJSON {
		return report.WriteRequestsJSON(w, report.NewRequestsDocument(in, res))
	}
	return report.WriteRequestsText(w, in, res)
}
