package testrun

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"chaos/workload"
)

// progress shows the load phase: elapsed and remaining time, ops/s, the
// ok/fail/info counts, the active faults and the leader. On a terminal it
// is a live bar; otherwise (CI logs) a plain line every plainEvery.
type progress struct {
	w        io.Writer
	bar      *progressbar.ProgressBar
	limit    time.Duration
	lastLine time.Time
}

const plainEvery = 5 * time.Second

func newProgress(w io.Writer, terminal bool, limit time.Duration) *progress {
	p := &progress{w: w, limit: limit}
	if terminal {
		p.bar = progressbar.NewOptions64(int64(limit.Seconds()),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(20),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	return p
}

// line is the status shown for one moment of the load phase.
func line(s workload.Stats, limit time.Duration, faults []string, leader string) string {
	remaining := max(limit-s.Elapsed, 0)
	active := "none"
	if len(faults) > 0 {
		active = strings.Join(faults, ",")
	}
	return fmt.Sprintf("%4.0fs elapsed, %4.0fs left | %6.0f ops/s | ok %d fail %d info %d | faults: %s | leader: %s",
		s.Elapsed.Seconds(), remaining.Seconds(), s.OpsPerSecond(), s.OK, s.Fail, s.Info, active, leader)
}

func (p *progress) update(s workload.Stats, faults []string, leader string) {
	text := line(s, p.limit, faults, leader)
	if p.bar != nil {
		p.bar.Describe(text)
		_ = p.bar.Set64(int64(s.Elapsed.Seconds()))
		return
	}
	if time.Since(p.lastLine) >= plainEvery {
		p.lastLine = time.Now()
		fmt.Fprintln(p.w, text)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
