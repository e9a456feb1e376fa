using System.Globalization;

namespace Workload;

// Composite runs churn, cpu and contention at the same time on their own
// threads, then induces one blocking gen2 GC: a trace of it has GCs of
// every generation and type, CPU samples with known hot methods (HotA and
// HotB), contended locks and allocations, the material of one report page.
// Options: seconds (2) for churn and cpu, window (20000) for churn, ratio
// (3) for cpu, lockThreads (3), lockIterations (10) and holdMs (10) for
// contention. Each mode's measurements are under its name in work.
public sealed class Composite : IWorkload
{
    public string Name => "composite";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        string seconds = opt.Double("seconds", 2).ToString(CultureInfo.InvariantCulture);
        var parts = new (IWorkload mode, Options opt)[]
        {
            (new Churn(), new Options(new[] { $"seconds={seconds}", $"window={opt.Int("window", 20000)}" })),
            (new Cpu(), new Options(new[] { $"seconds={seconds}", $"ratio={opt.Int("ratio", 3)}" })),
            (new Contention(), new Options(new[] { $"threads={opt.Int("lockThreads", 3)}",
                $"iterations={opt.Int("lockIterations", 10)}", $"holdMs={opt.Int("holdMs", 10)}" })),
        };
        var results = new Dictionary<string, object>[parts.Length];
        var threads = new Thread[parts.Length];
        for (int i = 0; i < parts.Length; i++)
        {
            int me = i;
            results[me] = new Dictionary<string, object>();
            threads[me] = new Thread(() => parts[me].mode.Run(parts[me].opt, results[me])) { Name = parts[me].mode.Name };
            threads[me].Start();
        }
        foreach (var t in threads) t.Join();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        for (int i = 0; i < parts.Length; i++) work[parts[i].mode.Name] = results[i];
    }
}
