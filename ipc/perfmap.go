package ipc

// Process commands of .NET 8+ that make the runtime write a perf map.
const (
	cmdEnablePerfMap  = 0x05
	cmdDisablePerfMap = 0x06
)

// PerfMapType selects what EnablePerfMap makes the runtime write.
type PerfMapType uint32

// Perf map types (the runtime's PerfMapType).
const (
	PerfMapDisabled PerfMapType = 0
	PerfMapAll      PerfMapType = 1 // perf map and jitdump
	PerfMapJitDump  PerfMapType = 2 // jitdump only
	PerfMapPerfMap  PerfMapType = 3 // /tmp/perf-PID.map only
)

// EnablePerfMap asks the runtime (.NET 8+) to write the symbols of its
// JIT'd code and stubs: with PerfMapPerfMap, /tmp/perf-PID.map (PID as
// the target's pid namespace numbers it), for code compiled from now on
// and for what already exists. Older runtimes answer with an unknown
// command error (IsUnknownCommand).
func (c *Client) EnablePerfMap(t PerfMapType) error {
	e := &enc{}
	e.u32(uint32(t))
	return c.hresultCommand(cmdEnablePerfMap, e.b, "EnablePerfMap")
}

// DisablePerfMap stops the writing EnablePerfMap started.
func (c *Client) DisablePerfMap() error {
	return c.hresultCommand(cmdDisablePerfMap, nil, "DisablePerfMap")
}

// hresultCommand sends a process command whose reply is an HRESULT.
func (c *Client) hresultCommand(id byte, payload []byte, name string) error {
	conn, reply, err := c.do(setProcess, id, payload, name)
	if err != nil {
		return err
	}
	conn.Close()
	if len(reply) >= 4 {
		if hr := (&dec{b: reply}).u32(); hr != 0 {
			return &ServerError{Command: name, HResult: hr}
		}
	}
	return nil
}
