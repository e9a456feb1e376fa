namespace Workload;

// Idle stays alive doing little, for attach tests: it sleeps in steps of
// 50 ms for seconds (default 30) or until a line (or EOF) arrives on stdin
// when stdin=1, allocating a little each step (allocKB, default 64) so a
// session has some GC traffic. gcEveryMs>0 also induces a gen0 GC that often
// (with gcGens=1, the i-th induced GC collects generation i % 3 instead).
// ignoreTerm=1 ignores SIGTERM, so the process outlives a tool's request to
// end it (as a process hung in its exit would): tools must not wait forever.
public sealed class Idle : IWorkload
{
    public string Name => "idle";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 30);
        int allocKB = opt.Int("allocKB", 64);
        int gcEvery = opt.Int("gcEveryMs", 0);
        var stop = new ManualResetEventSlim();
        using var term = opt.Int("ignoreTerm", 0) != 0
            ? System.Runtime.InteropServices.PosixSignalRegistration.Create(
                System.Runtime.InteropServices.PosixSignal.SIGTERM, ctx => ctx.Cancel = true)
            : null;
        if (term != null) Console.Error.WriteLine("ignoring SIGTERM");
        if (opt.Int("stdin", 0) != 0)
            new Thread(() => { Console.In.ReadLine(); stop.Set(); }) { IsBackground = true }.Start();
        var sw = System.Diagnostics.Stopwatch.StartNew();
        long steps = 0, induced = 0;
        var lastGc = 0.0;
        while (sw.Elapsed.TotalSeconds < seconds && !stop.IsSet)
        {
            for (int k = 0; k < allocKB; k++) _ = new byte[1000];
            if (gcEvery > 0 && sw.Elapsed.TotalMilliseconds - lastGc >= gcEvery)
            {
                GC.Collect(opt.Int("gcGens", 0) != 0 ? (int)(induced % 3) : 0);
                induced++;
                lastGc = sw.Elapsed.TotalMilliseconds;
            }
            stop.Wait(50);
            steps++;
        }
        work["steps"] = steps;
        work["induced0"] = induced;
        work["seconds"] = sw.Elapsed.TotalSeconds;
    }
}
