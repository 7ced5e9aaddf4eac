package hostcmd

import (
	"fmt"
	"time"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// The commands of the system-clock strategy (the host's own clock set,
// time synchronization stopped while it is) and of fake clocks' control
// files. marker is the host file that lists the time services chaos
// stopped: its presence means chaos changed the host's clock.

// NTPServices are the time services DisableNTPCmd may stop (timedatectl
// stands for systemd-timesyncd through `timedatectl set-ntp`); a marker
// line naming anything else is not chaos's.
var NTPServices = []string{"timedatectl", "chrony", "chronyd", "ntp", "ntpd", "ntpsec", "openntpd"}

// DisableNTPCmd stops time synchronization. The first call on a host
// notes in marker what was running (timedatectl's NTP, chrony, ntpd);
// every call stops what marker lists.
func DisableNTPCmd(marker string) string {
	m := control.ShellQuote(marker)
	return fmt.Sprintf(`m=%s; if [ ! -f "$m" ]; then mkdir -p "$(dirname "$m")" && : > "$m.tmp" || exit 1; `+
		`if command -v timedatectl >/dev/null 2>&1 && [ "$(timedatectl show -p NTP --value 2>/dev/null)" = yes ]; then echo timedatectl >> "$m.tmp"; fi; `+
		`for s in chrony chronyd ntp ntpd ntpsec openntpd; do if systemctl is-active --quiet "$s" 2>/dev/null; then echo "$s" >> "$m.tmp"; fi; done; `+
		`mv "$m.tmp" "$m" || exit 1; fi; `+
		`while read -r s; do case "$s" in timedatectl) timedatectl set-ntp false ;; *) systemctl stop "$s" ;; esac || exit 1; done < "$m"`, m)
}

// ResetClockCmd sets the clock to now (the controller's) and starts what
// DisableNTPCmd stopped, on a host where marker says chaos changed the
// clock; elsewhere it does nothing.
func ResetClockCmd(marker string, now time.Time) string {
	m := control.ShellQuote(marker)
	return fmt.Sprintf(`m=%s; if [ -f "$m" ]; then %s || exit 1; `+
		`while read -r s; do case "$s" in timedatectl) timedatectl set-ntp true ;; *) systemctl start "$s" ;; esac || exit 1; done < "$m"; `+
		`rm -f "$m"; fi`, m, SetDateCmd(now))
}

// MarkerCmd prints "marker" and marker's lines where marker exists;
// nothing elsewhere.
func MarkerCmd(marker string) string {
	return fmt.Sprintf(`m=%s; if [ -f "$m" ]; then echo marker; cat "$m"; fi`, control.ShellQuote(marker))
}

// SetDateCmd sets the system clock to t.
func SetDateCmd(t time.Time) string {
	return fmt.Sprintf("date -s @%d.%09d >/dev/null", t.Unix(), t.Nanosecond())
}

// FakeResetCmd puts the true clock in the fake clock control file name,
// keeping its start line, where the file exists; elsewhere it does
// nothing.
func FakeResetCmd(name string) string {
	q, tmp := control.ShellQuote(name), control.ShellQuote(name+".chaos-tmp")
	return fmt.Sprintf(`if [ -f %s ]; then { grep '^# started ' %s; printf '%%s\n' %s; } > %s && mv %s %s; fi`,
		q, q, control.ShellQuote(fakeclock.Spec{Rate: 1}.String()), tmp, tmp, q)
}

// FakeClockReadCmd prints the host's clock as seconds and a fraction on a
// line of its own, then the fake clock control file name, where it
// exists. The clock is date +%s.%N's; where date has no %N (busybox's,
// in minimal containers) it is adjtimex's, to the microsecond, else date
// +%s's, to the second.
func FakeClockReadCmd(name string) string {
	q := control.ShellQuote(name)
	return readClockCmd + fmt.Sprintf(` && if [ -f %s ]; then cat %s; fi`, q, q)
}

// readClockCmd prints the host's clock as seconds and a fraction (see
// FakeClockReadCmd).
const readClockCmd = `t=$(date +%s.%N) && case $t in *[!0-9.]*|*.) ` +
	`t=$(adjtimex 2>/dev/null | awk '/tv_sec/ {s=$2} /tv_usec/ {u=$2} END {if (s) printf "%d.%06d", s, u}'); ` +
	`[ -n "$t" ] || t=$(date +%s).0;; esac && echo "$t"`

// CatIfExistsCmd prints the file name, where it exists; nothing elsewhere.
func CatIfExistsCmd(name string) string {
	q := control.ShellQuote(name)
	return fmt.Sprintf("if [ -f %s ]; then cat %s; fi", q, q)
}

// ReplaceFileCmd replaces the file name with content, whole: written
// beside it, then renamed over it, so that a reader sees the old content
// or the new, never a part.
func ReplaceFileCmd(name string, content []byte) string {
	q, tmp := control.ShellQuote(name), control.ShellQuote(name+".chaos-tmp")
	return fmt.Sprintf("printf '%%s' %s > %s && mv %s %s", control.ShellQuote(string(content)), tmp, tmp, q)
}
