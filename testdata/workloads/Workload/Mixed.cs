using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Workload;

// Mixed times, on one thread, five kinds of work in rounds for seconds
// (default 4):
//   Fill     a managed method calling libc's memset through P/Invoke
//            (fillKB, default 2048 KB, fillReps times per round, default 70);
//   Sort     a managed method calling libc's qsort on sortN ints (default
//            12000) with the [UnmanagedCallersOnly] managed comparer Compare,
//            so the stack is managed → native → managed;
//   SortDeep the same with sortDeepN ints (default 6500) and the comparer
//            CompareDeep, which spends its time in a second, non-inlined
//            managed method CompareWork: managed → native → managed →
//            managed, the comparer no longer the leaf;
//   Nested   qsort on nestN ints (default 700) with the comparer
//            CompareNested, which P/Invokes qsort again on a copy of 8
//            ints with the comparer CompareInner: managed → native →
//            managed → native → managed;
//   Managed  managed code alone (managedUnits iterations, default 1750000).
// Parts whose count is 0 are skipped. It reports each part's wall time and
// the thread's CPU time in it (CLOCK_THREAD_CPUTIME_ID, what a cpu-clock
// sampler measures), the CPU time of the whole loop (runCpuMs), the thread
// id, the rounds and the comparer calls. The arrays to sort are refilled
// between the timed parts, so the parts' sum is the timed total.
public sealed class Mixed : IWorkload
{
    public string Name => "mixed";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 4);
        int fillBytes = opt.Int("fillKB", 2048) * 1024;
        int fillReps = opt.Int("fillReps", 70);
        int sortN = opt.Int("sortN", 12000);
        int sortDeepN = opt.Int("sortDeepN", 6500);
        int nestN = opt.Int("nestN", 700);
        int managedUnits = opt.Int("managedUnits", 1_750_000);
        var k = new MixedKernels(fillBytes, sortN, sortDeepN, nestN);
        double fillMs = 0, sortMs = 0, managedMs = 0, fillCpu = 0, sortCpu = 0, managedCpu = 0;
        double deepMs = 0, nestMs = 0, deepCpu = 0, nestCpu = 0;
        long rounds = 0, sink = 0;
        long run0 = MixedKernels.ThreadCpuNs();
        var total = Stopwatch.StartNew();
        var sw = new Stopwatch();
        while (total.Elapsed.TotalSeconds < seconds)
        {
            k.Shuffle(rounds);
            long c0 = MixedKernels.ThreadCpuNs();
            sw.Restart();
            for (int i = 0; i < fillReps; i++) sink += k.Fill((byte)i);
            fillMs += sw.Elapsed.TotalMilliseconds;
            long c1 = MixedKernels.ThreadCpuNs();
            sw.Restart();
            sink += k.Sort();
            sortMs += sw.Elapsed.TotalMilliseconds;
            long c2 = MixedKernels.ThreadCpuNs();
            sw.Restart();
            sink += MixedKernels.Managed(managedUnits);
            managedMs += sw.Elapsed.TotalMilliseconds;
            long c3 = MixedKernels.ThreadCpuNs();
            sw.Restart();
            sink += k.SortDeep();
            deepMs += sw.Elapsed.TotalMilliseconds;
            long c4 = MixedKernels.ThreadCpuNs();
            sw.Restart();
            sink += k.Nested();
            nestMs += sw.Elapsed.TotalMilliseconds;
            long c5 = MixedKernels.ThreadCpuNs();
            fillCpu += (c1 - c0) / 1e6;
            sortCpu += (c2 - c1) / 1e6;
            managedCpu += (c3 - c2) / 1e6;
            deepCpu += (c4 - c3) / 1e6;
            nestCpu += (c5 - c4) / 1e6;
            rounds++;
        }
        work["runCpuMs"] = (MixedKernels.ThreadCpuNs() - run0) / 1e6;
        work["tid"] = Native.Tid();
        work["rounds"] = rounds;
        work["fillMs"] = fillMs;
        work["sortMs"] = sortMs;
        work["managedMs"] = managedMs;
        work["fillCpuMs"] = fillCpu;
        work["sortCpuMs"] = sortCpu;
        work["managedCpuMs"] = managedCpu;
        work["sortDeepMs"] = deepMs;
        work["sortDeepCpuMs"] = deepCpu;
        work["nestedMs"] = nestMs;
        work["nestedCpuMs"] = nestCpu;
        work["compareCalls"] = MixedKernels.CompareCalls;
        work["innerCompareCalls"] = MixedKernels.InnerCompareCalls;
        work["sink"] = sink;
    }
}

