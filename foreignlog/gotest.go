package foreignlog

import (
	"regexp"
	"strings"
)

// goTestNote matches the lines `go test` itself prints that are worth
// keeping: verdicts and t.Log/t.Fatal messages.
var goTestNote = regexp.MustCompile(`^(--- (?:PASS|FAIL|SKIP): \S+.*|\s*\S+\.go:\d+: .+)$`)

// goTestOther matches the rest of `go test`'s framing.
var goTestOther = regexp.MustCompile(`^(={2,3} (?:RUN|PAUSE|CONT|NAME) |PASS$|FAIL$|FAIL\s|ok\s|exit status \d+$|Running test|end of test)`)

// goTestLine reports whether line is `go test` framing, and returns its note
// when it is a verdict or a test message.
func goTestLine(line string) (note string, ok bool) {
	if goTestNote.MatchString(line) {
		return strings.TrimSpace(line), true
	}
	return "", goTestOther.MatchString(line)
}
