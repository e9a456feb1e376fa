namespace Workload;

// Induced calls GC.Collect a known number of times per generation.
// Options: gen0, gen1, gen2 (counts, default 2 each), blocking (1: forced
// blocking collections, the default; 0: GCCollectionMode.Optimized),
// pauselog=1 (what GC.GetTotalPauseDuration adds at each GC, PauseLog).
public sealed class Induced : IWorkload
{
    public string Name => "induced";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        var keep = new List<object>();
        for (int k = 0; k < 10000; k++) keep.Add(new byte[64]);
        bool blocking = opt.Int("blocking", 1) != 0;
        var mode = blocking ? GCCollectionMode.Forced : GCCollectionMode.Optimized;
        int[] counts = { opt.Int("gen0", 2), opt.Int("gen1", 2), opt.Int("gen2", 2) };
        PauseLog.Start(opt);
        for (int g = 0; g < 3; g++)
        {
            for (int k = 0; k < counts[g]; k++)
            {
                GC.Collect(g, mode, blocking);
                if (PauseLog.On) PauseLog.Check();
                Thread.Sleep(opt.Int("sleepMs", 20));
            }
        }
        if (PauseLog.On) PauseLog.Check();
        PauseLog.Save(work);
        work["induced0"] = counts[0];
        work["induced1"] = counts[1];
        work["induced2"] = counts[2];
        work["kept"] = keep.Count;
    }
}
