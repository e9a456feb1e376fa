package nettrace

// runtimeEventName returns the TraceEvent-style "Task/Opcode" name of a
// runtime-provider event, or "" when the table has none.
func runtimeEventName(provider string, id uint32) string {
	return ""
}
