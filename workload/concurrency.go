package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxConcurrency bounds how many workers a test may run. Each worker holds
// a goroutine, a connection and a range of process numbers, so a typo such
// as "2000n" is an error rather than an exhausted machine.
const MaxConcurrency = 10000

// ParseConcurrency parses the --concurrency flag: a number of workers
// ("10"), or a multiple of the node count ("2n" is twice nodes). The result
// is between 1 and MaxConcurrency. Errors name the flag and say what to
// write instead.
func ParseConcurrency(s string, nodes int) (int, error) {
	digits, perNode := strings.CutSuffix(strings.TrimSpace(s), "n")
	factor, err := strconv.Atoi(digits)
	if err != nil {
		return 0, fmt.Errorf("--concurrency %q: want a number of clients such as 10, or a multiple of the node count such as 2n", s)
	}
	if factor < 1 {
		return 0, fmt.Errorf("--concurrency %q: must be at least 1 (such as 10, or 2n for twice the node count)", s)
	}
	if factor > MaxConcurrency {
		return 0, fmt.Errorf("--concurrency %q: above the limit of %d clients; use a smaller number", s, MaxConcurrency)
	}
	if !perNode {
		return factor, nil
	}
	if nodes < 1 {
		return 0, fmt.Errorf("--concurrency %q: there are %d nodes to multiply; give a plain number such as 10", s, nodes)
	}
	if nodes <= MaxConcurrency/factor { // factor*nodes <= MaxConcurrency, without overflow
		return factor * nodes, nil
	}
	return 0, fmt.Errorf("--concurrency %q: %d x %d nodes is above the limit of %d clients; use a smaller factor", s, factor, nodes, MaxConcurrency)
}
