package described

import "fmt"

// Error is what is wrong with a description file, in one line:
// "FILE:LINE: what is wrong; how to fix it".
type Error struct {
	File string
	// Line is 1-based; 0 when the error is about the file as a whole.
	Line int
	// Msg says what is wrong and how to fix it.
	Msg string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}
