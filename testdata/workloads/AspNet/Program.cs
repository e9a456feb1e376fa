// clrspy's ASP.NET Core test workload: Kestrel on 127.0.0.1 with three
// routes, and an outermost middleware that records, for every request, its
// own start and stop and GC.GetTotalPauseDuration before and after, so a
// test can compare clrspy's per-request figures with the application's own.
//
// Routes: GET /alloc/{n} allocates hard (gen0/gen1 GCs; a timer induces a
// blocking gen2 every gen2EveryMs); GET /lock/{n} takes one contended
// Monitor and holds it holdMs; GET /call/{n} calls GET /backend/{n} of the
// same server through HttpClient (the backend waits backendMs).
//
// Options (key=value): port 0 (0: any free port), gen2EveryMs 1000, allocKB
// 256, holdMs 2, backendMs 5. Prints "ready <pid>" and then "listening
// <url>" on stderr; a line "stop" on stdin (or its end) stops the server,
// then one JSON line on stdout: the runtime's figures and work.requests, one
// row per request the middleware saw: [traceIdentifier, path, status,
// durationMs, gcPauseMs (the GC.GetTotalPauseDuration delta), lockWaitMs,
// httpOutMs], plus per-route counts.
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Runtime;
using System.Runtime.InteropServices;
using System.Text.Json;

var opt = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
foreach (var a in args)
{
    var i = a.IndexOf('=');
    if (i <= 0) { Console.Error.WriteLine($"option {a}: want key=value"); return 2; }
    opt[a[..i]] = a[(i + 1)..];
}
int Int(string k, int d) => opt.TryGetValue(k, out var v) ? int.Parse(v) : d;

int port = Int("port", 0), gen2Every = Int("gen2EveryMs", 1000), allocKB = Int("allocKB", 256);
int holdMs = Int("holdMs", 2), backendMs = Int("backendMs", 5);

Console.Error.WriteLine($"ready {Environment.ProcessId}");

var builder = WebApplication.CreateSlimBuilder();
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, port));
var app = builder.Build();

var rows = new ConcurrentQueue<object[]>();
var gate = new object();
var keep = new byte[64][];
long keepNext = 0;
var http = new HttpClient();
string self = "";

// The outermost middleware: its window is inside Kestrel's RequestStart/Stop.
app.Use(async (ctx, next) =>
{
    long t0 = Stopwatch.GetTimestamp();
    var p0 = GC.GetTotalPauseDuration();
    await next(ctx);
    var p1 = GC.GetTotalPauseDuration();
    long t1 = Stopwatch.GetTimestamp();
    double lockMs = ctx.Items.TryGetValue("lockWaitMs", out var l) ? (double)l! : 0;
    double outMs = ctx.Items.TryGetValue("httpOutMs", out var o) ? (double)o! : 0;
    rows.Enqueue(new object[] { ctx.TraceIdentifier, ctx.Request.Path.Value ?? "", ctx.Response.StatusCode,
        Stopwatch.GetElapsedTime(t0, t1).TotalMilliseconds, (p1 - p0).TotalMilliseconds, lockMs, outMs });
});

app.MapGet("/alloc/{n:int}", (int n) =>
{
    long sum = 0;
    for (int i = 0; i < allocKB; i++)
    {
        var b = new byte[1024];
        b[i % 1024] = (byte)n;
        sum += b[0];
        // Keep a few alive a while: promotions make gen1 GCs.
        if ((i & 15) == 0) keep[Interlocked.Increment(ref keepNext) & 63] = b;
    }
    return Results.Text(sum.ToString());
});

app.MapGet("/lock/{n:int}", (HttpContext ctx, int n) =>
{
    long t = Stopwatch.GetTimestamp();
    lock (gate)
    {
        ctx.Items["lockWaitMs"] = Stopwatch.GetElapsedTime(t).TotalMilliseconds;
        Thread.Sleep(holdMs);
    }
    return Results.Text(n.ToString());
});

app.MapGet("/call/{n:int}", async (HttpContext ctx, int n) =>
{
    long t = Stopwatch.GetTimestamp();
    using var resp = await http.GetAsync(self + "/backend/" + n);
    var body = await resp.Content.ReadAsStringAsync();
    ctx.Items["httpOutMs"] = Stopwatch.GetElapsedTime(t).TotalMilliseconds;
    return Results.Text(body);
});

app.MapGet("/backend/{n:int}", async (int n) =>
{
    await Task.Delay(backendMs);
    return Results.Text(n.ToString());
});

await app.StartAsync();
self = app.Urls.First().Replace("[::1]", "127.0.0.1");
Console.Error.WriteLine($"listening {self}");

using var stop = new CancellationTokenSource();
var gen2 = new Thread(() =>
{
    while (gen2Every > 0 && !stop.Token.WaitHandle.WaitOne(gen2Every))
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
}) { IsBackground = true };
gen2.Start();

var sw = Stopwatch.StartNew();
while (true)
{
    var line = Console.In.ReadLine();
    if (line == null || line.Trim() == "stop") break;
}
stop.Cancel();
gen2.Join();
await app.StopAsync();
sw.Stop();

var all = rows.ToArray();
var counts = new Dictionary<string, int>();
foreach (var r in all)
{
    var p = (string)r[1];
    var route = p.Length > 1 ? p[1..].Split('/')[0] : p;
    counts[route] = counts.GetValueOrDefault(route) + 1;
}
var result = new Dictionary<string, object>
{
    ["mode"] = "aspnet",
    ["pid"] = Environment.ProcessId,
    ["runtime"] = RuntimeInformation.FrameworkDescription,
    ["serverGC"] = GCSettings.IsServerGC,
    ["concurrentGC"] = GCSettings.LatencyMode != GCLatencyMode.Batch,
    ["gen0"] = GC.CollectionCount(0),
    ["gen1"] = GC.CollectionCount(1),
    ["gen2"] = GC.CollectionCount(2),
    ["pauseMs"] = GC.GetTotalPauseDuration().TotalMilliseconds,
    ["elapsedMs"] = sw.Elapsed.TotalMilliseconds,
    ["work"] = new Dictionary<string, object> { ["requests"] = all, ["counts"] = counts },
};
Console.Out.WriteLine(JsonSerializer.Serialize(result));
Console.Out.Flush();
return 0;
