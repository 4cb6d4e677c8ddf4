package shard

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// listenTCP opens the one listening socket, nonblocking, for shard 0 to
// accept on (doc.go says why one listener rather than one per shard).
func listenTCP(address string) (int, net.Addr, error) {
	resolved, err := net.ResolveTCPAddr("tcp", address)
	if err != nil {
		return -1, nil, fmt.Errorf("shard: listen address %q: %w", address, err)
	}
	fd, sockaddr, err := listenSocket(resolved)
	if err != nil {
		return -1, nil, fmt.Errorf("shard: socket: %w", err)
	}
	if err := bindAndListen(fd, sockaddr); err != nil {
		closeListener(fd)
		return -1, nil, fmt.Errorf("shard: listen on %s: %w", address, err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		closeListener(fd)
		return -1, nil, fmt.Errorf("shard: getsockname: %w", err)
	}
	return fd, tcpAddr(bound), nil
}

// listenSocket makes the listening socket for address: IPv4 for an IPv4
// address, IPv6 for an IPv6 one, and for an unspecified host (":port") a
// dual-stack IPv6 socket like Go's net package, or IPv4 where the host has
// no IPv6.
func listenSocket(address *net.TCPAddr) (int, unix.Sockaddr, error) {
	const flags = unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	inet4 := &unix.SockaddrInet4{Port: address.Port}
	if address.IP == nil || address.IP.IsUnspecified() && address.IP.To4() == nil {
		if fd, err := unix.Socket(unix.AF_INET6, flags, unix.IPPROTO_TCP); err == nil {
			if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
				closeListener(fd)
				return -1, nil, err
			}
			return fd, &unix.SockaddrInet6{Port: address.Port}, nil
		}
	} else if ip4 := address.IP.To4(); ip4 != nil {
		copy(inet4.Addr[:], ip4)
	} else {
		inet6 := &unix.SockaddrInet6{Port: address.Port}
		copy(inet6.Addr[:], address.IP.To16())
		fd, err := unix.Socket(unix.AF_INET6, flags, unix.IPPROTO_TCP)
		return fd, inet6, err
	}
	fd, err := unix.Socket(unix.AF_INET, flags, unix.IPPROTO_TCP)
	return fd, inet4, err
}

func bindAndListen(fd int, sockaddr unix.Sockaddr) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		return err
	}
	if err := unix.Bind(fd, sockaddr); err != nil {
		return err
	}
	return unix.Listen(fd, acceptBacklog)
}

func tcpAddr(sockaddr unix.Sockaddr) net.Addr {
	switch address := sockaddr.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(address.Addr[:]).To16(), Port: address.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(address.Addr[:]), Port: address.Port}
	}
	return nil
}

func closeListener(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd) // nothing was served on it yet
	}
}
