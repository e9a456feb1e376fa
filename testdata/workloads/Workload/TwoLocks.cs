using System.Diagnostics;

namespace Workload;

// TwoLocks runs two groups of threads over two Monitors of different heat:
// the first half of the threads take the hot lock and hold it hotMs per
// acquisition, the others take the cold lock and hold it coldMs, the same
// number of times, so the hot lock's waits are about hotMs/coldMs times
// longer. The lock objects have their own types (HotGate, ColdGate) so a
// report can be checked for the object type. Options: threads (6, split
// evenly), iterations (10), hotMs (20), coldMs (4). Reports the threads'
// OS ids and the measured wait per lock.
public sealed class TwoLocks : IWorkload
{
    public string Name => "twolocks";

    sealed class HotGate { }
    sealed class ColdGate { }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int threads = opt.Int("threads", 6);
        int iterations = opt.Int("iterations", 10);
        int hotMs = opt.Int("hotMs", 20);
        int coldMs = opt.Int("coldMs", 4);
        var hot = new HotGate();
        var cold = new ColdGate();
        var tids = new int[threads];
        var hotWait = new double[threads];
        var coldWait = new double[threads];
        using var start = new Barrier(threads);
        var ts = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int me = t;
            ts[t] = new Thread(() =>
            {
                tids[me] = Native.Tid();
                start.SignalAndWait();
                bool isHot = me < threads / 2;
                for (int k = 0; k < iterations; k++)
                {
                    if (isHot) hotWait[me] += Take(hot, hotMs);
                    else coldWait[me] += Take(cold, coldMs);
                    Thread.Yield();
                }
            }) { Name = $"twolocks-{t}" };
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();
        work["threads"] = threads;
        work["tids"] = tids;
        work["hotWaitMs"] = hotWait.Sum();
        work["coldWaitMs"] = coldWait.Sum();
        work["hotType"] = typeof(HotGate).FullName!;
        work["coldType"] = typeof(ColdGate).FullName!;
    }

    // Take locks gate, holds it ms milliseconds and returns how long the
    // acquisition waited.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static double Take(object gate, int ms)
    {
        var sw = Stopwatch.StartNew();
        Monitor.Enter(gate);
        double waited = sw.Elapsed.TotalMilliseconds;
        try { Thread.Sleep(ms); }
        finally { Monitor.Exit(gate); }
        return waited;
    }
}
