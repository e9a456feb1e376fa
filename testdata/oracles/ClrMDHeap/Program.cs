// ClrMDHeap: an independent count of a process's GC heap, from a core dump
// read by ClrMD (Microsoft.Diagnostics.Runtime), for clrspy's snapshot
// tests. It prints one JSON document:
//   heap:   every object of the heap walk (free space skipped), frozen
//           (NonGC) segments included, per type in ClrMD's naming;
//   frozen: the part of heap in frozen segments (string literals,
//           RuntimeType objects, preallocated statics), which the GC does
//           not collect; its heap dump describes them with the rest;
//   live:   with --live, the objects reachable from ClrMD's own roots
//           (stacks, handles; dependent handles followed), per type, and
//           those roots per kind.
// Usage: ClrMDHeap [--live] DUMP
using System.Text.Json;
using Microsoft.Diagnostics.Runtime;

bool wantLive = args.Length == 2 && args[0] == "--live";
if (args.Length != 1 && !wantLive)
{
    Console.Error.WriteLine("usage: ClrMDHeap [--live] DUMP");
    return 2;
}
string path = args[^1];
using var dt = DataTarget.LoadDump(path);
if (dt.ClrVersions.Length == 0)
{
    Console.Error.WriteLine($"{path}: no .NET runtime in the dump");
    return 1;
}
// The dump names libcoreclr's path; the DAC that matches it is beside it
// on this machine (the runtime that ran the target). ClrMD would otherwise
// look for it on a symbol server, which it does not do on Linux. A dump
// without all memory may lack the version ClrMD reads from libcoreclr's
// image (it then says 0.0): the file beside that very libcoreclr is the
// match, so the version check is skipped only then.
var clr = dt.ClrVersions[0];
string dac = Path.Combine(Path.GetDirectoryName(clr.ModuleInfo.FileName) ?? "", "libmscordaccore.so");
using var runtime = File.Exists(dac) ? clr.CreateRuntime(dac, ignoreMismatch: clr.Version.Major == 0) : clr.CreateRuntime();
var heap = runtime.Heap;
if (!heap.CanWalkHeap)
{
    Console.Error.WriteLine($"{path}: ClrMD cannot walk the heap (a dump without the GC heap?)");
    return 1;
}

var all = new Dictionary<string, long[]>();
long objects = 0, bytes = 0, frozenObjects = 0, frozenBytes = 0;
foreach (var seg in heap.Segments)
{
    bool frozen = seg.Kind == GCSegmentKind.Frozen;
    foreach (var o in seg.EnumerateObjects())
    {
        if (o.Type is null || o.IsFree) continue;
        Add(all, o);
        objects++;
        bytes += (long)o.Size;
        if (frozen)
        {
            frozenObjects++;
            frozenBytes += (long)o.Size;
        }
    }
}

object? liveDoc = null;
if (wantLive)
{
    var live = new Dictionary<string, long[]>();
    var rootKinds = new Dictionary<string, long>();
    var seen = new HashSet<ulong>();
    var stack = new Stack<ClrObject>();
    foreach (var r in heap.EnumerateRoots())
    {
        string kind = r.RootKind.ToString();
        rootKinds[kind] = rootKinds.GetValueOrDefault(kind) + 1;
        if (r.Object.IsValid && seen.Add(r.Object.Address)) stack.Push(r.Object);
    }
    long liveObjects = 0, liveBytes = 0;
    while (stack.Count > 0)
    {
        var o = stack.Pop();
        if (o.Type is null) continue;
        Add(live, o);
        liveObjects++;
        liveBytes += (long)o.Size;
        foreach (var c in o.EnumerateReferences(carefully: false, considerDependantHandles: true))
            if (c.IsValid && seen.Add(c.Address)) stack.Push(c);
    }
    liveDoc = new { part = Rows(live, liveObjects, liveBytes), roots = rootKinds };
}

var doc = new
{
    runtime = clr.Version.ToString(),
    heap = Rows(all, objects, bytes),
    frozen = new { objects = frozenObjects, bytes = frozenBytes },
    live = liveDoc,
};
Console.WriteLine(JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }));
return 0;

static void Add(Dictionary<string, long[]> m, ClrObject o)
{
    string name = o.Type!.Name ?? "?";
    if (!m.TryGetValue(name, out var v)) m[name] = v = new long[2];
    v[0]++;
    v[1] += (long)o.Size;
}

static object Rows(Dictionary<string, long[]> m, long objects, long bytes) => new
{
    objects,
    bytes,
    types = m.OrderByDescending(kv => kv.Value[1]).Select(kv => new { type = kv.Key, count = kv.Value[0], bytes = kv.Value[1] }).ToList(),
};
