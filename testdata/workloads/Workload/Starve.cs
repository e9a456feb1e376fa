using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Workload;

// Starve starves the thread pool the way sync-over-async code does: a burst
// of N work items that each block their pool thread on a task
// (Task.Delay(blockMs).Wait()), so queued work waits until the pool has
// injected enough threads. A probe thread (not a pool thread) samples the
// runtime's own ThreadPool.ThreadCount and PendingWorkItemCount every
// probeMs and queues a probe item each time, measuring how long it waited
// to run. Options: items (32), blockMs (300), probeMs (20), settleMs (500:
// quiet time before the burst), tailMs (1000: probing after the burst).
// It reports the burst window (burstStartUtc: the first item queued;
// burstEndUtc: the last blocking item done), the peak thread count and
// pending items the probe saw, and the probe items' waits.
public sealed class Starve : IWorkload
{
    public string Name => "starve";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int items = opt.Int("items", 32);
        int blockMs = opt.Int("blockMs", 300);
        int probeMs = opt.Int("probeMs", 20);
        int settleMs = opt.Int("settleMs", 500);
        int tailMs = opt.Int("tailMs", 1000);

        // Warm the pool and the code paths up before the burst, so the
        // burst's first items are not JIT time.
        using (var warm = new CountdownEvent(2))
        {
            for (int i = 0; i < 2; i++) ThreadPool.QueueUserWorkItem(_ => { Block(1); warm.Signal(); });
            warm.Wait();
        }
        Thread.Sleep(settleMs);

        int peakThreads = 0;
        long peakPending = 0;
        var delays = new List<double>();
        var delaysLock = new object();
        using var done = new CountdownEvent(items);
        var stopProbe = new ManualResetEventSlim();
        int threadsBefore = ThreadPool.ThreadCount;
        var probe = new Thread(() =>
        {
            while (!stopProbe.Wait(probeMs))
            {
                peakThreads = Math.Max(peakThreads, ThreadPool.ThreadCount);
                peakPending = Math.Max(peakPending, ThreadPool.PendingWorkItemCount);
                var queued = Stopwatch.StartNew();
                ThreadPool.QueueUserWorkItem(_ =>
                {
                    double ms = queued.Elapsed.TotalMilliseconds;
                    lock (delaysLock) delays.Add(ms);
                });
            }
        }) { Name = "starve-probe", IsBackground = true };
        probe.Start();

        var burstStart = DateTime.UtcNow;
        for (int i = 0; i < items; i++)
        {
            ThreadPool.QueueUserWorkItem(_ =>
            {
                Block(blockMs);
                done.Signal();
            });
        }
        done.Wait();
        var burstEnd = DateTime.UtcNow;
        Thread.Sleep(tailMs);
        stopProbe.Set();
        probe.Join();

        double[] d;
        lock (delaysLock) d = delays.ToArray();
        work["items"] = items;
        work["blockMs"] = blockMs;
        work["burstStartUtc"] = burstStart.ToString("o");
        work["burstEndUtc"] = burstEnd.ToString("o");
        work["burstMs"] = (burstEnd - burstStart).TotalMilliseconds;
        work["threadsBefore"] = threadsBefore;
        work["peakThreads"] = peakThreads;
        work["peakPending"] = peakPending;
        work["threadsAfter"] = ThreadPool.ThreadCount;
        work["probes"] = d.Length;
        work["probeMaxDelayMs"] = d.Length > 0 ? d.Max() : 0;
        work["probeMeanDelayMs"] = d.Length > 0 ? d.Average() : 0;
    }

    // Block is the blocking call site: sync-over-async on a pool thread.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Block(int ms) => Task.Delay(ms).Wait();
}
