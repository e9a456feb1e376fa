using System.Diagnostics;

namespace Workload;

// Leak is a slow leak: a static list that grows steadily (leakKBps KB a
// second, default 8192, in 1 KB arrays: small objects, so no large-object
// GCs) while short-lived garbage churns (churnMBps, default 64), for
// seconds (default 10). The GCs promote the list into gen2, which grows
// across the run. Reports what it kept (work.leakedMB) and gen2's size
// after the last GC (GC.GetGCMemoryInfo).
public sealed class Leak : IWorkload
{
    public string Name => "leak";

    static readonly List<byte[]> Kept = new();
    // The garbage goes through here: an array that does not escape would be
    // allocated on the stack (.NET 10's escape analysis) and never collected.
    static readonly byte[]?[] Recent = new byte[64][];

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 10);
        int leakKBps = opt.Int("leakKBps", 8192);
        int churnMBps = opt.Int("churnMBps", 64);
        var sw = Stopwatch.StartNew();
        long kept = 0, garbage = 0;
        // 20 steps a second: each keeps leakKBps/20 KB and drops churnMBps/20 MB.
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            var step = Stopwatch.StartNew();
            for (int i = 0; i < leakKBps / 20; i++) { Kept.Add(new byte[1024]); kept++; }
            for (long b = 0; b < (long)churnMBps * 1024 * 1024 / 20; b += 256) { Recent[garbage & 63] = new byte[232]; garbage++; }
            var left = 50 - step.Elapsed.TotalMilliseconds;
            if (left > 0) Thread.Sleep(TimeSpan.FromMilliseconds(left));
        }
        work["leakedMB"] = kept / 1024.0;
        work["garbageObjects"] = garbage;
        work["gen2SizeMB"] = GC.GetGCMemoryInfo().GenerationInfo[2].SizeAfterBytes / 1048576.0;
    }
}
