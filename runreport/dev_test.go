package runreport

import (
	"os"
	"testing"
)

func TestDevRender(t *testing.T) {
	dir := os.Getenv("RUNDIR")
	if dir == "" {
		t.Skip()
	}
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
}
