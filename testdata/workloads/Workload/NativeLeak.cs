using System.Diagnostics;
using System.Runtime;
using System.Runtime.InteropServices;

namespace Workload;

// NativeLeak leaks native memory at known counts, for clrspy memory: blocks
// of blockKB (default 16: under glibc's mmap threshold, so they come from
// malloc's heap and arenas) through Marshal.AllocHGlobal in
// NativeLeak.LeakHGlobal and through libc malloc (a P/Invoke) in
// NativeLeak.LeakMalloc, every byte written so it is resident; and keeps a
// known managed heap (managedMB, default 32, in 8 KB arrays under a static
// list, allocated at the start).
//
// With rateKBps > 0 it leaks that many KB a second (half each way, 20 steps
// a second) for seconds, then exits; "leaking COUNTS" on stderr says the
// managed heap is kept and the leak begins. Otherwise it does what each stdin line
// says, acknowledging each on stderr with "done CMD ..." and its counts:
//   hglobal KB   leak KB through AllocHGlobal
//   malloc KB    leak KB through malloc
//   managed KB   keep KB more managed arrays
//   gc           a blocking compacting gen2 GC
//   info         print the counts only
//   exit         return
// Counts line: "done CMD hglobal=B malloc=B managed=B heapSize=B
// committed=B gen0..=…" (GC.GetGCMemoryInfo after the last GC;
// GC.GetTotalMemory(false) as total). work: hglobalBytes, mallocBytes,
// managedBytes, blocks.
public sealed class NativeLeak : IWorkload
{
    public string Name => "nativeleak";

    [DllImport("libc", EntryPoint = "malloc")]
    static extern IntPtr malloc(nuint size);

    static readonly List<IntPtr> Blocks = new();
    static readonly List<byte[]> Managed = new();
    static long hglobalBytes, mallocBytes, managedBytes;

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int blockKB = opt.Int("blockKB", 16);
        KeepManaged(opt.Long("managedMB", 32) * 1024);
        int rate = opt.Int("rateKBps", 0);
        if (rate > 0)
        {
            double seconds = opt.Double("seconds", 5);
            Console.Error.WriteLine("leaking " + Counts());
            var sw = Stopwatch.StartNew();
            long steps = 0;
            while (sw.Elapsed.TotalSeconds < seconds)
            {
                // Step n is due at n/20 s: the rate holds however long a step took.
                LeakHGlobal(rate / 40, blockKB);
                LeakMalloc(rate / 40, blockKB);
                steps++;
                var left = steps * 50 - sw.Elapsed.TotalMilliseconds;
                if (left > 0) Thread.Sleep(TimeSpan.FromMilliseconds(left));
            }
            work["seconds"] = sw.Elapsed.TotalSeconds;
        }
        else
        {
            string? line;
            while ((line = Console.In.ReadLine()) != null)
            {
                var f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                if (f.Length == 0) continue;
                switch (f[0])
                {
                    case "hglobal": LeakHGlobal(long.Parse(f[1]), blockKB); break;
                    case "malloc": LeakMalloc(long.Parse(f[1]), blockKB); break;
                    case "managed": KeepManaged(long.Parse(f[1])); break;
                    case "gc": GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true); break;
                    case "info": break;
                    case "exit": goto end;
                    default: Console.Error.WriteLine($"nativeleak: unknown command {f[0]}"); continue;
                }
                Console.Error.WriteLine("done " + f[0] + " " + Counts());
            }
        end:;
        }
        work["hglobalBytes"] = hglobalBytes;
        work["mallocBytes"] = mallocBytes;
        work["managedBytes"] = managedBytes;
        work["blocks"] = Blocks.Count;
    }

    static string Counts()
    {
        var gi = GC.GetGCMemoryInfo(GCKind.Any);
        return FormattableString.Invariant(
            $"hglobal={hglobalBytes} malloc={mallocBytes} managed={managedBytes} heapSize={gi.HeapSizeBytes} committed={gi.TotalCommittedBytes} fragmented={gi.FragmentedBytes} total={GC.GetTotalMemory(false)}");
    }

    // LeakHGlobal leaks kb KB in blocks of blockKB through Marshal.AllocHGlobal.
    static unsafe void LeakHGlobal(long kb, int blockKB)
    {
        for (long done = 0; done < kb; done += blockKB)
        {
            int n = blockKB * 1024;
            IntPtr p = Marshal.AllocHGlobal(n);
            new Span<byte>((void*)p, n).Fill(0x5a);
            Blocks.Add(p);
            hglobalBytes += n;
        }
    }

    // LeakMalloc leaks kb KB in blocks of blockKB through libc's malloc.
    static unsafe void LeakMalloc(long kb, int blockKB)
    {
        for (long done = 0; done < kb; done += blockKB)
        {
            int n = blockKB * 1024;
            IntPtr p = malloc((nuint)n);
            if (p == IntPtr.Zero) throw new OutOfMemoryException("malloc");
            new Span<byte>((void*)p, n).Fill(0xa5);
            Blocks.Add(p);
            mallocBytes += n;
        }
    }

    static void KeepManaged(long kb)
    {
        for (long done = 0; done < kb; done += 8)
        {
            var a = new byte[8192 - 24];
            a.AsSpan().Fill(1);
            Managed.Add(a);
            managedBytes += 8192;
        }
    }
}
