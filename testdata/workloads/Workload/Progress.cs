using System.Diagnostics;

namespace Workload;

// Progress lets a benchmark measure a mode's throughput in phases of one
// run: with phases=1 each line on stdin records a mark (milliseconds since
// the mode started, work units done so far) and the line "end" stops the
// mode. Modes that support it (churn, cpu) store their progress in Count
// and loop until Ended. The marks go into the result's work.marks.
public static class Progress
{
    public static long Count;
    public static bool Phased { get; private set; }
    static volatile bool ended;
    static readonly List<double[]> marks = new();

    public static bool Ended => ended;

    public static void Start(Options opt)
    {
        if (opt.Int("phases", 0) == 0) return;
        Phased = true;
        var sw = Stopwatch.StartNew();
        new Thread(() =>
        {
            string? line;
            while ((line = Console.In.ReadLine()) != null)
            {
                lock (marks) marks.Add(new[] { sw.Elapsed.TotalMilliseconds, (double)Interlocked.Read(ref Count) });
                if (line.Trim() == "end") break;
            }
            ended = true;
        }) { IsBackground = true, Name = "progress" }.Start();
    }

    public static double[][] Marks()
    {
        lock (marks) return marks.ToArray();
    }
}
