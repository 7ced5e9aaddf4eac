//go:build !linux

package testbed

import (
	"context"
	"errors"
	"time"
)

// errUnsupported is what every testbed operation fails with off Linux.
var errUnsupported = errors.New("chaos testbed needs Linux (network, mount, PID and UTS namespaces)")

// Platform reports whether this machine can run a testbed: off Linux it
// cannot.
func Platform() error { return errUnsupported }

// unsupported is the System of a machine without Linux namespaces: every
// call fails with errUnsupported.
type unsupported struct{}

// NewSystem returns the System of this machine, which cannot run a testbed.
func NewSystem() System { return unsupported{} }

func (unsupported) Run(context.Context, ...string) (string, error) { return "", errUnsupported }
func (unsupported) Start(Launch) (Daemon, error)                   { return Daemon{}, errUnsupported }
func (unsupported) LookPath(string) (string, error)                { return "", errUnsupported }
func (unsupported) ReadFile(string) ([]byte, error)                { return nil, errUnsupported }
func (unsupported) Pids() ([]int, error)                           { return nil, errUnsupported }
func (unsupported) Kill(int) error                                 { return errUnsupported }
func (unsupported) Mkdir(string) error                             { return errUnsupported }
func (unsupported) Remove(string) error                            { return errUnsupported }
func (unsupported) SSHBanner(context.Context, string, time.Duration) (string, error) {
	return "", errUnsupported
}
