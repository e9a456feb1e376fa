using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Workload;

// NativeChurn calls libc's malloc and free (a P/Invoke each) at a paced
// rate, for the cost of clrspy memory --native to the target: rate
// allocations a second (default 100000) of size bytes (default 64), each
// freed at once, for seconds (default 10), on one thread. The pacing
// catches up in batches of at most a millisecond's worth and sleeps a
// millisecond when ahead, so a target slowed by the probes shows as a
// rate below the asked one. Every second it prints on stderr
// "tick T calls=N cpuMs=C": T the Unix time in ms at the second's end, N
// the allocations made in it, C the process's CPU time in it. via=hglobal
// allocates with Marshal.AllocHGlobal and FreeHGlobal instead (libc's
// malloc and free reached through libSystem.Native's PLT, where a
// preloaded allocator such as heaptrack's sees them; the P/Invokes of
// "libc" are resolved with dlsym in libc.so.6 itself, past it).
// work: calls, seconds.
public sealed class NativeChurn : IWorkload
{
    public string Name => "nativechurn";

    [DllImport("libc", EntryPoint = "malloc")]
    static extern IntPtr malloc(nuint size);

    [DllImport("libc", EntryPoint = "free")]
    static extern void free(IntPtr p);

    public unsafe void Run(Options opt, Dictionary<string, object> work)
    {
        long rate = opt.Long("rate", 100000);
        double seconds = opt.Double("seconds", 10);
        int size = opt.Int("size", 64);
        long batch = Math.Max(1, rate / 1000);
        bool hglobal = opt.Str("via", "libc") == "hglobal";
        var proc = Process.GetCurrentProcess();
        Console.Error.WriteLine("churning");
        var sw = Stopwatch.StartNew();
        long calls = 0, tickCalls = 0;
        double nextTick = 1;
        proc.Refresh();
        var cpu0 = proc.TotalProcessorTime;
        while (true)
        {
            double t = sw.Elapsed.TotalSeconds;
            if (t >= nextTick)
            {
                proc.Refresh();
                var cpu = proc.TotalProcessorTime;
                Console.Error.WriteLine(FormattableString.Invariant(
                    $"tick {DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()} calls={calls - tickCalls} cpuMs={(cpu - cpu0).TotalMilliseconds:F1}"));
                cpu0 = cpu;
                tickCalls = calls;
                nextTick += 1;
            }
            if (t >= seconds) break;
            long due = (long)(t * rate);
            if (calls >= due)
            {
                Thread.Sleep(1);
                continue;
            }
            long n = Math.Min(batch, due - calls);
            for (long i = 0; i < n; i++)
            {
                IntPtr p = hglobal ? Marshal.AllocHGlobal(size) : malloc((nuint)size);
                *(byte*)p = 1;
                if (hglobal) Marshal.FreeHGlobal(p); else free(p);
            }
            calls += n;
        }
        work["calls"] = calls;
        work["seconds"] = sw.Elapsed.TotalSeconds;
    }
}
