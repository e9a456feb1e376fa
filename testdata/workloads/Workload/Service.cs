using System.Globalization;

namespace Workload;

// Service runs churn (GCs of every generation) and contention (threads
// waiting on one Monitor) at the same time, as a service would, for
// clrspy serve's end-to-end test. Options: seconds (3) for churn, window
// (20000); lockThreads (3), lockIterations (20), holdMs (10) for
// contention. Each part's measurements are under its name in work
// (work.contention.totalWaitMs: the waits the threads measured).
public sealed class Service : IWorkload
{
    public string Name => "service";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        string seconds = opt.Double("seconds", 3).ToString(CultureInfo.InvariantCulture);
        var parts = new (IWorkload mode, Options opt)[]
        {
            (new Churn(), new Options(new[] { $"seconds={seconds}", $"window={opt.Int("window", 20000)}" })),
            (new Contention(), new Options(new[] { $"threads={opt.Int("lockThreads", 3)}",
                $"iterations={opt.Int("lockIterations", 20)}", $"holdMs={opt.Int("holdMs", 10)}" })),
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
        for (int i = 0; i < parts.Length; i++) work[parts[i].mode.Name] = results[i];
    }
}
