namespace Workload;

// Steps does what each line on stdin says, for tests that drive a live
// view step by step while the process stays alive:
//   gc G N    N blocking GC.Collect(G), 20 ms apart
//   big N     a live graph of N small objects, one blocking compacting
//             gen2 GC over it (a long pause), then the graph is dropped
//   alloc     allocate garbage on a background thread (GCs every few tens
//             of ms) until the next command
//   idle      stop allocating
//   counts    print "counts GEN0 GEN1 GEN2 PAUSEMS" on stderr:
//             GC.CollectionCount(0..2) (cumulative, as the runtime counts)
//             and GC.GetTotalPauseDuration in ms
//   exit      return (the usual JSON line follows on stdout)
// Between commands it waits in ReadLine and allocates nothing, so no GC
// happens while it is idle. work.commands counts the commands run.
public sealed class Steps : IWorkload
{
    public string Name => "steps";

    volatile bool allocating;
    Thread? allocator;

    public void Run(Options opt, Dictionary<string, object> work)
    {
        long commands = 0;
        string? line;
        while ((line = Console.In.ReadLine()) != null)
        {
            var f = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (f.Length == 0) continue;
            commands++;
            if (f[0] != "counts") StopAllocating();
            switch (f[0])
            {
                case "gc":
                    for (int k = 0; k < int.Parse(f[2]); k++)
                    {
                        GC.Collect(int.Parse(f[1]), GCCollectionMode.Forced, blocking: true);
                        Thread.Sleep(20);
                    }
                    break;
                case "big":
                    Big(int.Parse(f[1]));
                    break;
                case "alloc":
                    allocating = true;
                    allocator = new Thread(Allocate) { IsBackground = true };
                    allocator.Start();
                    break;
                case "idle":
                    break;
                case "counts":
                    Counts();
                    break;
                case "exit":
                    work["commands"] = commands;
                    return;
                default:
                    Console.Error.WriteLine($"steps: unknown command {f[0]}");
                    break;
            }
        }
        StopAllocating();
        work["commands"] = commands;
    }

    void StopAllocating()
    {
        if (allocator == null) return;
        allocating = false;
        allocator.Join();
        allocator = null;
    }

    sealed class Node { public Node? Next; public long Payload; }

    static void Big(int n)
    {
        Node? head = null;
        for (int i = 0; i < n; i++) head = new Node { Next = head, Payload = i };
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.KeepAlive(head);
    }

    void Allocate()
    {
        var keep = new object[256];
        int i = 0;
        while (allocating)
        {
            for (int k = 0; k < 64; k++) keep[i++ & 255] = new byte[1000];
            Thread.Sleep(1);
        }
    }

    // Counts prints the runtime's counts; the line is built until no GC
    // happened while building it (building allocates), as Program does
    // for the exit line.
    static void Counts()
    {
        string s = "";
        for (int attempt = 0; attempt < 10; attempt++)
        {
            int c0 = GC.CollectionCount(0), c1 = GC.CollectionCount(1), c2 = GC.CollectionCount(2);
            s = $"counts {c0} {c1} {c2} {GC.GetTotalPauseDuration().TotalMilliseconds.ToString(System.Globalization.CultureInfo.InvariantCulture)}";
            if (GC.CollectionCount(0) == c0 && GC.CollectionCount(1) == c1 && GC.CollectionCount(2) == c2) break;
        }
        Console.Error.WriteLine(s);
    }
}
