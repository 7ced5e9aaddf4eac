package main

import "testing"

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"version"}, exitOK},
		{[]string{"no-such-command"}, exitUsage},
		{[]string{"version", "--no-such-flag"}, exitUsage},
		{[]string{"version", "extra"}, exitUsage},
	}
	for _, c := range cases {
		if got := run(c.args); got != c.want {
			t.Errorf("chaos %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
