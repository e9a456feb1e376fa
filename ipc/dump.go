package ipc

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// The Dump command set: the runtime runs its createdump next to
// libcoreclr, which writes an ELF core file of the process, and answers
// when the file is complete.
const (
	setDump = 0x01

	cmdGenerateCoreDump  = 0x01 // dump type, "diagnostics" (logging) as a 0/1 uint32
	cmdGenerateCoreDump2 = 0x02 // dump type, flags (.NET 6+)
	cmdGenerateCoreDump3 = 0x03 // as 2; an error reply also carries createdump's message (.NET 7+)
)

// DumpType is what a core dump holds (the runtime's and createdump's
// numbering).
type DumpType uint32

const (
	DumpNormal   DumpType = 1 // stacks, modules, no GC heap
	DumpWithHeap DumpType = 2 // Normal plus the GC heap and what a debugger or ClrMD needs to walk it
	DumpTriage   DumpType = 3 // minimal, personal data removed
	DumpFull     DumpType = 4 // all the process's memory
)

// DumpFlags are GenerateCoreDump2/3's flags.
type DumpFlags uint32

const (
	DumpLogging        DumpFlags = 1 // createdump logs to the target's stdout
	DumpVerboseLogging DumpFlags = 2
	DumpCrashReport    DumpFlags = 4 // also FILE.crashreport.json
)

// dumpTimeout bounds the wait for the reply: the runtime answers only when
// createdump has written the whole file, which for a large heap takes far
// longer than other commands.
const dumpTimeout = 5 * time.Minute

// dumpPayload is the request of every GenerateCoreDump version: the file
// name (UTF-16, the target opens it, so absolute), the type, and the flags
// (for version 1, a 0/1 logging switch in the same uint32).
func dumpPayload(path string, typ DumpType, flags DumpFlags) []byte {
	e := &enc{}
	e.str(path)
	e.u32(uint32(typ))
	e.u32(uint32(flags))
	return e.b
}

// WriteDump asks the runtime for a core dump of its process at path (an
// absolute path the target can write: createdump runs as the target's
// user). It tries GenerateCoreDump3, then 2 and 1 on runtimes that do not
// know them, as dotnet-dump does; version 1 takes only the logging flag.
func (c *Client) WriteDump(path string, typ DumpType, flags DumpFlags) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("core dump path %q is not absolute: the target process, not clrspy, opens it", path)
	}
	if typ < DumpNormal || typ > DumpFull {
		return fmt.Errorf("unknown dump type %d (1 normal, 2 with heap, 3 triage, 4 full)", typ)
	}
	dc := *c
	if dc.timeout < dumpTimeout {
		dc.timeout = dumpTimeout
	}
	for _, v := range []struct {
		id  byte
		cmd string
	}{{cmdGenerateCoreDump3, "GenerateCoreDump3"}, {cmdGenerateCoreDump2, "GenerateCoreDump2"}, {cmdGenerateCoreDump, "GenerateCoreDump"}} {
		f := flags
		if v.id == cmdGenerateCoreDump {
			if flags&^DumpLogging != 0 {
				return errors.New("this runtime's dump command takes no flags but logging (crash reports need .NET 6+)")
			}
			f = flags & DumpLogging
		}
		conn, reply, err := dc.do(setDump, v.id, dumpPayload(path, typ, f), v.cmd)
		if IsUnknownCommand(err) {
			continue
		}
		if err != nil {
			return err
		}
		conn.Close()
		if len(reply) >= 4 {
			if hr := (&dec{b: reply}).u32(); hr != 0 {
				return &ServerError{Command: v.cmd, HResult: hr}
			}
		}
		return nil
	}
	return errors.New("the runtime knows no GenerateCoreDump command")
}
