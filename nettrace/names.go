package nettrace

// Runtime events carry empty names in their metadata, so tools name them
// from (provider, id). The names are package clrevents' (its table of
// runtime events), which registers them when it is linked in: a program
// that reads traces with nettrace alone shows runtime events as
// "EventID(N)".
var runtimeNames func(ProviderKind, uint32) string

// SetRuntimeEventNames sets how runtime events are named (clrevents does
// it in its init). Call it before reading, not while readers run.
func SetRuntimeEventNames(f func(ProviderKind, uint32) string) { runtimeNames = f }

// runtimeEventName returns the TraceEvent-style "Task/Opcode" name of a
// runtime-provider event, or "" when the table has none.
func runtimeEventName(provider string, id uint32) string {
	if runtimeNames == nil {
		return ""
	}
	return runtimeNames(classifyProvider(provider), id)
}
