// Package clrmeta reads the ECMA-335 metadata of managed module files (the
// .dll files a .NET process loaded, named by the runtime's module events)
// for what the runtime's events leave out: the class that declares a
// static field. The heap dump's GCBulkRootStaticVar gives a static
// root's field name and its object's type, not the declaring class
// (measured, and in dotnet/runtime's BulkStaticsLogger: the TypeID logged
// is the object's); the module's TypeDef and Field tables have it.
//
// R2RMethods names a module's precompiled (ReadyToRun) code from its
// ReadyToRun header (RuntimeFunctions and MethodDefEntryPoints) and the
// MethodDef and TypeDef tables: the profiler's names for framework code
// no method event listed.
//
// Only the metadata is read (the CLI header's directory of a PE file, then
// the #~ tables and the #Strings and #Blob heaps): the type definitions,
// their nesting, and their static fields with the type each field is
// declared with. No code runs and nothing is loaded; a file that is not a
// managed PE, or whose metadata is malformed, is an error (never a panic:
// every offset is checked).
package clrmeta
