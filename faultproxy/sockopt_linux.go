package faultproxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// soOriginalDst is SO_ORIGINAL_DST of linux/netfilter_ipv4.h, which
// golang.org/x/sys/unix does not define: the destination a connection had
// before netfilter's NAT (REDIRECT) rewrote it.
const soOriginalDst = 80

// OriginalDst returns where c was going before an iptables REDIRECT sent
// it to this process, as conntrack remembers it. For a connection no rule
// rewrote it is c's own local address.
func OriginalDst(c *net.TCPConn) (netip.AddrPort, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var mreq *unix.IPv6Mreq
	var serr error
	// The option fills a struct sockaddr_in (16 bytes), the size of an
	// IPv6Mreq: family (2 bytes), port (2, big-endian), IPv4 address (4).
	if err := raw.Control(func(fd uintptr) {
		mreq, serr = unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, soOriginalDst)
	}); err != nil {
		return netip.AddrPort{}, err
	}
	if serr != nil {
		return netip.AddrPort{}, fmt.Errorf("getsockopt SO_ORIGINAL_DST: %w", serr)
	}
	sa := mreq.Multiaddr
	if family := binary.NativeEndian.Uint16(sa[0:2]); family != unix.AF_INET {
		return netip.AddrPort{}, fmt.Errorf("getsockopt SO_ORIGINAL_DST: address family %d, want AF_INET", family)
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(sa[4:8])), binary.BigEndian.Uint16(sa[2:4])), nil
}

// DialMarked opens a TCP connection from the address from (any port) to
// to, whose packets carry the socket mark mark (SO_MARK, which needs
// CAP_NET_ADMIN).
func DialMarked(ctx context.Context, mark int, from netip.Addr, to netip.AddrPort) (*net.TCPConn, error) {
	d := net.Dialer{
		LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0)),
		Control: func(_, _ string, raw syscall.RawConn) error {
			var serr error
			if err := raw.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, mark)
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("setsockopt SO_MARK: %w", serr)
			}
			return nil
		},
	}
	c, err := d.DialContext(ctx, "tcp4", to.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.TCPConn), nil
}
