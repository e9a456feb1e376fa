// The clrspy test workload. The first argument names a mode: a class that
// implements IWorkload, found by reflection, so a new mode is one new .cs
// file. Remaining arguments are key=value options read through Options.
//
// Every mode prints, on exit, exactly one JSON line on stdout with what the
// runtime itself knows (collection counts, total pause, GCMemoryInfo per
// kind, allocated bytes) plus the mode's own measured work, so tests can
// compare clrspy's figures with independent ones.
//
// Common options: wait=1 prints "ready <pid>" on stderr and waits for one
// line on stdin before the mode runs (lets a test attach first), then
// prints "started gen0=N gen1=N gen2=N pauseMs=X", the runtime's counts at
// that moment; with or without it, "ready <pid>" is printed once the
// runtime is up. quiet=1 leaves the JSON line out (make demo). phases=1
// measures throughput in phases marked on stdin (see Progress).
using System.Diagnostics;
using System.Reflection;
using System.Runtime;
using System.Runtime.InteropServices;
using System.Text.Json;

namespace Workload;

public interface IWorkload
{
    // Name is the first command-line argument that selects this mode.
    string Name { get; }
    // Run does the work and records what it measured in work.
    void Run(Options opt, Dictionary<string, object> work);
}

public sealed class Options
{
    readonly Dictionary<string, string> kv = new(StringComparer.OrdinalIgnoreCase);

    public Options(IEnumerable<string> args)
    {
        foreach (var a in args)
        {
            var i = a.IndexOf('=');
            if (i <= 0) throw new ArgumentException($"option {a}: want key=value");
            kv[a[..i]] = a[(i + 1)..];
        }
    }

    public int Int(string key, int def) => kv.TryGetValue(key, out var v) ? int.Parse(v) : def;
    public long Long(string key, long def) => kv.TryGetValue(key, out var v) ? long.Parse(v) : def;
    public double Double(string key, double def) =>
        kv.TryGetValue(key, out var v) ? double.Parse(v, System.Globalization.CultureInfo.InvariantCulture) : def;
    public string Str(string key, string def) => kv.TryGetValue(key, out var v) ? v : def;
    public bool Has(string key) => kv.ContainsKey(key);
}

public static class Native
{
    [DllImport("libc", EntryPoint = "gettid")]
    static extern int gettid_libc();

    // Tid is the calling thread's OS thread id, the ThreadID clrspy sees.
    public static int Tid()
    {
        try { return gettid_libc(); }
        catch (Exception) { return -1; }
    }
}

public static class Program
{
    public static int Main(string[] args)
    {
        var modes = Assembly.GetExecutingAssembly().GetTypes()
            .Where(t => typeof(IWorkload).IsAssignableFrom(t) && !t.IsInterface && !t.IsAbstract)
            .Select(t => (IWorkload)Activator.CreateInstance(t)!)
            .ToDictionary(w => w.Name, StringComparer.OrdinalIgnoreCase);
        if (args.Length == 0 || !modes.TryGetValue(args[0], out var mode))
        {
            Console.Error.WriteLine($"usage: Workload MODE [key=value...]; modes: {string.Join(", ", modes.Keys.OrderBy(k => k))}");
            return 2;
        }
        var opt = new Options(args.Skip(1));
        // Touch stdout now so that writing the result line at the end
        // allocates as little as possible.
        Console.Out.Flush();
        Console.Error.WriteLine($"ready {Environment.ProcessId}");
        if (opt.Int("wait", 0) != 0)
        {
            Console.In.ReadLine();
            // What the runtime counted before the mode runs: a tracer that
            // attached during the wait compares its own counts with the
            // difference to the final ones.
            Console.Error.WriteLine(FormattableString.Invariant(
                $"started gen0={GC.CollectionCount(0)} gen1={GC.CollectionCount(1)} gen2={GC.CollectionCount(2)} pauseMs={GC.GetTotalPauseDuration().TotalMilliseconds}"));
        }

        var work = new Dictionary<string, object>();
        Progress.Start(opt);
        var sw = Stopwatch.StartNew();
        mode.Run(opt, work);
        sw.Stop();
        if (Progress.Phased) work["marks"] = Progress.Marks();
        if (opt.Int("quiet", 0) != 0) return opt.Int("exit", 0);

        // Building the line allocates, and an allocation can trigger a GC
        // after the counts were read: rebuild until no GC happened in
        // between, so the line matches every GC a tracer saw before exit.
        string line = "";
        for (int attempt = 0; attempt < 10; attempt++)
        {
            int c0 = GC.CollectionCount(0), c1 = GC.CollectionCount(1), c2 = GC.CollectionCount(2);
            var result = new Dictionary<string, object>
            {
                ["mode"] = mode.Name,
                ["pid"] = Environment.ProcessId,
                ["runtime"] = RuntimeInformation.FrameworkDescription,
                ["serverGC"] = GCSettings.IsServerGC,
                ["concurrentGC"] = GCSettings.LatencyMode != GCLatencyMode.Batch,
                ["gen0"] = c0,
                ["gen1"] = c1,
                ["gen2"] = c2,
                ["pauseMs"] = GC.GetTotalPauseDuration().TotalMilliseconds,
                ["totalAllocatedBytes"] = GC.GetTotalAllocatedBytes(true),
                ["elapsedMs"] = sw.Elapsed.TotalMilliseconds,
                ["gcInfo"] = GcInfo(),
                ["work"] = work,
                ["reportAttempts"] = attempt + 1,
            };
            line = JsonSerializer.Serialize(result);
            if (GC.CollectionCount(0) == c0 && GC.CollectionCount(1) == c1 && GC.CollectionCount(2) == c2) break;
        }
        Console.Out.WriteLine(line);
        Console.Out.Flush();
        return opt.Int("exit", 0);
    }

    // GcInfo reports the last GC of each kind as GC.GetGCMemoryInfo sees it.
    static Dictionary<string, object> GcInfo()
    {
        var d = new Dictionary<string, object>();
        foreach (var kind in new[] { GCKind.Ephemeral, GCKind.FullBlocking, GCKind.Background })
        {
            var i = GC.GetGCMemoryInfo(kind);
            if (i.Index == 0) continue;
            d[kind.ToString()] = new Dictionary<string, object>
            {
                ["index"] = i.Index,
                ["generation"] = i.Generation,
                ["compacted"] = i.Compacted,
                ["concurrent"] = i.Concurrent,
                ["pauseDurationsMs"] = i.PauseDurations.ToArray().Select(p => p.TotalMilliseconds).ToArray(),
                ["pauseTimePercentage"] = i.PauseTimePercentage,
                ["promotedBytes"] = i.PromotedBytes,
                ["heapSizeBytes"] = i.HeapSizeBytes,
                ["fragmentedBytes"] = i.FragmentedBytes,
                ["pinnedObjectsCount"] = i.PinnedObjectsCount,
            };
        }
        return d;
    }
}
