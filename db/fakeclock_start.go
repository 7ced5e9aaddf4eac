package db

import (
	"fmt"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// What a node started under a fake clock needs: its control file made
// ready (Prepare), and the environment that makes its processes read it
// (Env).

// fakeClockPrepare is the shell command (POSIX sh, awk and GNU date) that readies
// the control file file for a node about to start under mechanism; it
// runs on the node's host, in a subshell of its own, right before the
// node's first process.
//
// For chaos-node it creates the file with the true clock when there is
// none, and leaves a file that exists alone: the node anchors its spec
// when it starts. For libfaketime it records the start (S, see the
// package doc) and, when the file exists already (a node restarted while
// its clock is off), changes the offset so that the restarted node's
// clock goes on where the last one's was: S + offset + rate*(t - S) is
// the same clock for the old S and the new.
func fakeClockPrepare(file, mechanism string) string {
	q := control.ShellQuote(file)
	if mechanism != fakeclock.Libfaketime {
		return fmt.Sprintf("[ -f %s ] || printf '+0 x1\\n' > %s", q, q)
	}
	// awk reads the old S, offset and rate (the first line that is no
	// comment is the spec, as for libfaketime) and prints the new file.
	script := `BEGIN { o = 0; r = 1; s = now; seen = 0 }
/^# started / { s = $3; next }
seen || length($0) == 0 || /^[#; ]/ { next }
{ seen = 1; o = $1 + 0; if (NF > 1 && substr($2, 1, 1) == "x") r = substr($2, 2) + 0 }
END { printf "# started %s\n%+.6f x%s\n", now, o + (s - now) * (1 - r), r }`
	return fmt.Sprintf(`f=%s; t=$(date +%%s.%%N) && case $t in *N) false;; esac || { echo "fake clock: GNU date (date +%%s.%%N) is missing" >&2; exit 1; }; `+
		`if [ -f "$f" ]; then LC_ALL=C awk -v now="$t" %s "$f" > "$f.tmp" && mv "$f.tmp" "$f"; `+
		`else printf '# started %%s\n+0 x1\n' "$t" > "$f"; fi`, q, control.ShellQuote(script))
}

// fakeClockEnv is the environment, NAME=VALUE each, that makes a node's processes
// read file: for libfaketime, lib preloaded (the library's path on the
// host) and the file read on every call (FAKETIME_NO_CACHE: with a cache
// libfaketime reads it at most once a second, or every 10 s by default);
// for chaos-node, the file's name alone.
func fakeClockEnv(file, mechanism, lib string) []string {
	if mechanism != fakeclock.Libfaketime {
		return []string{fakeclock.EnvFile + "=" + file}
	}
	return []string{"LD_PRELOAD=" + lib, fakeclock.EnvFile + "=" + file, "FAKETIME_NO_CACHE=1"}
}

// findLibfaketimeCmd prints where libfaketime is on the host, the first
// that exists of where Debian's package puts it (the * is the multiarch
// triplet: x86_64-linux-gnu, aarch64-linux-gnu, ...) and where a build
// installed by hand goes, and fails when it is nowhere.
const findLibfaketimeCmd = `for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1; ` +
	`do if [ -f "$f" ]; then echo "$f"; exit 0; fi; done; exit 1`

// libfaketime shares its start (S) among a node's processes through POSIX
// shared memory that the first of them creates, /dev/shm/faketime_shm_PID
// and /dev/shm/sem.faketime_sem_PID, PID being that first process's. Only
// that process removes them, when it exits normally; a node's first
// process (setsid, which becomes the start command's shell) never does,
// so every start leaves a pair behind. chaos lists the pids of the
// node's first processes beside its control file, and the next start of
// the node removes the pairs of those that are gone.

// libfaketimeShmList is the list of a node's first processes' pids.
func libfaketimeShmList(file string) string { return file + ".pids" }

// libfaketimeShmCleanup removes the shared memory of the listed
// processes that no longer run on the host (gone, or zombies), and keeps
// the others listed.
func libfaketimeShmCleanup(file string) string {
	l := control.ShellQuote(libfaketimeShmList(file))
	return fmt.Sprintf(`l=%s; [ -f "$l" ] || exit 0; while read -r q; do case $q in ''|*[!0-9]*) continue;; esac; `+
		`s=$(sed 's/.*) //' "/proc/$q/stat" 2>/dev/null); case $s in ''|Z*) rm -f "/dev/shm/faketime_shm_$q" "/dev/shm/sem.faketime_sem_$q";; *) echo "$q";; esac; `+
		`done < "$l" > "$l.tmp" && mv "$l.tmp" "$l"`, l)
}
