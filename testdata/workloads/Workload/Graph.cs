using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Workload;

// The types of the graph mode, top-level so the heap dump names them in
// full (it names nested types without their declaring type).
public sealed class GraphLeaf { public long A, B; }
public sealed class GraphItem { public long Id; public GraphLeaf? Leaf; }
public sealed class GraphHolder { public GraphItem[]? Items; public GraphItem[]? More; }
public sealed class GraphHandleOnly { public long X, Y, Z; }
public sealed class GraphStackOnly { public long X, Y; }

// Graph builds a heap graph whose shape and sizes it knows, for the heap
// snapshot tests (clrspy snapshot):
//   - Graph.Holder, a static field, holds a GraphHolder whose GraphItem[]
//     holds `items` GraphItem objects, each with one GraphLeaf;
//   - one GraphHandleOnly kept alive only by a strong GC handle;
//   - one GraphStackOnly kept alive only by a local of a parked thread
//     (Graph.Park, waiting on an event).
// Each part is built in its own method (no temporaries left in Run's
// frame, which would root them too) after a warm-up that loads and jits
// everything; the bytes each allocated are measured with
// GC.GetAllocatedBytesForCurrentThread around it.
// It prints "graph ready" on stderr, then does what each stdin line says:
//   add N   N more GraphItem+GraphLeaf in a new GraphItem[] set as
//           GraphHolder.More (once); prints "added N BYTES" on stderr
//   leak N  N more GraphItem+GraphLeaf in a new GraphItem[] kept by
//           Graph.Leaked (any number of times: a leak); prints "leaked N
//           BYTES"
//   gc      a blocking gen2 GC (GC.Collect); prints "collected"
//   exit    ends (EOF too)
// work: items, holderBytes (the holder, its array, items and leaves),
// handleBytes, stackBytes, addedItems, addedBytes, and types: the count of
// each of these types alive at the end.
public sealed class Graph : IWorkload
{
    public string Name => "graph";

    public static GraphHolder? Holder;
    // Made by the first leak command (a static initializer would allocate
    // inside the holder's measured build, which first touches the class).
    public static List<GraphItem[]>? Leaked;
    static GCHandle handle;
    static long measured;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static GraphHolder Build(int n)
    {
        var h = new GraphHolder { Items = new GraphItem[n] };
        for (int i = 0; i < n; i++) h.Items[i] = new GraphItem { Id = i, Leaf = new GraphLeaf { A = i } };
        return h;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static GraphItem[] More(int n)
    {
        var a = new GraphItem[n];
        for (int i = 0; i < n; i++) a[i] = new GraphItem { Id = -i, Leaf = new GraphLeaf { B = i } };
        return a;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Warm()
    {
        GC.KeepAlive(Build(2));
        GC.KeepAlive(More(2));
        GC.KeepAlive(new GraphHandleOnly());
        GC.KeepAlive(new GraphStackOnly());
        GCHandle.Alloc(new object(), GCHandleType.Normal).Free();
    }

    // Each returns the bytes it allocated; the objects go where they stay.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static long MakeHolder(int n)
    {
        long b0 = GC.GetAllocatedBytesForCurrentThread();
        var h = Build(n);
        long b = GC.GetAllocatedBytesForCurrentThread() - b0;
        Holder = h;
        return b;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long MakeHandle()
    {
        long b0 = GC.GetAllocatedBytesForCurrentThread();
        var o = new GraphHandleOnly { X = 1 };
        long b = GC.GetAllocatedBytesForCurrentThread() - b0;
        handle = GCHandle.Alloc(o, GCHandleType.Normal);
        return b;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static long AddMore(int k)
    {
        long b0 = GC.GetAllocatedBytesForCurrentThread();
        var more = More(k);
        long b = GC.GetAllocatedBytesForCurrentThread() - b0;
        Holder!.More = more;
        return b;
    }

    // Parker runs on its own thread: its local is the only reference to
    // a GraphStackOnly until release is set.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Parker(ManualResetEventSlim ready, ManualResetEventSlim release)
    {
        long b0 = GC.GetAllocatedBytesForCurrentThread();
        var local = new GraphStackOnly { X = 7 };
        measured = GC.GetAllocatedBytesForCurrentThread() - b0;
        ready.Set();
        Park(release, local);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Park(ManualResetEventSlim release, GraphStackOnly local)
    {
        release.Wait();
        GC.KeepAlive(local);
    }

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int n = opt.Int("items", 10000);
        Warm();
        var ready = new ManualResetEventSlim(false);
        var release = new ManualResetEventSlim(false);
        var parker = new Thread(() => Parker(ready, release)) { IsBackground = true, Name = "GraphParker" };
        long holderBytes = MakeHolder(n);
        long handleBytes = MakeHandle();
        parker.Start();
        ready.Wait();
        long stackBytes = measured;

        long addedBytes = 0, addedItems = 0, leakedItems = 0;
        Console.Error.WriteLine("graph ready");
        string? line;
        while ((line = Console.In.ReadLine()) != null)
        {
            var f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (f.Length == 0) continue;
            if (f[0] == "exit") break;
            if (f[0] == "add" && f.Length == 2 && addedItems == 0)
            {
                int k = int.Parse(f[1]);
                long b = AddMore(k);
                addedBytes += b;
                addedItems += k;
                Console.Error.WriteLine($"added {k} {b}");
                continue;
            }
            if (f[0] == "leak" && f.Length == 2)
            {
                int k = int.Parse(f[1]);
                long b0 = GC.GetAllocatedBytesForCurrentThread();
                (Leaked ??= new()).Add(More(k));
                leakedItems += k;
                Console.Error.WriteLine($"leaked {k} {GC.GetAllocatedBytesForCurrentThread() - b0}");
                continue;
            }
            if (f[0] == "gc")
            {
                GC.Collect();
                Console.Error.WriteLine("collected");
                continue;
            }
            Console.Error.WriteLine($"graph: unknown command {line}");
        }
        work["items"] = n;
        work["holderBytes"] = holderBytes;
        work["handleBytes"] = handleBytes;
        work["stackBytes"] = stackBytes;
        work["addedItems"] = addedItems;
        work["addedBytes"] = addedBytes;
        work["types"] = new Dictionary<string, long>
        {
            ["Workload.GraphHolder"] = 1,
            ["Workload.GraphItem"] = n + addedItems + leakedItems,
            ["Workload.GraphLeaf"] = n + addedItems + leakedItems,
            ["Workload.GraphItem[]"] = (addedItems > 0 ? 2 : 1) + (Leaked?.Count ?? 0),
            ["Workload.GraphHandleOnly"] = 1,
            ["Workload.GraphStackOnly"] = 1,
        };
        release.Set();
        handle.Free();
        GC.KeepAlive(Holder);
    }
}
