using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workload;

// Cpu alternates between two CPU-bound methods, HotA and HotB, in a known
// ratio of work (ratio, default 3: HotA does 3 units for every unit of
// HotB), for seconds (default 3) or a fixed number of rounds (rounds, wins
// over seconds; with phases=1 until told to end, see Progress). It reports
// the time measured in each: wall (hotAMs, hotBMs) and the thread's CPU
// time with cpuTime=1 (hotACpuMs, hotBCpuMs: what a CPU-time sampler,
// perf_event's cpu-clock, sees, where a loaded machine stretches wall time
// unevenly), and the calls' time off the CPU (offCpuMs, offCpuSqMs2:
// the sum of wall less CPU per call, and of its squares). Off by default: the clock_gettime P/Invokes around each call
// are native time the runtime's own sampler would see.
public sealed class Cpu : IWorkload
{
    public string Name => "cpu";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 3);
        int ratio = opt.Int("ratio", 3);
        bool cpuTime = opt.Int("cpuTime", 0) == 1;
        long maxRounds = opt.Long("rounds", 0);
        const int unit = 200_000;
        double aMs = 0, bMs = 0, aCpu = 0, bCpu = 0, off = 0, off2 = 0;
        long rounds = 0, sink = 0;
        // threads>1 (triage's CPU-bound process): as many more threads
        // spin in HotA until the main loop ends.
        int extra = opt.Int("threads", 1) - 1;
        var spinning = true;
        var spinners = new List<Thread>();
        for (int t = 0; t < extra; t++)
        {
            var th = new Thread(() => { long s = 0; while (Volatile.Read(ref spinning)) s += HotA(unit); GC.KeepAlive(s); }) { IsBackground = true };
            th.Start();
            spinners.Add(th);
        }
        var total = Stopwatch.StartNew();
        // minCpuMs (with cpuTime=1): past seconds, go on until HotA and HotB
        // have had that much CPU time, up to 4 x seconds of wall: a loaded
        // machine gives the thread a fraction of a core, and a CPU-time
        // sampler needs the CPU time, not the wall time, for its samples.
        double minCpuMs = cpuTime ? opt.Double("minCpuMs", 0) : 0;
        bool More() => total.Elapsed.TotalSeconds < seconds ||
            (aCpu + bCpu < minCpuMs && total.Elapsed.TotalSeconds < 4 * seconds);
        while (Progress.Phased ? !Progress.Ended : maxRounds > 0 ? rounds < maxRounds : More())
        {
            Progress.Count = rounds;
            long c0 = cpuTime ? MixedKernels.ThreadCpuNs() : 0;
            double aMs0 = aMs, bMs0 = bMs;
            var sw = Stopwatch.StartNew();
            sink += HotA(unit * ratio);
            aMs += sw.Elapsed.TotalMilliseconds;
            long c1 = cpuTime ? MixedKernels.ThreadCpuNs() : 0;
            sw.Restart();
            sink += HotB(unit);
            bMs += sw.Elapsed.TotalMilliseconds;
            long c2 = cpuTime ? MixedKernels.ThreadCpuNs() : 0;
            aCpu += (c1 - c0) / 1e6;
            bCpu += (c2 - c1) / 1e6;
            if (cpuTime)
            {
                // Time the call spent off the CPU (preempted or suspended):
                // its wall less its CPU time. A loaded machine's waits come
                // in few long chunks; their sum and sum of squares tell how
                // many independent chunks the wall time holds (see
                // cmd/clrspy's TestProfileLiveCPU).
                double offA = Math.Max(0, aMs - aMs0 - (c1 - c0) / 1e6);
                double offB = Math.Max(0, bMs - bMs0 - (c2 - c1) / 1e6);
                off += offA + offB;
                off2 += offA * offA + offB * offB;
            }
            rounds++;
        }
        Volatile.Write(ref spinning, false);
        foreach (var th in spinners) th.Join();
        work["ratio"] = ratio;
        work["rounds"] = rounds;
        work["hotAMs"] = aMs;
        work["hotBMs"] = bMs;
        work["hotACpuMs"] = aCpu;
        work["hotBCpuMs"] = bCpu;
        work["offCpuMs"] = off;
        work["offCpuSqMs2"] = off2;
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
