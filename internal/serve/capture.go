package serve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/flightrec"
	"github.com/clrspy/clrspy/internal/outfile"
	"github.com/clrspy/clrspy/nettrace"
)

// captures writes pause-triggered windows to one directory, keeping it
// within MaxFiles and MaxBytes (oldest removed first; files of other names
// are never touched).
type captures struct {
	cfg Capture
	log *slog.Logger
	mu  sync.Mutex

	// Failures, guarded by mu: counted by reason; the first of a streak
	// is a warning (the others are at debug level), and each one doubles
	// the pause before the next attempt (from captureBackoff up to
	// captureMaxBackoff); a capture due meanwhile is skipped and counted.
	errs    map[string]uint64
	failing bool
	delay   time.Duration
	until   time.Time
}

// The pause after a failed capture: doubled on each failure in a row.
// A var for the tests.
var (
	captureBackoff    = 10 * time.Second
	captureMaxBackoff = 10 * time.Minute
)

// errBackoff is the Create error of a capture skipped while failing.
var errBackoff = errors.New("skipped: captures are backing off after a failure")

// captureReason classifies a capture's failure for
// clrspy_capture_errors_total.
func captureReason(err error) string {
	switch {
	case errors.Is(err, errBackoff):
		return "skipped"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "no_space"
	case errors.Is(err, syscall.EROFS):
		return "read_only"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission"
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return "missing_dir"
	}
	return "io"
}

// failed records a failed capture (c.mu held).
func (c *captures) failed(err error) {
	reason := captureReason(err)
	c.errs[reason]++
	if reason == "skipped" {
		return
	}
	c.delay = min(max(2*c.delay, captureBackoff), captureMaxBackoff)
	c.until = time.Now().Add(c.delay)
	if !c.failing {
		c.failing = true
		c.log.Warn("capture failed; captures pause, then retry with backoff until one succeeds (clrspy_capture_errors_total counts them)",
			"dir", c.cfg.Dir, "reason", reason, "error", fleet.PlainErr(err).Error(), "retry_in", c.delay.String())
		return
	}
	c.log.Debug("capture failed again", "dir", c.cfg.Dir, "reason", reason, "error", fleet.PlainErr(err).Error(), "retry_in", c.delay.String())
}

// succeeded ends a failure streak (c.mu held).
func (c *captures) succeeded() {
	if c.failing {
		c.log.Info("captures work again", "dir", c.cfg.Dir)
	}
	c.failing, c.delay, c.until = false, 0, time.Time{}
}

// errors is a copy of the failure counts.
func (c *captures) errors() map[string]uint64 {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]uint64, len(c.errs))
	maps.Copy(m, c.errs)
	return m
}

// captureName matches the captures' file names: PROCESS_PID_gcN_TIME.nettrace.
var captureName = regexp.MustCompile(`^.+_[0-9a-f-]+_gc[0-9]+_[0-9]{8}T[0-9]{6}Z(-[0-9]+)?\.nettrace$`)

// trigger is a target's pause trigger (nil without captures).
func (c *captures) trigger(hdr *nettrace.Header, t *target, log *slog.Logger) *flightrec.PauseTrigger {
	if c == nil {
		return nil
	}
	w := c.cfg.Window
	w.Rearm = true
	return w.Trigger(hdr, func(_ int, g *gcpause.GC) (io.WriteCloser, string, error) { return c.create(t, g) },
		func(msg string) {
			// A failure was counted and, first in its streak, warned
			// about by captures: its notice is detail.
			if strings.HasPrefix(msg, "saving ") {
				log.Debug(msg, "pid", t.PidLabel(), "process", t.Name())
				return
			}
			log.Info(msg, "pid", t.PidLabel(), "process", t.Name())
		}, nil)
}

// safeName keeps a process name usable in a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '_') {
			b[i] = '-'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte("p"), b...)
	}
	return string(b)
}

// create opens the capture of GC g of target t, after making room for it.
func (c *captures) create(t *target, g *gcpause.GC) (io.WriteCloser, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Now().Before(c.until) {
		c.failed(errBackoff)
		return nil, "", errBackoff
	}
	c.prune(c.cfg.MaxFiles-1, c.cfg.MaxBytes, "")
	base := fmt.Sprintf("%s_%s_gc%d_%s", safeName(t.Name()), t.PidLabel(), g.Number, time.Now().UTC().Format("20060102T150405Z"))
	name := filepath.Join(c.cfg.Dir, base+".nettrace")
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); os.IsNotExist(err) {
			break
		}
		name = filepath.Join(c.cfg.Dir, fmt.Sprintf("%s-%d.nettrace", base, i))
	}
	// As every trace clrspy writes (package outfile): a partial file
	// beside the final name, renamed into place once complete; the
	// target's data, for clrspy's user alone.
	f, err := outfile.Create(name, outfile.Options{Perm: 0o600})
	if err != nil {
		c.failed(err)
		return nil, name, fmt.Errorf("capture: %w", err)
	}
	return &captureFile{f: f, c: c}, name, nil
}

// prune removes the oldest captures until at most files remain and they
// hold at most bytes; keep is never removed.
func (c *captures) prune(files int, bytes int64, keep string) {
	ents, err := os.ReadDir(c.cfg.Dir)
	if err != nil {
		return
	}
	type capFile struct {
		path string
		mod  time.Time
		size int64
	}
	var fs []capFile
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() || !captureName.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		fs = append(fs, capFile{filepath.Join(c.cfg.Dir, e.Name()), info.ModTime(), info.Size()})
		total += info.Size()
	}
	sort.Slice(fs, func(i, j int) bool {
		if !fs[i].mod.Equal(fs[j].mod) {
			return fs[i].mod.Before(fs[j].mod)
		}
		return fs[i].path < fs[j].path
	})
	n := len(fs)
	for _, f := range fs {
		if n <= max(files, 0) && total <= bytes {
			break
		}
		if f.path == keep {
			continue
		}
		if os.Remove(f.path) == nil {
			total -= f.size
			n--
		}
	}
}

// captureFile is a capture being written, its failure counted once.
type captureFile struct {
	f      *outfile.File
	c      *captures
	failed bool
}

func (w *captureFile) Write(p []byte) (int, error) { return w.f.Write(p) }

// fail counts the capture's failure once.
func (w *captureFile) fail(err error) {
	if w.failed {
		return
	}
	w.failed = true
	w.c.mu.Lock()
	w.c.failed(err)
	w.c.mu.Unlock()
}

// Close commits the capture under its name, then keeps the directory
// within its byte cap (the new capture stays).
func (w *captureFile) Close() error {
	if err := w.f.Close(); err != nil {
		w.fail(err)
		return err
	}
	w.c.mu.Lock()
	w.c.succeeded()
	w.c.prune(w.c.cfg.MaxFiles, w.c.cfg.MaxBytes, w.f.Name())
	w.c.mu.Unlock()
	return nil
}

// Abort drops a capture whose write failed.
func (w *captureFile) Abort() error {
	err := w.f.Err()
	if err == nil {
		err = errors.New("write failed")
	}
	w.fail(err)
	return w.f.Abort()
}
