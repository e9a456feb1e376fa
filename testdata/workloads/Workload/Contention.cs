using System.Diagnostics;

namespace Workload;

// Contention runs N threads that each take one shared lock (a Monitor)
// a number of times and hold it for a known time, so every acquisition but
// the first waits. Options: threads (4), iterations per thread (10), holdMs
// (20), spin (0: the holder sleeps; 1: it computes for holdMs, so the
// process is busy in SpinHold while the others wait). It reports every
// thread's OS thread id, its measured total wait and the lock's hold time
// so a lock profile can be checked against them; with spin=1 also the
// threads' CPU time in SpinHold (holdCpuMs) and the process's CPU time
// during the run (runCpuMs) and since it started (processCpuMs).
// contended counts the acquisitions that found the lock held when
// Monitor.Enter began (what the runtime reports as contentions); raced
// counts those TryEnter found held but whose holder let go before Enter
// began (no contention for the runtime; their time is not in waitMs).
public sealed class Contention : IWorkload
{
    public string Name => "contention";

    static readonly object Gate = new();

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int threads = opt.Int("threads", 4);
        int iterations = opt.Int("iterations", 10);
        int holdMs = opt.Int("holdMs", 20);
        bool spin = opt.Int("spin", 0) != 0;
        var holdCpu = new double[threads];
        var proc = Process.GetCurrentProcess();
        var cpu0 = proc.TotalProcessorTime;
        var tids = new int[threads];
        var waitMs = new double[threads];
        var contended = new int[threads];
        var raced = new int[threads];
        using var start = new Barrier(threads);
        var ts = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int me = t;
            ts[t] = new Thread(() =>
            {
                tids[me] = Native.Tid();
                start.SignalAndWait();
                for (int k = 0; k < iterations; k++)
                {
                    var sw = Stopwatch.StartNew();
                    bool free = Monitor.TryEnter(Gate);
                    bool waited = false;
                    if (!free)
                    {
                        long e0 = Stopwatch.GetTimestamp();
                        Monitor.Enter(Gate);
                        // TryEnter found the lock held, but the holder may
                        // have let go before Enter began (this thread was
                        // preempted in between, common on a loaded
                        // machine): then Enter takes a free lock, the
                        // runtime sees no contention and fires no event.
                        // The last holder stamps its release under the
                        // lock, so a release before e0 tells that race.
                        waited = Volatile.Read(ref lastRelease) >= e0;
                        if (waited) contended[me]++;
                        else raced[me]++;
                    }
                    sw.Stop();
                    if (waited) waitMs[me] += sw.Elapsed.TotalMilliseconds;
                    try
                    {
                        if (spin)
                        {
                            long c0 = MixedKernels.ThreadCpuNs();
                            SpinHold(holdMs);
                            holdCpu[me] += (MixedKernels.ThreadCpuNs() - c0) / 1e6;
                        }
                        else Hold(holdMs);
                    }
                    finally
                    {
                        Volatile.Write(ref lastRelease, Stopwatch.GetTimestamp());
                        Monitor.Exit(Gate);
                    }
                    Thread.Yield();
                }
            }) { Name = $"contender-{t}" };
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();
        work["threads"] = threads;
        work["iterations"] = iterations;
        work["holdMs"] = holdMs;
        work["tids"] = tids;
        work["waitMs"] = waitMs;
        work["contended"] = contended;
        work["raced"] = raced.Sum();
        work["totalWaitMs"] = waitMs.Sum();
        if (spin)
        {
            proc.Refresh();
            work["holdCpuMs"] = holdCpu.Sum();
            work["runCpuMs"] = (proc.TotalProcessorTime - cpu0).TotalMilliseconds;
            work["processCpuMs"] = proc.TotalProcessorTime.TotalMilliseconds;
        }
    }

    // Hold keeps the lock for ms milliseconds by sleeping inside it.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void Hold(int ms) => Thread.Sleep(ms);

    static long spinSink;

    // lastRelease is the Stopwatch timestamp of the lock's last release.
    static long lastRelease;

    // SpinHold keeps the lock for ms milliseconds computing.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static void SpinHold(int ms)
    {
        var sw = Stopwatch.StartNew();
        long x = spinSink;
        while (sw.ElapsedMilliseconds < ms)
            for (int i = 0; i < 10000; i++) x = x * 6364136223846793005 + 1442695040888963407;
        spinSink = x;
    }
}
