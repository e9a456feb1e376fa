using System.Diagnostics;

namespace Workload;

// LongGen2 builds a big live object graph (nodes, default 3000000 linked
// objects) and forces blocking, compacting gen2 GCs (count, default 2): each
// must mark the whole graph, so its pause is long and known from
// GC.GetGCMemoryInfo(GCKind.FullBlocking).
public sealed class LongGen2 : IWorkload
{
    public string Name => "longgen2";

    sealed class GraphNode
    {
        public GraphNode? A, B;
        public long V;
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int nodes = opt.Int("nodes", 3_000_000);
        int count = opt.Int("count", 2);
        var all = new GraphNode[nodes];
        for (int i = 0; i < nodes; i++)
        {
            all[i] = new GraphNode { V = i };
            if (i > 0) { all[i].A = all[i - 1]; all[i].B = all[i / 2]; }
        }
        var pauses = new List<double>();
        for (int k = 0; k < count; k++)
        {
            var sw = Stopwatch.StartNew();
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            pauses.Add(sw.Elapsed.TotalMilliseconds);
        }
        work["nodes"] = nodes;
        work["forced"] = count;
        work["collectMs"] = pauses.ToArray();
        work["alive"] = all[nodes - 1].V;
    }
}
