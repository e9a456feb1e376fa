package metrics

// The thread pool's families (monitor.Options.ThreadPool; clrspy
// threadpool's analysis, package threadpool).
var (
	famTPEpisodes = &Family{Name: "clrspy_thread_pool_starvation_episodes_total", OTel: "clrspy.thread_pool.starvation_episodes", OTelUnit: "{episode}", Kind: Counter,
		Help:   "Thread-pool starvation episodes since the session began that lasted 100 ms: from the pool's first injection because its threads were blocked (starvation, cooperative blocking) until a worker parks or the queue empties (clrspy threadpool).",
		Labels: target()}
	famTPInjections = &Family{Name: "clrspy_thread_pool_injections_total", OTel: "clrspy.thread_pool.injections", OTelUnit: "{thread}", Kind: Counter,
		Help:   "Times the thread pool raised its target thread count since the session began, by the runtime's reason (warmup, initializing, random_move, climbing_move, change_point, stabilizing, starvation, thread_timed_out, cooperative_blocking).",
		Labels: target(LabelReason)}
	famTPBlocked = &Family{Name: "clrspy_thread_pool_blocked_seconds_total", OTel: "clrspy.thread_pool.blocked", OTelUnit: "s", Kind: Counter,
		Help:   "Time thread-pool worker threads spent blocked in finished waits since the session began: lock contention (and WaitHandle waits, verbose events serve's session does not ask for); the blocking call sites are clrspy threadpool's.",
		Labels: target()}
)

// The thread-pool families come after the others in the exposition. A
// variable's initializer, not init: families.go's init describes every
// family in ownFamilies, and package variables are set before any init.
var _ = func() bool {
	ownFamilies = append(ownFamilies, famTPEpisodes, famTPInjections, famTPBlocked)
	return true
}()
