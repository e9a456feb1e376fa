namespace Workload;

// PauseLog records what GC.GetTotalPauseDuration adds at each GC, from the
// mode's own thread, so tests can compare a tracer's per-GC pauses with the
// runtime's. With pauselog=1, churn calls Check before each allocation (a
// cheap read of two counters): when the total grew, it records the GC count
// then (GC.CollectionCount(0)) and the growth in 100 ns ticks. A blocking or
// foreground GC shows as one entry one count after the previous one; a
// background GC's first stop shows with the ephemeral GC run in it (two
// counts on); its final-mark stop is added from its own thread while the
// mode runs, so it shows with an unchanged count. The entries go into the
// result's work.pauseLog as [count, ticks] pairs; the first is the count
// when the mode started.
public static class PauseLog
{
    public static bool On { get; private set; }
    static long last = -1;
    static int count;
    static readonly List<long[]> log = new();

    public static void Start(Options opt)
    {
        On = opt.Int("pauselog", 0) != 0;
        if (!On) return;
        last = GC.GetTotalPauseDuration().Ticks;
        count = GC.CollectionCount(0);
        log.Add(new long[] { count, 0 });
    }

    public static void Check()
    {
        long t = GC.GetTotalPauseDuration().Ticks;
        if (t == last) return;
        count = GC.CollectionCount(0);
        log.Add(new long[] { count, t - last });
        last = t;
    }

    public static void Save(Dictionary<string, object> work)
    {
        if (On) work["pauseLog"] = log.ToArray();
    }
}
