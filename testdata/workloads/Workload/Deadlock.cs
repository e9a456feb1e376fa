using System.Runtime.CompilerServices;

namespace Workload;

// Deadlock makes two threads take two Monitors in opposite order: each
// takes its first lock, both meet at a barrier, then each asks for the
// other's lock, so neither ever runs again. Before the barrier each thread
// prints "deadlock thread=N managed=M tid=T first=GateA" on stderr (its
// managed and OS thread ids), and once both have passed it, "deadlocked"
// (the threads are then about to block, or blocked). The process never
// ends by itself: the main thread joins them forever. The lock objects have
// types of their own (GateA, GateB) so a report can name them. Option
// ring=3: three threads in a ring instead (thread i takes gate i, then
// gate i+1 of GateA, GateB, GateC, in TakeRing), so each blocked thread
// could wait for either of two locks it does not hold. Option kind=lock
// (.NET 9+): the two threads take two System.Threading.Locks (LockA,
// LockB: static fields) in opposite order instead, announced
// "first=LockA" and "first=LockB".
public sealed class Deadlock : IWorkload
{
    public string Name => "deadlock";

    public sealed class GateA { }
    public sealed class GateB { }
    public sealed class GateC { }

    static readonly GateA A = new();
    static readonly GateB B = new();
    static readonly GateC C = new();

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int n = opt.Int("ring", 2);
        bool useLock = opt.Str("kind", "monitor") == "lock";
#if !NET9_0_OR_GREATER
        if (useLock) throw new ArgumentException("kind=lock needs .NET 9 (System.Threading.Lock)");
#endif
        if (n != 2 && n != 3) throw new ArgumentException("ring is 2 or 3");
        using var met = new Barrier(n + 1);
        var ts = new Thread[n];
        for (int t = 0; t < n; t++)
        {
            int me = t;
            ts[t] = new Thread(() =>
            {
                if (useLock) TakeLocks(me, met);
                else if (n == 3) TakeRing(me, met);
                else if (me == 0) TakeAB(me, met);
                else TakeBA(me, met);
            }) { Name = $"deadlock-{t}" };
            ts[t].Start();
        }
        met.SignalAndWait();
        Console.Error.WriteLine("deadlocked");
        foreach (var t in ts) t.Join();
    }

    static void Announce(int me, string first) =>
        Console.Error.WriteLine($"deadlock thread={me} managed={Environment.CurrentManagedThreadId} tid={Native.Tid()} first={first}");

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TakeAB(int me, Barrier met)
    {
        lock (A)
        {
            Announce(me, nameof(GateA));
            met.SignalAndWait();
            lock (B) { }
        }
    }

#if NET9_0_OR_GREATER
    static readonly Lock LockA = new(), LockB = new();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TakeLocks(int me, Barrier met)
    {
        Lock first = me == 0 ? LockA : LockB, second = me == 0 ? LockB : LockA;
        lock (first)
        {
            Announce(me, me == 0 ? nameof(LockA) : nameof(LockB));
            met.SignalAndWait();
            lock (second) { }
        }
    }
#else
    static void TakeLocks(int me, Barrier met) { }
#endif

    static readonly object[] Ring = { A, B, C };

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TakeRing(int me, Barrier met)
    {
        lock (Ring[me])
        {
            Announce(me, Ring[me].GetType().Name);
            met.SignalAndWait();
            lock (Ring[(me + 1) % 3]) { }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TakeBA(int me, Barrier met)
    {
        lock (B)
        {
            Announce(me, nameof(GateB));
            met.SignalAndWait();
            lock (A) { }
        }
    }
}
