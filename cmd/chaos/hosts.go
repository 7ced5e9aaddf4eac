package main

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
)

// readNodes returns the hosts of --nodes or --nodes-file (one per line;
// blank lines and # comments are skipped).
func readNodes(list, file string) ([]string, error) {
	if list != "" && file != "" {
		return nil, usageErrorf("give --nodes or --nodes-file, not both")
	}
	var nodes []string
	if list != "" {
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == 0 {
			return nil, usageErrorf("--nodes %q names no host", list)
		}
		return nodes, nil
	}
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, usageErrorf("--nodes-file: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			nodes = append(nodes, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usageErrorf("--nodes-file %s: %v", file, err)
	}
	if len(nodes) == 0 {
		return nil, usageErrorf("--nodes-file %s lists no host", file)
	}
	return nodes, nil
}

// noDuplicateHosts refuses a host given twice (with the default SSH port
// made explicit, so "a" and "a:22" are the same).
func noDuplicateHosts(hosts []string, port int) error {
	seen := map[string]bool{}
	for _, h := range hosts {
		key := h
		if _, _, err := net.SplitHostPort(h); err != nil {
			key = net.JoinHostPort(strings.Trim(h, "[]"), strconv.Itoa(port))
		}
		if seen[key] {
			return usageErrorf("host %s appears twice in the node list: give each host once", h)
		}
		seen[key] = true
	}
	return nil
}
