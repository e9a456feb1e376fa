using System.Diagnostics;
using System.IO.Pipes;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Workload;

// OffCpu runs three threads that spend most of their time off the CPU, for
// seconds (default 3) each, for off-CPU profiles:
//   sleep  alternates cpuMs (default 50) of its own CPU time (spinning) with
//          sleepMs (default 150) in Thread.Sleep;
//   pipe   reads an anonymous pipe that another thread writes one byte to
//          every periodMs (default 150): blocked in read(2) in between;
//   wait   Task.Wait()s on a Task.Delay(periodMs), again and again.
// Each thread first sleeps warmupMs (default 300; a profiler attached
// before the mode starts opens its events on the new thread meanwhile),
// then runs its loop inside OffCpuThreads.Window, a method of its own
// (not inlined), so a profile's time under it is the measured window.
// Per thread (work.sleep, work.pipe, work.wait) it reports its tid, the
// window's wall time and the thread's CPU time in it
// (CLOCK_THREAD_CPUTIME_ID), their difference offMs (the time off the
// CPU), blockedMs (wall time inside the blocking calls) and the number
// of blocking calls.
public sealed class OffCpu : IWorkload
{
    public string Name => "offcpu";

    public void Run(Options opt, Dictionary<string, object> work)
    {
        double seconds = opt.Double("seconds", 3);
        int cpuMs = opt.Int("cpuMs", 50);
        int sleepMs = opt.Int("sleepMs", 150);
        int periodMs = opt.Int("periodMs", 150);
        int warmupMs = opt.Int("warmupMs", 300);

        using var server = new AnonymousPipeServerStream(PipeDirection.Out);
        using var client = new AnonymousPipeClientStream(PipeDirection.In, server.ClientSafePipeHandle);
        var stop = new ManualResetEventSlim();
        var writer = new Thread(() =>
        {
            var one = new byte[] { 1 };
            while (!stop.Wait(periodMs)) server.Write(one, 0, 1);
            server.Write(one, 0, 1); // the reader's last read returns
        }) { IsBackground = true, Name = "offcpu-writer" };

        var results = new Dictionary<string, object>[3];
        var threads = new[]
        {
            new Thread(() => results[0] = OffCpuThreads.Measured(warmupMs, seconds, () =>
            {
                OffCpuThreads.Spin(cpuMs * 1_000_000L);
                var sw = Stopwatch.StartNew();
                Thread.Sleep(sleepMs);
                return sw.Elapsed.TotalMilliseconds;
            })) { Name = "offcpu-sleep" },
            new Thread(() =>
            {
                var buf = new byte[1];
                results[1] = OffCpuThreads.Measured(warmupMs, seconds, () =>
                {
                    var sw = Stopwatch.StartNew();
                    if (client.Read(buf, 0, 1) != 1) throw new EndOfStreamException();
                    return sw.Elapsed.TotalMilliseconds;
                });
            }) { Name = "offcpu-pipe" },
            new Thread(() => results[2] = OffCpuThreads.Measured(warmupMs, seconds, () =>
            {
                var t = Task.Delay(periodMs);
                var sw = Stopwatch.StartNew();
                t.Wait();
                return sw.Elapsed.TotalMilliseconds;
            })) { Name = "offcpu-wait" },
        };
        writer.Start();
        foreach (var t in threads) t.Start();
        foreach (var t in threads) t.Join();
        stop.Set();
        writer.Join();
        work["sleep"] = results[0];
        work["pipe"] = results[1];
        work["wait"] = results[2];
    }
}

public static class OffCpuThreads
{
    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int clock_gettime(int clock, out Timespec ts);

    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Sec, Nsec; }

    // ThreadCpuNs is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
    public static long ThreadCpuNs()
    {
        clock_gettime(3, out var ts);
        return ts.Sec * 1_000_000_000 + ts.Nsec;
    }

    // Spin burns ns of the thread's own CPU time.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Spin(long ns)
    {
        long end = ThreadCpuNs() + ns, x = 0;
        while (ThreadCpuNs() < end)
            for (int i = 0; i < 1000; i++) x += i * x + 1;
        return x;
    }

    // Measured sleeps warmupMs, then calls block until seconds pass
    // (block returns the wall milliseconds it spent blocked) and reports
    // the window between.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Dictionary<string, object> Measured(int warmupMs, double seconds, Func<double> block)
    {
        Thread.Sleep(warmupMs);
        var w = Window(seconds, block);
        return new Dictionary<string, object>
        {
            ["tid"] = Native.Tid(),
            ["wallMs"] = w[0],
            ["cpuMs"] = w[1],
            ["offMs"] = w[0] - w[1],
            ["blockedMs"] = w[2],
            ["calls"] = (int)w[3],
        };
    }

    // Window is the measured part: nothing but the loop between the two
    // clock readings.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static double[] Window(double seconds, Func<double> block)
    {
        var w = new double[4];
        long c0 = ThreadCpuNs();
        var sw = Stopwatch.StartNew();
        double blocked = 0;
        int calls = 0;
        while (sw.Elapsed.TotalSeconds < seconds)
        {
            blocked += block();
            calls++;
        }
        w[0] = sw.Elapsed.TotalMilliseconds;
        w[1] = (ThreadCpuNs() - c0) / 1e6;
        w[2] = blocked;
        w[3] = calls;
        return w;
    }
}
