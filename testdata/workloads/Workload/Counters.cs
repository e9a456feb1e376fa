using System.Diagnostics;

namespace Workload;

// Counters gives the runtime's own counters (System.Runtime EventCounters
// and meter) values the workload knows: it throws and catches a known
// number of exceptions, keeps a known number of timers alive, makes two
// threads contend for one Monitor and allocates a known amount, then
// prints "steady" on stderr and holds still (no allocation, no new work)
// until a line arrives on stdin, so a tracer can read settled counters.
// It records the runtime's view of each counter just before "steady"
// (suffix Before) and just after the line (suffix After); the counters a
// tracer read in between lie in [Before, After].
// Options: exceptions (25), timers (7), contentionMs (200), allocMB (64).
public sealed class Counters : IWorkload
{
    public string Name => "counters";

    static readonly object Gate = new();
    static Timer[] keepTimers = Array.Empty<Timer>();

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int exceptions = opt.Int("exceptions", 25);
        int timers = opt.Int("timers", 7);
        int contentionMs = opt.Int("contentionMs", 200);
        int allocMB = opt.Int("allocMB", 64);

        long contention0 = Monitor.LockContentionCount;
        int thrown = 0;
        for (int i = 0; i < exceptions; i++)
        {
            try { Throw(i); }
            catch (InvalidOperationException) { thrown++; }
        }

        keepTimers = new Timer[timers];
        for (int i = 0; i < timers; i++)
            keepTimers[i] = new Timer(_ => { }, null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);

        var sw = Stopwatch.StartNew();
        var ts = new Thread[2];
        for (int t = 0; t < ts.Length; t++)
        {
            ts[t] = new Thread(() =>
            {
                while (sw.ElapsedMilliseconds < contentionMs)
                {
                    lock (Gate) { Thread.Sleep(1); }
                }
            });
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();

        long sink = 0;
        for (int i = 0; i < allocMB * 16; i++)
        {
            var b = new byte[64 * 1024];
            sink += b.Length;
        }

        work["exceptionsThrown"] = thrown;
        work["contentions"] = Monitor.LockContentionCount - contention0;
        work["allocatedSink"] = sink;
        Record(work, "Before");
        Console.Error.WriteLine("steady");
        Console.In.ReadLine();
        Record(work, "After");
        GC.KeepAlive(keepTimers);
    }

    static void Throw(int i) => throw new InvalidOperationException("counter test " + i);

    static void Record(Dictionary<string, object> work, string suffix)
    {
        work["timers" + suffix] = Timer.ActiveCount;
        work["assemblies" + suffix] = AppDomain.CurrentDomain.GetAssemblies().Length;
        work["threadPoolThreads" + suffix] = ThreadPool.ThreadCount;
        work["threadPoolQueue" + suffix] = ThreadPool.PendingWorkItemCount;
        work["jitMethods" + suffix] = System.Runtime.JitInfo.GetCompiledMethodCount(false);
        work["jitILBytes" + suffix] = System.Runtime.JitInfo.GetCompiledILBytes(false);
        work["allocated" + suffix] = GC.GetTotalAllocatedBytes(false);
        work["workingSet" + suffix] = Environment.WorkingSet;
        work["lockContentions" + suffix] = Monitor.LockContentionCount;
        work["gen0" + suffix] = GC.CollectionCount(0);
        work["gen1" + suffix] = GC.CollectionCount(1);
        work["gen2" + suffix] = GC.CollectionCount(2);
        work["pauseMs" + suffix] = GC.GetTotalPauseDuration().TotalMilliseconds;
        work["processorCount" + suffix] = Environment.ProcessorCount;
    }
}
