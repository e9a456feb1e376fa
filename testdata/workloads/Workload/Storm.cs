using System.Diagnostics;

namespace Workload;

// Storm is an exception storm: one thread throws and catches
// InvalidOperationException in a loop for seconds (default 10), pausing
// 1 ms every `burst` (default 200) throws so the rest of the process
// still runs. Reports the exceptions it threw (work.thrown) and the rate.
public sealed class Storm : IWorkload
{
    public string Name => "storm";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 10);
        int burst = opt.Int("burst", 200);
        var sw = Stopwatch.StartNew();
        long thrown = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            for (int i = 0; i < burst; i++)
            {
                try { Throw(thrown); }
                catch (InvalidOperationException) { thrown++; }
            }
            Thread.Sleep(1);
        }
        work["thrown"] = thrown;
        work["perSec"] = thrown / sw.Elapsed.TotalSeconds;
    }

    static void Throw(long n) => throw new InvalidOperationException("storm " + n);
}
