using System.Diagnostics;

namespace Workload;

// BgcMix makes many background gen2 GCs with ephemeral GCs interleaved: a
// large live graph (nodes objects, each with a small array) that slowly
// changes (a few nodes replaced per step) sits in gen2 while the main
// thread allocates short-lived garbage fast; every everyMs it asks for a
// background GC (GC.Collect(2, Forced, blocking: false)). The garbage
// keeps triggering gen0/gen1 GCs while each BGC marks and sweeps, so
// foreground GCs run inside BGCs and blocking ones right after them. Run
// it with concurrent workstation GC (the default; DOTNET_gcConcurrent=1,
// DOTNET_gcServer=0).
//
// After every step it reads GC.GetGCMemoryInfo(GCKind.Any) and keeps, for
// each GC index it sees, the runtime's own per-generation figures
// (work.gcs: index, generation, concurrent, sizeBeforeBytes,
// sizeAfterBytes, fragmentationAfterBytes per gen0/gen1/gen2/LOH/POH);
// work.background counts the BGCs GC.GetGCMemoryInfo(Background) named.
public sealed class BgcMix : IWorkload
{
    public string Name => "bgcmix";

    sealed class MixNode
    {
        public MixNode? Next;
        public byte[]? Payload;
        public long V;
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int nodes = opt.Int("nodes", 200_000);
        double seconds = opt.Double("seconds", 3);
        int everyMs = opt.Int("everyMs", 60);
        int mutate = opt.Int("mutate", 500);
        int maxGCs = opt.Int("gcs", 0); // stop after this many GCs (0: by time)

        var all = new MixNode[nodes];
        for (int i = 0; i < nodes; i++)
        {
            all[i] = new MixNode { V = i, Payload = new byte[32] };
            if (i > 0) all[i].Next = all[i - 1];
        }
        // Age the graph into gen2 before the measured part.
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);

        var seen = new Dictionary<long, Dictionary<string, object>>();
        var bgcs = new HashSet<long>();
        int requested = 0, rng = 12345;
        long sink = 0;
        var sw = Stopwatch.StartNew();
        var last = TimeSpan.Zero;
        int startGCs = GC.CollectionCount(0);
        while (sw.Elapsed.TotalSeconds < seconds && (maxGCs == 0 || GC.CollectionCount(0) - startGCs < maxGCs))
        {
            // Short-lived garbage: about 1 MB per step.
            for (int k = 0; k < 2000; k++)
            {
                var tmp = new byte[512];
                sink += tmp.Length;
            }
            // Slowly mutate the old graph so every BGC has new old objects.
            for (int k = 0; k < mutate / 10 + 1; k++)
            {
                rng = rng * 1103515245 + 12345;
                int j = (int)((uint)rng % (uint)nodes);
                all[j] = new MixNode { V = j, Payload = new byte[32], Next = all[(j + 1) % nodes] };
            }
            if ((sw.Elapsed - last).TotalMilliseconds >= everyMs)
            {
                last = sw.Elapsed;
                GC.Collect(2, GCCollectionMode.Forced, blocking: false);
                requested++;
            }
            Record(GC.GetGCMemoryInfo(GCKind.Any), seen);
            var b = GC.GetGCMemoryInfo(GCKind.Background);
            if (b.Index != 0) bgcs.Add(b.Index);
        }
        // Let a running BGC finish so every GC started is in the report.
        GC.Collect(0, GCCollectionMode.Forced, blocking: true);
        Record(GC.GetGCMemoryInfo(GCKind.Any), seen);

        work["nodes"] = nodes;
        work["requested"] = requested;
        work["background"] = bgcs.Count;
        work["backgroundIndexes"] = bgcs.OrderBy(x => x).ToArray();
        work["gcs"] = seen.OrderBy(kv => kv.Key).Select(kv => kv.Value).ToArray();
        work["sink"] = sink + all[nodes - 1].V;
    }

    static void Record(GCMemoryInfo info, Dictionary<long, Dictionary<string, object>> seen)
    {
        if (info.Index == 0 || seen.ContainsKey(info.Index)) return;
        var gens = info.GenerationInfo;
        var before = new long[gens.Length];
        var after = new long[gens.Length];
        var frag = new long[gens.Length];
        for (int i = 0; i < gens.Length; i++)
        {
            before[i] = gens[i].SizeBeforeBytes;
            after[i] = gens[i].SizeAfterBytes;
            frag[i] = gens[i].FragmentationAfterBytes;
        }
        seen[info.Index] = new Dictionary<string, object>
        {
            ["index"] = info.Index,
            ["generation"] = info.Generation,
            ["concurrent"] = info.Concurrent,
            ["sizeBeforeBytes"] = before,
            ["sizeAfterBytes"] = after,
            ["fragmentationAfterBytes"] = frag,
        };
    }
}
