using System.IO.Pipes;
using System.Runtime.CompilerServices;

namespace Workload;

// Threads leaves a known mix of threads and never ends by itself: pool=N
// (40) thread-pool work items blocked in Task.Wait on one Task.Delay that
// never completes (PoolWait), sleep=K (3) threads in Thread.Sleep
// (SleepForever), pipe=M (2) threads reading an anonymous pipe nobody
// writes (ReadPipe), and one thread spinning (Spin). Once every one is in
// place it prints "threads pool=N sleep=K pipe=M spin=1 spinner=TID" on
// stderr. The pool's minimum is raised to N+4 so the pool has its threads
// at once.
public sealed class Threads : IWorkload
{
    public string Name => "threads";

    static readonly Task Never = Task.Delay(Timeout.Infinite);
    static int blocked, reading;
    static volatile int spinnerTid;

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int pool = opt.Int("pool", 40), sleep = opt.Int("sleep", 3), pipe = opt.Int("pipe", 2);
        ThreadPool.GetMinThreads(out _, out int io);
        ThreadPool.SetMinThreads(pool + 4, io);
        for (int i = 0; i < pool; i++) ThreadPool.QueueUserWorkItem(_ => PoolWait());
        var ts = new List<Thread>();
        for (int i = 0; i < sleep; i++) ts.Add(new Thread(SleepForever) { Name = $"threads-sleep-{i}", IsBackground = true });
        var servers = new List<AnonymousPipeServerStream>();
        for (int i = 0; i < pipe; i++)
        {
            var server = new AnonymousPipeServerStream(PipeDirection.Out);
            servers.Add(server);
            var client = new AnonymousPipeClientStream(PipeDirection.In, server.ClientSafePipeHandle);
            ts.Add(new Thread(() => ReadPipe(client)) { Name = $"threads-pipe-{i}", IsBackground = true });
        }
        ts.Add(new Thread(Spin) { Name = "threads-spin", IsBackground = true });
        foreach (var t in ts) t.Start();
        while (Volatile.Read(ref blocked) < pool || Volatile.Read(ref reading) < pipe || spinnerTid == 0 ||
               !ts.Where(t => t.Name!.StartsWith("threads-sleep-")).All(t => (t.ThreadState & ThreadState.WaitSleepJoin) != 0))
            Thread.Sleep(10);
        // The last pool items and pipe readers are entering their waits (a
        // thread in a native read is Running to its ThreadState).
        Thread.Sleep(500);
        Console.Error.WriteLine($"threads pool={pool} sleep={sleep} pipe={pipe} spin=1 spinner={spinnerTid}");
        Thread.Sleep(Timeout.Infinite);
        GC.KeepAlive(servers);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void PoolWait()
    {
        Interlocked.Increment(ref blocked);
        Never.Wait();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void SleepForever() => Thread.Sleep(Timeout.Infinite);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void ReadPipe(Stream s)
    {
        var buf = new byte[1];
        Interlocked.Increment(ref reading);
        s.Read(buf, 0, 1);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Spin()
    {
        spinnerTid = Native.Tid();
        long n = 0;
        while (true) n++;
    }
}