// Throughput runs the same three kinds of work in small units on threads
// (default 4) threads until seconds (default 3) pass or, with phases=1,
// until told to end (see Progress), counting units done. It is the
// overhead benchmark's workload for samplers: managed code, P/Invoke into
// libc and native → managed callbacks, on every thread. Reports units,
// units per second and every thread's id.
public sealed class Throughput : IWorkload
{
    public string Name => "throughput";

    static long units;

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int threads = opt.Int("threads", 4);
        double seconds = opt.Double("seconds", 3);
        var tids = new int[threads];
        var total = Stopwatch.StartNew();
        var ts = new Thread[threads];
        for (int t = 0; t < threads; t++)
        {
            int idx = t;
            ts[t] = new Thread(() =>
            {
                tids[idx] = Native.Tid();
                var k = new MixedKernels(64 * 1024, 600);
                long sink = 0, r = 0;
                while (Progress.Phased ? !Progress.Ended : total.Elapsed.TotalSeconds < seconds)
                {
                    k.Shuffle(r++);
                    sink += k.Fill((byte)r);
                    sink += k.Sort();
                    sink += MixedKernels.Managed(100_000);
                    Progress.Count = Interlocked.Increment(ref units);
                }
                GC.KeepAlive(sink);
            }) { IsBackground = true, Name = "throughput-" + t };
            ts[t].Start();
        }
        foreach (var t in ts) t.Join();
        double secs = total.Elapsed.TotalSeconds;
        work["threads"] = threads;
        work["units"] = units;
        work["unitsPerSecond"] = units / secs;
        work["tids"] = tids;
    }
}

// GcSample builds a live graph of nodes (default 3000000) objects and
// forces count (default 2) blocking compacting gen2 GCs on one thread,
// measuring for each the wall time of GC.Collect, the thread's CPU time in
// it (with workstation non-concurrent GC the collection runs on this
// thread) and the GC's number and pause as GC.GetGCMemoryInfo reports
// them: what a sampler's GC-labelled samples should add up to.
public sealed class GcSample : IWorkload
{
    public string Name => "gcsample";

    sealed class GraphNode
    {
        public GraphNode? A, B;
        public long V;
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int nodes = opt.Int("nodes", 3_000_000);
        int count = opt.Int("count", 2);
        var all = new GraphNode[nodes];
        for (int i = 0; i < nodes; i++)
        {
            all[i] = new GraphNode { V = i };
            if (i > 0) { all[i].A = all[i - 1]; all[i].B = all[i / 2]; }
        }
        var gcs = new List<Dictionary<string, object>>();
        for (int k = 0; k < count; k++)
        {
            long c0 = MixedKernels.ThreadCpuNs();
            var sw = Stopwatch.StartNew();
            GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
            double wall = sw.Elapsed.TotalMilliseconds;
            double cpu = (MixedKernels.ThreadCpuNs() - c0) / 1e6;
            var info = GC.GetGCMemoryInfo(GCKind.FullBlocking);
            gcs.Add(new Dictionary<string, object>
            {
                ["index"] = info.Index,
                ["pauseMs"] = info.PauseDurations[0].TotalMilliseconds,
                ["collectMs"] = wall,
                ["cpuMs"] = cpu,
            });
        }
        work["tid"] = Native.Tid();
        work["gcs"] = gcs;
        work["alive"] = all[nodes - 1].V;
    }
}

// MixedKernels holds one thread's buffers for Fill and Sort.
public sealed unsafe class MixedKernels
{
    [DllImport("libc", EntryPoint = "memset")]
    static extern IntPtr memset(IntPtr dst, int value, UIntPtr count);

