using System.Diagnostics;

namespace Workload;

// GcLock runs, for seconds (default 10), one thread calling
// GC.Collect(2) (forced, blocking) every gcEveryMs (500) and lockThreads
// (6) threads taking one shared Monitor in turn, each holding it for
// holdMs (50): a process steadily past triage's induced-GC, blocking-gen2
// and lock-wait thresholds, for comparing the surfaces that judge it.
// It reports the GC.Collect calls (collects) and the lock acquisitions
// (acquired).
public sealed class GcLock : IWorkload
{
    public string Name => "gclock";

    static readonly object Gate = new();

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 10);
        int every = opt.Int("gcEveryMs", 500);
        int n = opt.Int("lockThreads", 6);
        int hold = opt.Int("holdMs", 50);
        var total = Stopwatch.StartNew();
        long acquired = 0;
        var ts = new Thread[n];
        for (int i = 0; i < n; i++)
        {
            ts[i] = new Thread(() =>
            {
                while (total.Elapsed.TotalSeconds < seconds)
                {
                    lock (Gate)
                    {
                        Thread.Sleep(hold);
                    }
                    Interlocked.Increment(ref acquired);
                }
            }) { Name = "gclock" };
            ts[i].Start();
        }
        int collects = 0;
        while (total.Elapsed.TotalSeconds < seconds)
        {
            GC.Collect(2, GCCollectionMode.Forced, blocking: true);
            collects++;
            Thread.Sleep(every);
        }
        foreach (var t in ts) t.Join();
        work["collects"] = collects;
        work["acquired"] = acquired;
    }
}
