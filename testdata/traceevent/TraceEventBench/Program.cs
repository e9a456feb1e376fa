// TraceEventBench reads a .nettrace/.netperf file with TraceEvent (the
// Microsoft.Diagnostics.Tracing.TraceEvent package PerfView is built on) and
// does what one clrspy command does with it, so the two can be timed on the
// same files and their results compared:
//
//   stat FILE  every event through EventPipeEventSource with the runtime's
//              parsers registered (events named as PerfView names them),
//              counted per provider, event, id and version (clrspy stat).
//   exceptions FILE  every exception event as TraceEvent decodes it
//              (Exceptions.cs; clrevents' exception decoders).
//   gc FILE    TraceEvent's GC analysis (NeedLoadedDotNetRuntimes: the
//              TraceLoadedDotNetRuntime/TraceGC rows PerfView's GCStats view
//              prints), one row per GC (clrspy gc --json).
//   fields FILE NAME...  the payload fields of the events named NAME, as
//              TraceEvent's parsers decode them (Fields.cs).
//
// Output is one JSON document on stdout. A file TraceEvent cannot read to
// its end exits with status 1 after printing what it had, with "error".
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Analysis;
using Microsoft.Diagnostics.Tracing.Analysis.GC;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

if (args.Length == 2 && args[0] == "exceptions")
    return ExceptionsMode.Run(args[1]); // Exceptions.cs
if (args.Length < 2 || (args[0] != "stat" && args[0] != "gc" && args[0] != "fields") || (args[0] != "fields" && args.Length != 2))
{
    Console.Error.WriteLine("usage: TraceEventBench stat|gc FILE | fields FILE NAME...");
    return 2;
}
using var stdout = Console.OpenStandardOutput();
using var json = new Utf8JsonWriter(stdout, new JsonWriterOptions { Indented = true });
string? error = null;
using (var source = new EventPipeEventSource(args[1]))
{
    json.WriteStartObject();
    try
    {
        if (args[0] == "stat")
            Stat(source, json, ref error);
        else if (args[0] == "fields")
            Fields.Run(source, args[2..], json, ref error);
        else
            GC(source, json, ref error);
    }
    finally
    {
        if (error != null)
            json.WriteString("error", error);
        json.WriteEndObject();
        json.Flush();
        stdout.Write("\n"u8);
    }
}
return error == null ? 0 : 1;

static void Stat(EventPipeEventSource source, Utf8JsonWriter json, ref string? error)
{
    // Registering the parsers is what names the runtime's events (their
    // EventPipe metadata carries no names); the callbacks do nothing.
    Action<TraceEvent> none = _ => { };
    source.Clr.All += none;
    new ClrRundownTraceEventParser(source).All += none;
    new ClrPrivateTraceEventParser(source).All += none;
    new SampleProfilerTraceEventParser(source).All += none;
    source.Dynamic.All += none;

    var counts = new Dictionary<(Guid, int, int), Row>();
    long total = 0;
    source.AllEvents += e =>
    {
        total++;
        var key = (e.ProviderGuid, (int)e.ID, (int)e.Version);
        if (!counts.TryGetValue(key, out var row))
        {
            row = new Row { Provider = e.ProviderName, Name = e.EventName, ID = (int)e.ID, Version = e.Version };
            counts[key] = row;
        }
        row.Count++;
    };
    try
    {
        source.Process();
    }
    catch (Exception e)
    {
        error = e.GetType().Name + ": " + e.Message;
    }
    json.WriteNumber("events", total);
    json.WriteNumber("events_lost", source.EventsLost);
    json.WriteStartArray("event_counts");
    foreach (var r in counts.Values.OrderBy(r => r.Provider, StringComparer.Ordinal).ThenBy(r => r.ID).ThenBy(r => r.Version))
    {
        json.WriteStartObject();
        json.WriteString("provider", r.Provider);
        json.WriteString("name", r.Name);
        json.WriteNumber("id", r.ID);
        json.WriteNumber("version", r.Version);
        json.WriteNumber("count", r.Count);
        json.WriteEndObject();
    }
    json.WriteEndArray();
}

static void GC(EventPipeEventSource source, Utf8JsonWriter json, ref string? error)
{
    source.NeedLoadedDotNetRuntimes();
    long total = 0;
    source.AllEvents += _ => total++;
    try
    {
        source.Process();
    }
    catch (Exception e)
    {
        error = e.GetType().Name + ": " + e.Message;
    }
    json.WriteNumber("events", total);
    json.WriteStartArray("processes");
    foreach (var proc in source.Processes())
    {
        var rt = proc.LoadedDotNetRuntime();
        if (rt == null)
            continue;
        json.WriteStartObject();
        json.WriteNumber("pid", proc.ProcessID);
        json.WriteStartArray("gcs");
        foreach (TraceGC gc in rt.GC.GCs)
        {
            json.WriteStartObject();
            json.WriteNumber("number", gc.Number);
            json.WriteNumber("generation", gc.Generation);
            json.WriteString("type", gc.Type.ToString());
            json.WriteString("reason", gc.Reason.ToString());
            json.WriteBoolean("complete", gc.IsComplete);
            json.WriteNumber("pause_start_ms", gc.PauseStartRelativeMSec);
            json.WriteNumber("start_ms", gc.StartRelativeMSec);
            json.WriteNumber("suspend_ms", gc.SuspendDurationMSec);
            json.WriteNumber("pause_ms", gc.PauseDurationMSec);
            json.WriteNumber("duration_ms", gc.DurationMSec);
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteEndObject();
    }
    json.WriteEndArray();
}

sealed class Row
{
    public string Provider = "", Name = "";
    public int ID, Version;
    public long Count;
}
