package ipc

import (
	"encoding/binary"
	"testing"
)

// EnablePerfMap sends process command 0x0405 with the map type; an
// HRESULT reply of 0 is success, another is a ServerError, and an old
// runtime's unknown-command reply is recognisable. DisablePerfMap is
// 0x0406 without payload.
func TestPerfMapCommands(t *testing.T) {
	hr := func(v uint32) []byte { return reply(respOK, binary.LittleEndian.AppendUint32(nil, v)) }
	unknown := reply(respError, binary.LittleEndian.AppendUint32(nil, HRUnknownCommand))
	f := &fakeRuntime{replies: [][]byte{hr(0), hr(HRFail), unknown, hr(0)}}
	c := NewClient(1, f.dial)
	if err := c.EnablePerfMap(PerfMapPerfMap); err != nil {
		t.Fatal(err)
	}
	req := f.requests[0]
	if req[16] != setProcess || req[17] != cmdEnablePerfMap || len(req) != headerSize+4 || binary.LittleEndian.Uint32(req[headerSize:]) != 3 {
		t.Errorf("request % x", req)
	}
	if err := c.EnablePerfMap(PerfMapAll); err == nil || err.Error() != "the runtime refused EnablePerfMap: DS_IPC_E_FAIL (0x80004005)" {
		t.Errorf("failure reply: %v", err)
	}
	if err := c.EnablePerfMap(PerfMapPerfMap); !IsUnknownCommand(err) {
		t.Errorf("old runtime: %v", err)
	}
	if err := c.DisablePerfMap(); err != nil {
		t.Fatal(err)
	}
	if req := f.requests[3]; req[17] != cmdDisablePerfMap || len(req) != headerSize {
		t.Errorf("disable request % x", req)
	}
}
