// Package ipc is clrspy's transport: it finds .NET processes, speaks the
// runtime's diagnostics IPC protocol (ProcessInfo, CollectTracing,
// StopTracing, ResumeRuntime, GenerateCoreDump) over Unix sockets, and
// runs EventPipe sessions whose nettrace byte stream the nettrace package
// reads.
package ipc
