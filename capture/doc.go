// Package capture holds the one-shot jobs that both `clrspy` commands and
// serve's endpoints run on a target: a heap snapshot (the pause analysis
// and the graph's builder, the graph's memory policy, the graph built
// once the stream has ended), and, as they move here, the profiles and
// the triage window. A job takes a stream its caller opened (flags and
// openTarget for the command, the monitored target for serve) and hands
// back a result; the session's opening, the output and the logging stay
// the caller's. Jobs run on one stream: no job opens another session.
package capture
