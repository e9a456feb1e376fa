using System.Diagnostics;

namespace Workload;

// Flood is sync-over-async thread-pool starvation: every 50 ms it queues
// `burst` (default 20) work items that each block on an async delay
// (Task.Delay(blockMs).Wait(), default 500 ms), for seconds (default 10).
// The pool's threads all block, the queue grows, and the pool adds threads
// slowly (hill climbing / starvation injection). Reports the items queued
// and completed and the pool's thread count and pending items at the end.
public sealed class Flood : IWorkload
{
    public string Name => "flood";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 10);
        int burst = opt.Int("burst", 20);
        int blockMs = opt.Int("blockMs", 500);
        var sw = Stopwatch.StartNew();
        long queued = 0, done = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            for (int i = 0; i < burst; i++)
            {
                ThreadPool.QueueUserWorkItem(_ =>
                {
                    Task.Delay(blockMs).Wait(); // sync over async: holds a pool thread
                    Interlocked.Increment(ref done);
                });
                queued++;
            }
            Thread.Sleep(50);
        }
        work["queued"] = queued;
        work["completed"] = Interlocked.Read(ref done);
        work["poolThreads"] = ThreadPool.ThreadCount;
        work["pendingItems"] = ThreadPool.PendingWorkItemCount;
    }
}
