package hostcmd

import (
	"fmt"
	"strings"
	"unicode"
)

// ifNameMax is the longest interface name Linux accepts, in bytes
// (IFNAMSIZ less its terminating NUL).
const ifNameMax = 15

// checkIfName reports why name cannot be a Linux network interface name,
// or nil when it can. The rules are the kernel's (dev_valid_name): 1 to 15
// bytes, not "." or "..", and no '/', ':' or whitespace; chaos also
// refuses control characters, which no name `ip` prints for a real
// interface holds. Names come from the output of `ip route get` and
// `tc qdisc show` on a node's host and reach tc commands: a name that
// breaks a rule is refused before any command is built with it, and a
// name that keeps them is still shell-quoted (control.ShellQuote) where it
// is used, for the kernel allows quotes, '$' and ';'.
func checkIfName(name string) error {
	var why string
	switch {
	case name == "":
		why = "empty"
	case len(name) > ifNameMax:
		why = fmt.Sprintf("%d bytes, more than Linux's %d", len(name), ifNameMax)
	case name == "." || name == "..":
		why = "not a name Linux allows"
	case strings.ContainsAny(name, "/:"):
		why = "holds '/' or ':', which Linux refuses in interface names"
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		why = "holds whitespace or a control character"
	default:
		return nil
	}
	return fmt.Errorf("interface name %q: %s", name, why)
}
