using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workload;

// Cpu alternates between two CPU-bound methods, HotA and HotB, in a known
// ratio of work (ratio, default 3: HotA does 3 units for every unit of
// HotB), for seconds (default 3) or a fixed number of rounds (rounds, wins
// over seconds; with phases=1 until told to end, see Progress). It reports
// the time measured in each.
public sealed class Cpu : IWorkload
{
    public string Name => "cpu";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 3);
        int ratio = opt.Int("ratio", 3);
        long maxRounds = opt.Long("rounds", 0);
        const int unit = 200_000;
        double aMs = 0, bMs = 0;
        long rounds = 0, sink = 0;
        var total = Stopwatch.StartNew();
        while (Progress.Phased ? !Progress.Ended : maxRounds > 0 ? rounds < maxRounds : total.Elapsed.TotalSeconds < seconds)
        {
            Progress.Count = rounds;
            var sw = Stopwatch.StartNew();
            sink += HotA(unit * ratio);
            aMs += sw.Elapsed.TotalMilliseconds;
            sw.Restart();
            sink += HotB(unit);
            bMs += sw.Elapsed.TotalMilliseconds;
            rounds++;
        }
        work["ratio"] = ratio;
        work["rounds"] = rounds;
        work["hotAMs"] = aMs;
        work["hotBMs"] = bMs;
        work["measuredRatio"] = bMs > 0 ? aMs / bMs : 0;
        work["sink"] = sink;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long HotA(int n)
    {
        long x = 1;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005 + 1442695040888963407;
        return x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long HotB(int n)
    {
        long x = 7;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005 + 1442695040888963407;
        return x;
    }
}
