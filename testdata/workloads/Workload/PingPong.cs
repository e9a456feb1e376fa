using System.Diagnostics;

namespace Workload;

// PingPong hands a token back and forth between pairs (default 1) of
// threads through AutoResetEvents, doing spin (default 20000) iterations
// of arithmetic between handoffs: every handoff blocks one thread and
// wakes the other, so the process makes about one voluntary context
// switch per handoff, at a rate set by spin. For seconds (default 3) or,
// with phases=1, until told to end (see Progress; Count is the handoffs).
// It is the off-CPU sampler's overhead workload. Reports handoffs,
// handoffs per second and the tids.
public sealed class PingPong : IWorkload
{
    public string Name => "pingpong";

    static long handoffs;

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int pairs = opt.Int("pairs", 1);
        int spin = opt.Int("spin", 20000);
        double seconds = opt.Double("seconds", 3);
        var total = Stopwatch.StartNew();
        var tids = new int[pairs * 2];
        var threads = new List<Thread>();
        volatile_done = false;
        for (int p = 0; p < pairs; p++)
        {
            var ev = new[] { new AutoResetEvent(false), new AutoResetEvent(false) };
            for (int side = 0; side < 2; side++)
            {
                int me = side, slot = p * 2 + side;
                var t = new Thread(() =>
                {
                    tids[slot] = Native.Tid();
                    long x = 0;
                    if (me == 1) ev[1].WaitOne();
                    while (!volatile_done)
                    {
                        for (int i = 0; i < spin; i++) x += i * x + 1;
                        Progress.Count = Interlocked.Increment(ref handoffs);
                        if (Progress.Phased ? Progress.Ended : total.Elapsed.TotalSeconds >= seconds) volatile_done = true;
                        ev[1 - me].Set();
                        if (volatile_done) break;
                        ev[me].WaitOne();
                    }
                    ev[1 - me].Set();
                    GC.KeepAlive(x);
                }) { IsBackground = true, Name = $"pingpong-{p}-{side}" };
                threads.Add(t);
            }
        }
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        double secs = total.Elapsed.TotalSeconds;
        work["pairs"] = pairs;
        work["handoffs"] = handoffs;
        work["handoffsPerSecond"] = handoffs / secs;
        work["tids"] = tids;
    }

    static volatile bool volatile_done;
}
