using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workload;

// Throws throws and catches exceptions of four types, each from its own
// method and caught in its own method, on threads (default 2) threads,
// count (default 200) rounds each: per round one InvalidOperationException
// ("order N not found", thrown in ExcOrders.Lookup, caught in
// ExcOrders.TryLookup); every second round an ArgumentException ("bad
// token at 0xN", ExcParser.Parse, caught by a filtered catch in
// ExcParser.TryParse); every fourth a TimeoutException ("request GUID
// timed out", ExcRemote.Call through a finally in ExcRemote.Send, caught
// in ExcRemote.CallWithRetry) and a KeyNotFoundException (a Dictionary
// indexer called by ExcCache.Get: the framework throws it, caught in
// ExcCache.TryGet). work.counts holds the exact count per type name,
// work.throwSites and work.catchSites the method of each.
//
// With rate=N and phases=1 (the overhead benchmark) one thread throws N
// InvalidOperationExceptions a second, paced per millisecond, and spends
// the rest of each millisecond in units of CPU work counted in Progress:
// what tracing the exceptions costs shows as fewer units. With rate=-1 it
// throws back to back and counts exceptions instead.
public sealed class Throws : IWorkload
{
    public string Name => "throws";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int rate = opt.Int("rate", 0);
        if (rate < 0)
        {
            Unpaced(work);
            return;
        }
        if (rate > 0)
        {
            Paced(rate, opt.Double("seconds", 3), work);
            return;
        }
        int threads = opt.Int("threads", 2);
        int count = opt.Int("count", 200);
        var caught = new long[threads];
        var ts = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int me = t;
            ts[t] = new Thread(() =>
            {
                for (int i = 0; i < count; i++)
                {
                    caught[me] += ExcOrders.TryLookup(i) ? 0 : 1;
                    if (i % 2 == 0) caught[me] += ExcParser.TryParse(i) ? 0 : 1;
                    if (i % 4 == 0) caught[me] += ExcRemote.CallWithRetry() ? 0 : 1;
                    if (i % 4 == 0) caught[me] += ExcCache.TryGet(1000 + i) ? 0 : 1;
                }
            }) { Name = $"throws-{t}" };
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();
        int every2 = (count + 1) / 2, every4 = (count + 3) / 4;
        work["counts"] = new Dictionary<string, long>
        {
            ["System.InvalidOperationException"] = (long)threads * count,
            ["System.ArgumentException"] = (long)threads * every2,
            ["System.TimeoutException"] = (long)threads * every4,
            ["System.Collections.Generic.KeyNotFoundException"] = (long)threads * every4,
        };
        work["caught"] = caught.Sum();
        // Send's finally and the one lock(entries) compiles to in Get.
        work["finallys"] = (long)threads * every4 * 2;
        work["filters"] = (long)threads * every2;
        work["throwSites"] = new Dictionary<string, string>
        {
            ["System.InvalidOperationException"] = "Workload.ExcOrders.Lookup",
            ["System.ArgumentException"] = "Workload.ExcParser.Parse",
            ["System.TimeoutException"] = "Workload.ExcRemote.Call",
            ["System.Collections.Generic.KeyNotFoundException"] = "Workload.ExcCache.Get",
        };
        work["catchSites"] = new Dictionary<string, string>
        {
            ["System.InvalidOperationException"] = "Workload.ExcOrders.TryLookup",
            ["System.ArgumentException"] = "Workload.ExcParser.TryParse",
            ["System.TimeoutException"] = "Workload.ExcRemote.CallWithRetry",
            ["System.Collections.Generic.KeyNotFoundException"] = "Workload.ExcCache.TryGet",
        };
    }

    static void Paced(int rate, double seconds, Dictionary<string, object> work)
    {
        long thrown = 0, units = 0, sink = 0;
        var sw = Stopwatch.StartNew();
        long tick = Stopwatch.Frequency / 1000;
        long next = sw.ElapsedTicks;
        double owed = 0;
        while (Progress.Phased ? !Progress.Ended : sw.Elapsed.TotalSeconds < seconds)
        {
            // This millisecond's share of the rate, then work until the next.
            owed += rate / 1000.0;
            for (; owed >= 1; owed--)
            {
                ExcOrders.TryLookup((int)thrown);
                thrown++;
            }
            next += tick;
            while (sw.ElapsedTicks < next)
            {
                sink += Unit();
                units++;
                Progress.Count = units;
            }
        }
        work["thrown"] = thrown;
        work["units"] = units;
        work["sink"] = sink;
    }

    // Unpaced throws as fast as it can (rate=-1): the units of progress are
    // exceptions, so a traced phase's throughput gives the cost of one.
    static void Unpaced(Dictionary<string, object> work)
    {
        long thrown = 0;
        var sw = Stopwatch.StartNew();
        while (Progress.Phased ? !Progress.Ended : sw.Elapsed.TotalSeconds < 3)
        {
            ExcOrders.TryLookup((int)thrown);
            thrown++;
            Progress.Count = thrown;
        }
        work["thrown"] = thrown;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long Unit()
    {
        long x = 1;
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005 + 1442695040888963407;
        return x;
    }
}

public static class ExcOrders
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool TryLookup(int id)
    {
        try { Lookup(id); return true; }
        catch (InvalidOperationException) { return false; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Lookup(int id) => throw new InvalidOperationException($"order {id} not found");
}

public static class ExcParser
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool TryParse(int token)
    {
        try { Parse(token); return true; }
        catch (ArgumentException e) when (e.Message.Length > 0) { return false; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Parse(int token) => throw new ArgumentException($"bad token at 0x{token:x4}");
}

public static class ExcRemote
{
    static long sent;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool CallWithRetry()
    {
        try { Send(); return true; }
        catch (TimeoutException) { return false; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Send()
    {
        try { Call(); }
        finally { Interlocked.Increment(ref sent); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Call() => throw new TimeoutException($"request {Guid.NewGuid()} timed out");
}

public static class ExcCache
{
    static readonly Dictionary<int, string> entries = new() { [1] = "one" };

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static bool TryGet(int key)
    {
        try { return Get(key).Length > 0; }
        catch (KeyNotFoundException) { return false; }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Get(int key)
    {
        lock (entries) return entries[key];
    }
}
