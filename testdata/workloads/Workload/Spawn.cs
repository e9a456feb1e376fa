using System.Diagnostics;

namespace Workload;

// Spawn runs a second copy of this program (mode idle, seconds=0.3) and
// waits for it: a child inherits the parent's environment, including a
// DOTNET_DiagnosticPorts that clrspy run set, so this checks that such a
// child is not left suspended. Options: children (1).
public sealed class Spawn : IWorkload
{
    public string Name => "spawn";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        int n = opt.Int("children", 1);
        var codes = new List<int>();
        var sw = Stopwatch.StartNew();
        for (int i = 0; i < n; i++)
        {
            var psi = new ProcessStartInfo(Environment.ProcessPath!, "idle seconds=0.3")
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using var p = Process.Start(psi)!;
            p.StandardOutput.ReadToEnd();
            p.StandardError.ReadToEnd();
            p.WaitForExit();
            codes.Add(p.ExitCode);
        }
        work["children"] = n;
        work["exitCodes"] = codes.ToArray();
        work["ms"] = sw.Elapsed.TotalMilliseconds;
    }
}
