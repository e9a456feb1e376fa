using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

// Fields is the "fields FILE NAME..." mode: every event whose TraceEvent
// name ("ThreadPoolWorkerThread/Start") is one of NAME, in stream order,
// with its thread, its stack's presence and its payload fields as
// TraceEvent's parsers decode them (numbers as numbers, the rest as
// strings), so clrspy's decoders can be compared field by field.
static class Fields
{
    public static void Run(EventPipeEventSource source, string[] names, Utf8JsonWriter json, ref string? error)
    {
        var want = new HashSet<string>(names, StringComparer.Ordinal);
        Action<TraceEvent> none = _ => { };
        source.Clr.All += none;
        new ClrRundownTraceEventParser(source).All += none;
        json.WriteStartArray("events");
        source.AllEvents += e =>
        {
            if (!want.Contains(e.EventName))
                return;
            json.WriteStartObject();
            json.WriteString("name", e.EventName);
            json.WriteNumber("version", e.Version);
            json.WriteNumber("thread", e.ThreadID);
            json.WriteNumber("time_ms", e.TimeStampRelativeMSec);
            json.WriteStartObject("fields");
            for (int i = 0; i < e.PayloadNames.Length; i++)
            {
                object v = e.PayloadValue(i);
                string n = e.PayloadNames[i];
                switch (v)
                {
                    case double d: json.WriteNumber(n, d); break;
                    case float f: json.WriteNumber(n, f); break;
                    case int x: json.WriteNumber(n, x); break;
                    case uint x: json.WriteNumber(n, x); break;
                    case long x: json.WriteNumber(n, x); break;
                    case ulong x: json.WriteNumber(n, x); break;
                    case short x: json.WriteNumber(n, x); break;
                    case ushort x: json.WriteNumber(n, x); break;
                    case byte x: json.WriteNumber(n, x); break;
                    case Enum en: json.WriteNumber(n, Convert.ToInt64(en)); break;
                    default: json.WriteString(n, v?.ToString() ?? ""); break;
                }
            }
            json.WriteEndObject();
            json.WriteEndObject();
        };
        try
        {
            source.Process();
        }
        catch (Exception e)
        {
            error = e.GetType().Name + ": " + e.Message;
        }
        json.WriteEndArray();
    }
}
