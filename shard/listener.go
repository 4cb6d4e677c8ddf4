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
	family, sockaddr := unix.AF_INET6, unix.Sockaddr(nil)
	if ip4 := resolved.IP.To4(); ip4 != nil || resolved.IP == nil {
		family = unix.AF_INET
		inet4 := &unix.SockaddrInet4{Port: resolved.Port}
		copy(inet4.Addr[:], ip4)
		sockaddr = inet4
	} else {
		inet6 := &unix.SockaddrInet6{Port: resolved.Port}
		copy(inet6.Addr[:], resolved.IP.To16())
		sockaddr = inet6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
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
