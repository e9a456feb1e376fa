// Package ipc is clrspy's transport: it finds .NET processes, speaks the
// runtime's diagnostics IPC protocol (ProcessInfo, CollectTracing,
// StopTracing, ResumeRuntime) over Unix sockets, and runs EventPipe
// sessions whose nettrace byte stream the nettrace package reads.
package ipc

// Provider is one EventPipe provider configuration of a session.
type Provider struct {
	Name     string
	Keywords uint64
	Level    uint8  // 0 LogAlways .. 5 Verbose
	Args     string // "key=value;key2=value2" filter data, or ""
}
