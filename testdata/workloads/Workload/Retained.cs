using System.Diagnostics;

namespace Workload;

// Retained builds a long-lived set of objects (count, default 200000
// RetainedItem objects in a list) and then churns short-lived garbage for
// seconds (default 3) while the set stays alive, so the set is promoted to
// gen2 and moves (or not) across compacting GCs.
public sealed class Retained : IWorkload
{
    public string Name => "retained";

    public sealed class RetainedItem
    {
        public long Id;
        public RetainedItem? Peer;
        public readonly byte[] Pad = new byte[32];
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int count = opt.Int("count", 200000);
        double seconds = opt.Double("seconds", 3);
        var set = new List<RetainedItem>(count);
        for (int i = 0; i < count; i++)
        {
            var it = new RetainedItem { Id = i };
            if (i > 0) it.Peer = set[i - 1];
            set.Add(it);
        }
        var sw = Stopwatch.StartNew();
        long garbage = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            for (int k = 0; k < 10000; k++) { _ = new byte[40]; garbage++; }
        }
        long sum = 0;
        foreach (var it in set) sum += it.Id;
        work["retainedCount"] = count;
        work["garbageObjects"] = garbage;
        work["checksum"] = sum;
        work["gen2AfterRun"] = GC.GetGeneration(set[0]);
    }
}
