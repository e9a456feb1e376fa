using System.Runtime.CompilerServices;

namespace Workload;

// Hang leaves threads blocked in a known mix and never ends by itself: the
// main thread takes a Monitor and sleeps holding it; monitor=N threads
// (default 3) block in Monitor.Enter on it (EnterGate), handle=M (2) in
// ManualResetEvent.WaitOne (WaitEvent), sleep=K (2) in Thread.Sleep
// (SleepForever). Once every one of them is blocked (its ThreadState says
// WaitSleepJoin) it prints "hung monitor=N wait_handle=M sleep=K+1
// holder=TID" on stderr: the main thread, the holder, sleeps too. Option
// gate=list: the lock object is a List<HangGate> (ListGate) instead, for a
// generic type's name.
public sealed class Hang : IWorkload
{
    public string Name => "hang";

    public sealed class HangGate { }

    static readonly HangGate Gate = new();
    static readonly List<HangGate> ListGate = new();
    static object lockObj = Gate;
    static readonly ManualResetEvent Never = new(false);

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int monitor = opt.Int("monitor", 3), handle = opt.Int("handle", 2), sleep = opt.Int("sleep", 2);
        var ts = new List<Thread>();
        if (opt.Str("gate", "") == "list") lockObj = ListGate;
        Monitor.Enter(lockObj);
        for (int i = 0; i < monitor; i++) ts.Add(new Thread(EnterGate) { Name = $"hang-monitor-{i}", IsBackground = true });
        for (int i = 0; i < handle; i++) ts.Add(new Thread(WaitEvent) { Name = $"hang-handle-{i}", IsBackground = true });
        for (int i = 0; i < sleep; i++) ts.Add(new Thread(SleepForever) { Name = $"hang-sleep-{i}", IsBackground = true });
        foreach (var t in ts) t.Start();
        while (!ts.All(t => (t.ThreadState & ThreadState.WaitSleepJoin) != 0)) Thread.Sleep(10);
        Console.Error.WriteLine($"hung monitor={monitor} wait_handle={handle} sleep={sleep + 1} holder={Native.Tid()}");
        HoldAndSleep();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void HoldAndSleep() => Thread.Sleep(Timeout.Infinite);

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void EnterGate()
    {
        lock (lockObj) { }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void WaitEvent() => Never.WaitOne();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void SleepForever() => Thread.Sleep(Timeout.Infinite);
}
