using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workload;

// Recursion descends depth frames (default 300) through Recurse and spins
// at the bottom for seconds (default 2), so every stack sample taken
// meanwhile is deeper than 200 frames.
public sealed class Recursion : IWorkload
{
    public string Name => "recursion";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int depth = opt.Int("depth", 300);
        double seconds = opt.Double("seconds", 2);
        long r = Recurse(depth, seconds);
        work["depth"] = depth;
        work["sink"] = r;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Recurse(int n, double seconds)
    {
        if (n <= 1) return Bottom(seconds);
        return Recurse(n - 1, seconds) + 1;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Bottom(double seconds)
    {
        var sw = Stopwatch.StartNew();
        long x = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
            for (int i = 0; i < 100_000; i++) x = x * 31 + i;
        return x;
    }
}
