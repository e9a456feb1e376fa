namespace Workload;

// Lifetimes allocates two same-sized types in known proportions for
// clrspy heap: ShortLived objects are dropped at once; of the LongLived
// objects one in `keep` (default 2) is kept in a list through `hold`
// induced blocking gen2 GCs (default 6) and then released before one induced blocking compacting gen2
// GC. It prints the truth: counts, the kept fraction, and the GC index
// (GCStart.Count) of the GC that must find the released objects dead.
public sealed class Lifetimes : IWorkload
{
    public string Name => "lifetimes";

    public sealed class ShortLived { public long A, B, C, D, E, F; }
    public sealed class LongLived { public long A, B, C, D, E, F; }

    static object? sink;

    // Drop publishes an object (so the JIT cannot keep it on the stack) and
    // forgets it at once, so nothing but `kept` holds an object at a GC.
    static void Drop(object o)
    {
        Volatile.Write(ref sink, o);
        Volatile.Write(ref sink, null);
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        long n = opt.Long("objects", 4_000_000);
        int keep = opt.Int("keep", 2);
        int hold = opt.Int("hold", 6);
        var kept = new List<LongLived>();
        long shortN = 0, longN = 0;
        for (long i = 0; i < n; i++)
        {
            if ((i & 1) == 0)
            {
                Drop(new ShortLived { A = i });
                shortN++;
            }
            else
            {
                var l = new LongLived { A = i };
                longN++;
                if (longN % keep == 0) kept.Add(l); else Drop(l);
            }
        }
        // Induced gen2 GCs, not allocation: every kept object is then in a
        // condemned generation `hold` times on any machine (allocation-driven
        // GCs are mostly gen0 ones whose count and depth depend on the
        // machine's cache size; a CI machine made too few to hold anything).
        for (int h = 0; h < hold; h++)
        {
            for (int k = 0; k < 10000; k++) Drop(new byte[64]);
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: false);
        }
        work["keptCount"] = kept.Count;
        work["shortLived"] = shortN;
        work["longLived"] = longN;
        work["keptFraction"] = 1.0 / keep;
        kept.Clear();
        kept = null;
        sink = null;
        int before = GC.CollectionCount(0);
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        work["gcsBeforeRelease"] = before;
        work["releaseGC"] = GC.CollectionCount(0);
        for (int k = 0; k < 100000; k++) Drop(new byte[64]);
    }
}
