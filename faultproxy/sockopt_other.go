//go:build !linux

package faultproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
)

// errNotLinux is why the proxy cannot run here: REDIRECT, SO_ORIGINAL_DST
// and SO_MARK are Linux's.
var errNotLinux = errors.New("the fault proxy runs on Linux only (iptables REDIRECT, SO_ORIGINAL_DST, SO_MARK)")

// OriginalDst fails: see errNotLinux.
func OriginalDst(*net.TCPConn) (netip.AddrPort, error) { return netip.AddrPort{}, errNotLinux }

// DialMarked fails: see errNotLinux.
func DialMarked(context.Context, int, netip.Addr, netip.AddrPort) (*net.TCPConn, error) {
	return nil, errNotLinux
}
