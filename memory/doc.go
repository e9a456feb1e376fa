// Package memory splits a process's resident memory into what holds it:
// the GC heap and the GC's bookkeeping, the runtime's JIT code and loader
// heaps, the native heap (malloc), thread stacks, mapped images by module,
// and other anonymous memory. The parts add up to the process's RSS
// exactly: every mapping of /proc/PID/smaps is given to one part.
//
// It owns the classification (Classify: smaps entries and what the runtime
// said of its own addresses in, a Split out) and the judgement over a
// timeline of splits (Judge: which part grows), and the accounting of
// sampled native allocations (native.go: ByteSampler decides which
// allocator calls are sampled, by bytes, and weighs them without bias;
// Native pairs calls with their returns, follows sampled blocks by address
// until freed and sums outstanding and allocated bytes by stack). It does no I/O: the
// command reads smaps and the cgroup files (internal/procfs) and samples.
package memory