    [DllImport("libc", EntryPoint = "qsort")]
    static extern void qsort(int* items, UIntPtr count, UIntPtr size, delegate* unmanaged<int*, int*, int> compare);

    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Sec, Nsec; }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int clock_gettime(int clock, Timespec* ts);

    const int ClockThreadCpuTime = 3; // CLOCK_THREAD_CPUTIME_ID

    // Per thread, so the comparer's bookkeeping does not share a cache
    // line between the throughput mode's threads.
    [ThreadStatic] public static long CompareCalls;
    [ThreadStatic] static long compareSink;

    readonly IntPtr buf;
    readonly int bufBytes;
    readonly int[] src, items, deep, nest;
    [ThreadStatic] public static long InnerCompareCalls;

    public MixedKernels(int fillBytes, int sortN, int sortDeepN = 0, int nestN = 0)
    {
        bufBytes = fillBytes;
        buf = Marshal.AllocHGlobal(fillBytes);
        src = new int[Math.Max(Math.Max(sortN, sortDeepN), nestN)];
        items = new int[sortN];
        deep = new int[sortDeepN];
        nest = new int[nestN];
        var rnd = new Random(42);
        for (int i = 0; i < src.Length; i++) src[i] = rnd.Next();
    }

    // Shuffle refills the arrays the sorts sort (rotations of the random
    // source so every round sorts different input).
    public void Shuffle(long round)
    {
        Rotate(items, round);
        Rotate(deep, round);
        Rotate(nest, round);
    }

    void Rotate(int[] dst, long round)
    {
        int n = dst.Length;
        if (n == 0) return;
        int off = (int)(round % n);
        Array.Copy(src, off, dst, 0, n - off);
        Array.Copy(src, 0, dst, n - off, off);
    }

    public static long ThreadCpuNs()
    {
        Timespec ts;
        clock_gettime(ClockThreadCpuTime, &ts);
        return ts.Sec * 1_000_000_000 + ts.Nsec;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public long Fill(byte value)
    {
        memset(buf, value, (UIntPtr)bufBytes);
        return Marshal.ReadByte(buf, bufBytes - 1);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public long Sort()
    {
        if (items.Length == 0) return 0;
        fixed (int* p = items)
        {
            qsort(p, (UIntPtr)items.Length, (UIntPtr)sizeof(int), &Compare);
            return p[0];
        }
    }

    [UnmanagedCallersOnly]
    static int Compare(int* a, int* b)
    {
        CompareCalls++;
        // Some managed work per call so the comparer is visible next to
        // qsort's own code.
        int x = *a, y = *b;
        int h = 0;
        for (int i = 0; i < 8; i++) h += (x ^ (y >> i)) & 1;
        compareSink += h;
        return x < y ? -1 : x > y ? 1 : 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public long SortDeep()
    {
        if (deep.Length == 0) return 0;
        fixed (int* p = deep)
        {
            qsort(p, (UIntPtr)deep.Length, (UIntPtr)sizeof(int), &CompareDeep);
            return p[0];
        }
    }

    // CompareDeep leaves the work to CompareWork: the comparer is not the
    // leaf of the stacks sampled under it.
    [UnmanagedCallersOnly]
    static int CompareDeep(int* a, int* b)
    {
        CompareCalls++;
        return CompareWork(*a, *b);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int CompareWork(int x, int y)
    {
        int h = 0;
        for (int i = 0; i < 24; i++) h += (x ^ (y >> (i & 15))) & 1;
        compareSink += h;
        return x < y ? -1 : x > y ? 1 : 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public long Nested()
    {
        if (nest.Length == 0) return 0;
        fixed (int* p = nest)
        {
            qsort(p, (UIntPtr)nest.Length, (UIntPtr)sizeof(int), &CompareNested);
            return p[0];
        }
    }

    // CompareNested P/Invokes qsort again from inside a callback: the
    // inner comparer runs under managed → native → managed → native.
    [UnmanagedCallersOnly]
    static int CompareNested(int* a, int* b)
    {
        CompareCalls++;
        int x = *a, y = *b;
        int* tmp = stackalloc int[8];
        for (int i = 0; i < 8; i++) tmp[i] = (x >> i) ^ (y << i);
        qsort(tmp, 8, sizeof(int), &CompareInner);
        compareSink += tmp[0];
        return x < y ? -1 : x > y ? 1 : 0;
    }

    [UnmanagedCallersOnly]
    static int CompareInner(int* a, int* b)
    {
        InnerCompareCalls++;
        int x = *a, y = *b;
        int h = 0;
        for (int i = 0; i < 16; i++) h += (x ^ (y >> i)) & 1;
        compareSink += h;
        return x < y ? -1 : x > y ? 1 : 0;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Managed(int n)
    {
        long x = 3;
        for (int i = 0; i < n; i++) x = x * 6364136223846793005 + 1442695040888963407;
        return x;
    }
}
