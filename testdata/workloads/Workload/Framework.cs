using System.Text;

namespace Workload;

// Framework spends its time in precompiled (ReadyToRun) framework code
// for seconds (default 3): UTF-8 transcoding (Encoding.UTF8.GetBytes and
// GetString) and string.Replace on a 16 KB string (its copies stay off the large object heap), from one managed loop
// whose own work is negligible. It reports the rounds.
public sealed class Framework : IWorkload
{
    public string Name => "framework";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 3);
        var sb = new StringBuilder();
        for (int i = 0; sb.Length < 16 * 1024; i++) sb.Append("héllo wörld ").Append(i);
        string text = sb.ToString();
        long rounds = 0, sink = 0;
        var sw = System.Diagnostics.Stopwatch.StartNew();
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            byte[] utf8 = Encoding.UTF8.GetBytes(text);
            string back = Encoding.UTF8.GetString(utf8);
            string replaced = back.Replace("wörld", "world");
            sink += utf8.Length + replaced.Length;
            rounds++;
        }
        work["rounds"] = rounds;
        work["sink"] = sink;
    }
}
