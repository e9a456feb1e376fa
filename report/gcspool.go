package report

import (
	"bufio"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/clrspy/clrspy/gcpause"
)

// GCSpool holds the rows of the GCs a bounded gcpause analysis retired
// (Options.OnRetire), encoded as WriteGCJSONSpooled or WriteGCCSVSpooled
// will write them, in an unlinked temporary file: `clrspy gc --json` on a
// trace of millions of GCs writes every row with memory that does not grow
// with them (a GC record is ~670 bytes). The file is made at the first row
// and is gone once the spool is closed (or the process ends).
type GCSpool struct {
	spoolFile
	csv  bool
	cw   *csv.Writer // CSV spools only
	rows csvRows
	n    int
}

// spoolFile is an unlinked temporary file written through a buffer and
// made at the first write: what the GC rows of a long trace go to (a
// GCSpool's encoded rows, a page's GCColumns' columns), read once when the
// document is written. err is the first error; nothing is written after
// it.
type spoolFile struct {
	f   *os.File
	w   *bufio.Writer
	err error
}

// open makes the file if it is not there yet; false once an error was
// kept.
func (s *spoolFile) open(pattern string) bool {
	if s.err != nil {
		return false
	}
	if s.f == nil {
		f, err := os.CreateTemp("", pattern)
		if err != nil {
			s.err = fmt.Errorf("spooling GC rows: %w", err)
			return false
		}
		os.Remove(f.Name()) // the open file lives on; nothing is left behind
		s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	}
	return true
}

// flush makes what was written readable from s.f (the first error kept
// writing, if any).
func (s *spoolFile) flush() error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spooling GC rows: %w", err)
	}
	return nil
}

// NewGCSpool returns a spool of JSON rows, or of CSV rows with asCSV.
func NewGCSpool(asCSV bool) *GCSpool { return &GCSpool{csv: asCSV} }

// Add spools g's row. The first error is kept and returned by the writer.
func (s *GCSpool) Add(g *gcpause.GC) {
	if !s.open("clrspy-gc-*.spool") {
		return
	}
	if s.csv && s.cw == nil {
		s.cw = csv.NewWriter(s.w)
	}
	s.n++
	if s.csv {
		if row := s.rows.row(g); row != nil {
			s.err = s.cw.Write(row)
		}
		return
	}
	b, err := json.MarshalIndent(gcpause.NewGCRow(g), "    ", "  ")
	if err != nil {
		s.err = err
		return
	}
	s.w.Write(binary.AppendUvarint(nil, uint64(len(b))))
	s.w.Write(b)
}

// Len is how many GCs were spooled (0 for a nil spool).
func (s *GCSpool) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Close removes the spool's file.
func (s *GCSpool) Close() error {
	if s == nil || s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// each hands the spooled rows to fn in order: each JSON row, or the CSV
// text in pieces.
func (s *GCSpool) each(fn func([]byte)) error {
	if s == nil || s.f == nil {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	if s.cw != nil {
		s.cw.Flush()
		if err := s.cw.Error(); err != nil {
			return fmt.Errorf("spooling GC rows: %w", err)
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("reading spooled GC rows: %w", err)
	}
	r := bufio.NewReaderSize(s.f, 64<<10)
	if s.csv {
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				fn(buf[:n])
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("reading spooled GC rows: %w", err)
			}
		}
	}
	var b []byte
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err == nil {
			if uint64(cap(b)) < n {
				b = make([]byte, n)
			}
			b = b[:n]
			_, err = io.ReadFull(r, b)
		}
		if err != nil {
			return fmt.Errorf("reading spooled GC rows: %w", err)
		}
		fn(b)
	}
}

// The row bounds of a gc report (GCRows).
const (
	// liveRowsKept is how many GC and suspension rows a live session
	// keeps for the report (the most recent).
	liveRowsKept = 2000
	// fileRowsKept is how many GC rows a file's analysis keeps in memory;
	// older ones are spooled (every row written) or, for the text,
	// dropped but for those that began before the trace (at most
	// maxEarlyRows: they are named in a note).
	fileRowsKept = 1024
	maxEarlyRows = 1000
)

// GCRows is the row-retention policy of a `clrspy gc` report: how many
// GC and suspension rows the pause analysis keeps in memory, and where
// the ones it lets go of go.
type GCRows struct {
	spool *GCSpool
	early []*gcpause.GC // retired GCs the text's notes name
}

// NewGCRows sets opts' row bounds (MaxGCs, MaxSuspensions, OnRetire)
// for a report of a live session (live), or of a file whose every row is
// written (all: JSON, or CSV when asCSV), or of a file's text report:
//   - a live session keeps the most recent rows, so its memory stays
//     flat; the rollup (counts, percentiles, histogram) stays exact;
//   - every row of a file goes out: those the analysis retires wait in a
//     spool file (Spool), so memory does not grow with the GCs;
//   - a file's text lists no GC row but those that began before the trace.
func NewGCRows(opts *gcpause.Options, live, all, asCSV bool) *GCRows {
	r := &GCRows{}
	switch {
	case live:
		opts.MaxGCs, opts.MaxSuspensions = liveRowsKept, liveRowsKept
	case all:
		r.spool = NewGCSpool(asCSV)
		opts.MaxGCs, opts.OnRetire = fileRowsKept, r.spool.Add
	default:
		opts.MaxGCs = fileRowsKept
		opts.OnRetire = func(g *gcpause.GC) {
			if g.Complete && !g.StartSeen && len(r.early) < maxEarlyRows {
				r.early = append(r.early, g)
			}
		}
	}
	return r
}

// Spool holds the retired rows of a file whose every row is written (nil
// otherwise), for WriteGCJSONSpooled and WriteGCCSVSpooled.
func (r *GCRows) Spool() *GCSpool { return r.spool }

// Complete puts the retired rows a text report names back in front of
// res's rows, and returns res.
func (r *GCRows) Complete(res *gcpause.Result) *gcpause.Result {
	if len(r.early) > 0 {
		res.GCs = append(r.early, res.GCs...)
	}
	return res
}

// Close removes the spool file, if any.
func (r *GCRows) Close() error {
	if r.spool == nil {
		return nil
	}
	return r.spool.Close()
}
