// PerfViewGcdump: writes a .gcdump with PerfView's own serializer from a
// ClrMD walk of a core dump, as PerfView's "heap snapshot from a dump"
// does: every object of the heap walk (free space skipped, frozen
// segments included) becomes a MemoryGraph node of its ClrMD type name
// and size with its references, ClrMD's roots go under PerfView's root
// pseudo-nodes ("[.NET Roots]" > "[local vars]", "[other roots]" >
// "[strong Handles]", ...), and GCHeapDump.WriteMemoryGraph writes the
// file. It prints the node count and bytes it wrote, as JSON.
// Usage: PerfViewGcdump DUMP OUT.gcdump
using System.Text.Json;
using Graphs;
using Microsoft.Diagnostics.Runtime;

if (args.Length != 2)
{
    Console.Error.WriteLine("usage: PerfViewGcdump DUMP OUT.gcdump");
    return 2;
}
using var dt = DataTarget.LoadDump(args[0]);
if (dt.ClrVersions.Length == 0)
{
    Console.Error.WriteLine($"{args[0]}: no .NET runtime in the dump");
    return 1;
}
// The DAC beside the dump's libcoreclr (see ClrMDHeap).
var clr = dt.ClrVersions[0];
string dac = Path.Combine(Path.GetDirectoryName(clr.ModuleInfo.FileName) ?? "", "libmscordaccore.so");
using var runtime = File.Exists(dac) ? clr.CreateRuntime(dac, ignoreMismatch: clr.Version.Major == 0) : clr.CreateRuntime();
var heap = runtime.Heap;

var graph = new MemoryGraph(100_000) { Is64Bit = true };
var types = new Dictionary<string, NodeTypeIndex>();
var children = new System.Collections.Generic.GrowableArray<NodeIndex>(16);
long objects = 0, bytes = 0;
foreach (var o in heap.EnumerateObjects())
{
    if (o.Type is null || o.IsFree) continue;
    string name = o.Type.Name ?? "?";
    if (!types.TryGetValue(name, out var ti))
        types[name] = ti = graph.CreateType(name, o.Type.Module?.Name ?? "", 0);
    var idx = graph.GetNodeIndex(o.Address);
    children.Clear();
    foreach (var c in o.EnumerateReferences(carefully: false, considerDependantHandles: false))
        if (c.IsValid) children.Add(graph.GetNodeIndex(c.Address));
    graph.SetNode(idx, ti, (int)o.Size, children);
    objects++;
    bytes += (long)o.Size;
}

var root = new MemoryNodeBuilder(graph, "[.NET Roots]");
foreach (var r in heap.EnumerateRoots())
{
    if (!r.Object.IsValid || !graph.IsInGraph(r.Object.Address)) continue;
    MemoryNodeBuilder group = r.RootKind switch
    {
        ClrRootKind.Stack => root.FindOrCreateChild("[local vars]"),
        ClrRootKind.StrongHandle => root.FindOrCreateChild("[other roots]").FindOrCreateChild("[strong Handles]"),
        ClrRootKind.PinnedHandle or ClrRootKind.AsyncPinnedHandle => root.FindOrCreateChild("[other roots]").FindOrCreateChild("[pinning Handles]"),
        ClrRootKind.FinalizerQueue => root.FindOrCreateChild("[other roots]").FindOrCreateChild("[finalizer Handles]"),
        _ => root.FindOrCreateChild("[other roots]").FindOrCreateChild("[other Handles]"),
    };
    group.AddChild(graph.GetNodeIndex(r.Object.Address));
}
graph.RootIndex = root.Build();
graph.AllowReading();
GCHeapDump.WriteMemoryGraph(graph, args[1], "clrspy PerfViewGcdump");
Console.WriteLine(JsonSerializer.Serialize(new { objects, bytes, types = types.Count }));
return 0;
