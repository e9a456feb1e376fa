using System.Diagnostics;

namespace Workload;

// Churn allocates short-lived objects (gen0 GCs), keeps a sliding window of
// medium-lived ones (promotions, gen1 GCs), replaces an old generation of
// survivors now and then (gen2 GCs) and allocates large arrays (LOH).
// Options: seconds (default 3) or iterations (outer loops; wins over
// seconds), window (live objects kept, 20000), loh (every Nth iteration
// allocates an 100 KB array, 50), gen2 (induced blocking gen2 GCs at the
// end, 0: how many gen2 GCs the churn itself makes depends on the
// machine's cache size, so a test that needs one asks). GC flavor comes from DOTNET_gcServer and
// DOTNET_gcConcurrent. With phases=1 it runs until told to end (Progress);
// with pauselog=1 it records the runtime's pause per GC (PauseLog).
public sealed class Churn : IWorkload
{
    public string Name => "churn";

    sealed class Node
    {
        public Node? Next;
        public byte[] Data = new byte[48];
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 3);
        long iterations = opt.Long("iterations", 0);
        int window = opt.Int("window", 20000);
        int lohEvery = opt.Int("loh", 50);
        var ring = new Node?[window];
        var old = new List<Node>();
        long objects = 0, loh = 0, i = 0, sink = 0;
        PauseLog.Start(opt);
        var sw = Stopwatch.StartNew();
        while (Progress.Phased ? !Progress.Ended : iterations > 0 ? i < iterations : sw.Elapsed.TotalSeconds < seconds)
        {
            Progress.Count = i;
            for (int k = 0; k < 1000; k++)
            {
                if (PauseLog.On) PauseLog.Check();
                var n = new Node();
                objects++;
                // Every 10th survives for a while in the ring.
                if (k % 10 == 0) ring[(objects / 10) % window] = n;
                sink += n.Data.Length;
            }
            if (PauseLog.On) PauseLog.Check();
            if (i % 200 == 0)
            {
                // Renew the old generation: what was old dies in gen2.
                old = new List<Node>(5000);
                for (int k = 0; k < 5000; k++) old.Add(new Node());
                objects += 5000;
            }
            if (lohEvery > 0 && i % lohEvery == 0)
            {
                var big = new byte[100_000];
                big[0] = 1;
                sink += big.Length;
                loh++;
            }
            i++;
        }
        for (int g = opt.Int("gen2", 0); g > 0; g--) GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        sw.Stop();
        if (PauseLog.On) PauseLog.Check();
        PauseLog.Save(work);
        work["iterations"] = i;
        work["objects"] = objects;
        work["lohAllocations"] = loh;
        work["seconds"] = sw.Elapsed.TotalSeconds;
        work["iterationsPerSecond"] = i / sw.Elapsed.TotalSeconds;
        work["sink"] = sink + old.Count;
    }
}
