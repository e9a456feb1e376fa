// Command readspeed times the two figures scripts/reader-speed.sh sets
// clrspy's commands against, on one trace file:
//
//	go run ./internal/readspeed floor FILE       # read the file, touch every byte
//	go run ./internal/readspeed reader [-threads N] FILE  # every event through nettrace.Reader, no decoding
//
// floor reads the file through a 256 KB buffer and adds its bytes eight at
// a time (every byte read once, as cheaply as Go reads memory); reader
// iterates every event in timestamp order with stacks resolved, as the
// commands' reader does, and decodes no payload. Each prints one line:
// mode, wall seconds, CPU seconds (user+sys of the whole process), bytes,
// MB/s and events delivered (0 for floor).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: readspeed floor|reader [-threads N] FILE")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	threads := fs.Int("threads", 1, "reader decoders (nettrace.Options.Threads)")
	keep := fs.String("keep", "all", "events delivered: all, none (every one rejected, as stat's count needs) or gc (gcpause.Wants)")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	fs.Parse(os.Args[2:])
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "readspeed: one trace file")
		os.Exit(2)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "readspeed:", err)
		os.Exit(1)
	}
	defer f.Close()
	if *prof != "" {
		pf, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "readspeed:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	var n, events int64
	switch mode {
	case "floor":
		n, err = floor(f)
	case "reader":
		n, events, err = reader(f, *threads, *keep)
	default:
		err = fmt.Errorf("unknown mode %q (floor or reader)", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "readspeed:", err)
		os.Exit(1)
	}
	s := time.Since(start).Seconds()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	fmt.Printf("%s %.3f s %.3f cpu %d bytes %.0f MB/s %d events\n", mode, s, cpu, n, float64(n)/s/1e6, events)
}

func floor(f io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
	var sum uint64
	var total int64
	for {
		n, err := f.Read(buf)
		total += int64(n)
		i := 0
		for ; i+8 <= n; i += 8 {
			sum += binary.LittleEndian.Uint64(buf[i:])
		}
		for ; i < n; i++ {
			sum += uint64(buf[i])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return total, err
		}
	}
	if sum == 1 { // keep the sum live
		fmt.Fprint(io.Discard, sum)
	}
	return total, nil
}

func reader(f *os.File, threads int, keep string) (int64, int64, error) {
	opt := nettrace.Options{Threads: threads}
	switch keep {
	case "all":
	case "none":
		opt.Keep = func(*nettrace.Metadata) bool { return false }
	case "gc":
		opt.Keep = gcpause.Wants
	default:
		return 0, 0, fmt.Errorf("unknown -keep %q (all, none or gc)", keep)
	}
	r, err := nettrace.NewReaderOptions(f, opt)
	if err != nil {
		return 0, 0, err
	}
	var events int64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, events, err
		}
		events++
	}
	return r.Stats().Bytes, events, nil
}
