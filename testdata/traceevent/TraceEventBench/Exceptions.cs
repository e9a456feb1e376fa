// The exceptions mode of TraceEventBench: every exception event as
// TraceEvent's ClrTraceEventParser decodes it (Exception/Start with its
// type, message, EIP, HRESULT and flags; ExceptionCatch/Finally/Filter
// Start with the method; their Stops and Exception/Stop), in stream order,
// for clrspy's decoders to be compared with field by field.
using System.Text.Json;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

static class ExceptionsMode
{
    public static int Run(string path)
    {
        using var stdout = Console.OpenStandardOutput();
        using var json = new Utf8JsonWriter(stdout, new JsonWriterOptions { Indented = false });
        string? error = null;
        using (var source = new EventPipeEventSource(path))
        {
            json.WriteStartObject();
            json.WriteStartArray("events");
            source.Clr.ExceptionStart += e =>
            {
                json.WriteStartObject();
                json.WriteString("kind", "thrown");
                json.WriteNumber("tid", e.ThreadID);
                json.WriteString("type", e.ExceptionType);
                json.WriteString("message", e.ExceptionMessage);
                json.WriteNumber("eip", e.ExceptionEIP);
                json.WriteNumber("hresult", e.ExceptionHRESULT);
                json.WriteNumber("flags", (int)e.ExceptionFlags);
                json.WriteEndObject();
            };
            void Handling(string kind, ExceptionHandlingTraceData e)
            {
                json.WriteStartObject();
                json.WriteString("kind", kind);
                json.WriteNumber("tid", e.ThreadID);
                json.WriteNumber("entry_eip", e.EntryEIP);
                json.WriteNumber("method_id", e.MethodID);
                json.WriteString("method_name", e.MethodName);
                json.WriteEndObject();
            }
            void Stop(string kind, TraceEvent e)
            {
                json.WriteStartObject();
                json.WriteString("kind", kind);
                json.WriteNumber("tid", e.ThreadID);
                json.WriteEndObject();
            }
            source.Clr.ExceptionCatchStart += e => Handling("catch", e);
            source.Clr.ExceptionFinallyStart += e => Handling("finally", e);
            source.Clr.ExceptionFilterStart += e => Handling("filter", e);
            source.Clr.ExceptionCatchStop += e => Stop("catch_stop", e);
            source.Clr.ExceptionFinallyStop += e => Stop("finally_stop", e);
            source.Clr.ExceptionFilterStop += e => Stop("filter_stop", e);
            source.Clr.ExceptionStop += e => Stop("thrown_stop", e);
            try
            {
                source.Process();
            }
            catch (Exception e)
            {
                error = e.GetType().Name + ": " + e.Message;
            }
            json.WriteEndArray();
            json.WriteNumber("events_lost", source.EventsLost);
            if (error != null)
                json.WriteString("error", error);
            json.WriteEndObject();
            json.Flush();
            stdout.Write("\n"u8);
        }
        return error == null ? 0 : 1;
    }
}
