package main

import (
	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

func init() { commands = append(commands, newExceptionsCmd) }

// exceptionsSet: the exception analysis, which reads the exception events
// (each throw with its stack), after the symbol table, which reads the
// method and module events that name the stacks.
func exceptionsSet() (*analysis.Set, *analysis.Ref[*exceptions.Analyzer]) {
	return withSymbols(analysis.Spec{Name: "exceptions", Keep: exceptions.Wants},
		func(h *nettrace.Header, sym *stacks.Symbols) *exceptions.Analyzer {
			return exceptions.New(h, exceptions.Options{Symbols: sym})
		})
}

func newExceptionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "exceptions [FILE|-] [--pid N | --name NAME | -- COMMAND ARGS...]",
		Short: "Exceptions: how many, of which type, with which messages, thrown and caught where",
		Long: `exceptions counts every managed exception the runtime reports (first chance:
each throw, rethrows included, caught or not) and reports, per type: the count,
the messages with numbers, hexadecimal values, GUIDs and ids folded into
patterns ("order <n> not found"), the throw sites (the first application frame
of the throw's stack, outside System.* and Microsoft.* assemblies, and the
stack) and the catch sites (the method the runtime names when a catch clause
runs); how many were caught, left managed code uncaught (the dispatch ended
without a catch) or were still being dispatched when the stream ended (an
unhandled exception that ends the process is one); the rate over time.

Catch sites and the caught/uncaught split need the runtime's exception
handling events (ExceptionCatchStart, ExceptionThrownStop: .NET 9 and later
send them); with older runtimes the counts, messages and throw sites are still
exact. Memory is bounded: past 256 types, 4,096 stacks, 1,024 message patterns
or 1,024 catch sites the rest is counted under "[other ...]" entries, and the
report says so.

Cost: the runtime walks the stack of every exception event; at 10,000
exceptions a second that took a loaded 2-core machine's program a third of its
work (docs/PERFORMANCE.md). A few thousand a second or less is cheap.

Output: a text report (default), --json, or --format pprof (a profile of
exceptions/count by throw stack, the type as a label, readable by go tool
pprof).`,
		Example: `  clrspy exceptions app.nettrace
  clrspy exceptions --pid 1234 --duration 30s
  clrspy exceptions --json app.nettrace | jq '.types[0].throw_sites[0]'
  clrspy exceptions --format pprof -o exc.pb.gz -- dotnet app.dll && go tool pprof -top exc.pb.gz`,
	}
	t, o := addSectionFlags(c, 1, report.ExceptionsSection.Formats())
	c.RunE = o.runE(func(cmd *cobra.Command, args []string) error {
		set, a := exceptionsSet()
		return runSection(cmd, t, args, o, set, a, report.ExceptionsSection)
	})
	return c
}
