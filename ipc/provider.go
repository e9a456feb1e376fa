package ipc

// Provider is one EventPipe provider configuration of a session.
type Provider struct {
	Name     string
	Keywords uint64
	Level    uint8  // 0 LogAlways .. 5 Verbose
	Args     string // "key=value;key2=value2" filter data, or ""
}
