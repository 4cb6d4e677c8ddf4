package shard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// The replica link handshake, before any vsr byte. The acceptor speaks
// first, so a stranger learns nothing but a random challenge:
//
//	acceptor → dialer  challenge (48 bytes)
//	 0      4    6    8          16                                  48
//	 +------+----+----+----------+-----------------------------------+
//	 |magic |ver |kind|cluster   |  challenge (32 random bytes)      |
//	 +------+----+----+----------+-----------------------------------+
//
//	dialer → acceptor  auth (88 bytes)
//	 0      4    6    8          16     20     24          56          88
//	 +------+----+----+----------+------+------+-----------+-----------+
//	 |magic |ver |kind|cluster   |repl. | 0    | nonce     | mac       |
//	 +------+----+----+----------+------+------+-----------+-----------+
//	 mac = HMAC-SHA256(secret, challenge ‖ cluster u64 ‖ replica u32)
//
//	acceptor → dialer  verdict (48 bytes), only when the auth is good
//	 0      4    6    8     12     16                                  48
//	 +------+----+----+-----+------+-----------------------------------+
//	 |magic |ver |kind|repl.| 0    | mac                               |
//	 +------+----+----+-----+------+-----------------------------------+
//	 mac = HMAC-SHA256(secret, nonce ‖ cluster u64 ‖ replica u32 ‖ challenge)
//
// All integers are little endian; magic is "WHRL", ver 1, kind 1 to 3. A
// refused dialer is closed without a verdict. The verdict proves to the
// dialer that it reached a holder of the secret (the dialer's nonce is
// fresh), with a MAC input of another length than the dialer's, so one
// can never stand for the other. After the verdict the link carries vsr
// messages, dialer to acceptor only.

const (
	handshakeMagic        = 0x4c_52_48_57 // "WHRL" little endian
	handshakeVersion      = 1
	handshakeKindAsk      = 1
	handshakeKindAuth     = 2
	handshakeKindVerdict  = 3
	handshakePrefixBytes  = 8
	handshakeNonceBytes   = 32
	handshakeMACBytes     = sha256.Size
	handshakeAskBytes     = 16 + handshakeNonceBytes
	handshakeAuthBytes    = 24 + handshakeNonceBytes + handshakeMACBytes
	handshakeVerdictBytes = 16 + handshakeMACBytes
)

// Reasons a handshake fails; the acceptor counts and logs them, and the
// dialer backs off.
var (
	ErrHandshakeMagic   = errors.New("shard: cluster handshake: not a replica link")
	ErrHandshakeVersion = errors.New("shard: cluster handshake: unsupported version")
	ErrHandshakeCluster = errors.New("shard: cluster handshake: another cluster")
	ErrHandshakeReplica = errors.New("shard: cluster handshake: replica id out of range")
	ErrHandshakeMAC     = errors.New("shard: cluster handshake: wrong shared secret")
	ErrHandshakeTimeout = errors.New("shard: cluster handshake: timed out")
	ErrHandshakeBusy    = errors.New("shard: cluster handshake: too many links authenticating")
)

// handshakePrefix checks the 8-byte prefix every handshake frame opens
// with and returns the frame's whole size.
func handshakePrefix(head []byte, kind uint16) (int, error) {
	if len(head) < handshakePrefixBytes {
		return 0, nil
	}
	if binary.LittleEndian.Uint32(head) != handshakeMagic {
		return 0, ErrHandshakeMagic
	}
	if binary.LittleEndian.Uint16(head[4:]) != handshakeVersion {
		return 0, ErrHandshakeVersion
	}
	if got := binary.LittleEndian.Uint16(head[6:]); got != kind {
		return 0, fmt.Errorf("%w: frame kind %d, want %d", ErrHandshakeMagic, got, kind)
	}
	switch kind {
	case handshakeKindAsk:
		return handshakeAskBytes, nil
	case handshakeKindAuth:
		return handshakeAuthBytes, nil
	}
	return handshakeVerdictBytes, nil
}

func putHandshakePrefix(dst []byte, kind uint16) {
	binary.LittleEndian.PutUint32(dst, handshakeMagic)
	binary.LittleEndian.PutUint16(dst[4:], handshakeVersion)
	binary.LittleEndian.PutUint16(dst[6:], kind)
}

// encodeAsk writes the acceptor's challenge frame into dst.
func encodeAsk(dst []byte, cluster uint64, challenge *[handshakeNonceBytes]byte) {
	putHandshakePrefix(dst, handshakeKindAsk)
	binary.LittleEndian.PutUint64(dst[8:], cluster)
	copy(dst[16:handshakeAskBytes], challenge[:])
}

// decodeAsk reads a challenge frame: the acceptor's cluster and challenge.
func decodeAsk(frame []byte) (cluster uint64, challenge [handshakeNonceBytes]byte, err error) {
	size, err := handshakePrefix(frame, handshakeKindAsk)
	if err != nil {
		return 0, challenge, err
	}
	if size == 0 || size != len(frame) {
		return 0, challenge, ErrHandshakeMagic
	}
	copy(challenge[:], frame[16:])
	return binary.LittleEndian.Uint64(frame[8:]), challenge, nil
}

// handshakeAuth is what a dialer proves: who it is, and a fresh nonce the
// acceptor's verdict must cover.
type handshakeAuth struct {
	cluster uint64
	replica uint32
	nonce   [handshakeNonceBytes]byte
	mac     [handshakeMACBytes]byte
}

func encodeAuth(dst []byte, auth *handshakeAuth) {
	putHandshakePrefix(dst, handshakeKindAuth)
	binary.LittleEndian.PutUint64(dst[8:], auth.cluster)
	binary.LittleEndian.PutUint32(dst[16:], auth.replica)
	binary.LittleEndian.PutUint32(dst[20:], 0)
	copy(dst[24:], auth.nonce[:])
	copy(dst[24+handshakeNonceBytes:handshakeAuthBytes], auth.mac[:])
}

func decodeAuth(frame []byte, auth *handshakeAuth) error {
	size, err := handshakePrefix(frame, handshakeKindAuth)
	if err != nil {
		return err
	}
	if size == 0 || size != len(frame) || binary.LittleEndian.Uint32(frame[20:]) != 0 {
		return ErrHandshakeMagic
	}
	auth.cluster = binary.LittleEndian.Uint64(frame[8:])
	auth.replica = binary.LittleEndian.Uint32(frame[16:])
	copy(auth.nonce[:], frame[24:])
	copy(auth.mac[:], frame[24+handshakeNonceBytes:])
	return nil
}

func encodeVerdict(dst []byte, replica uint32, mac *[handshakeMACBytes]byte) {
	putHandshakePrefix(dst, handshakeKindVerdict)
	binary.LittleEndian.PutUint32(dst[8:], replica)
	binary.LittleEndian.PutUint32(dst[12:], 0)
	copy(dst[16:handshakeVerdictBytes], mac[:])
}

func decodeVerdict(frame []byte) (replica uint32, mac [handshakeMACBytes]byte, err error) {
	size, err := handshakePrefix(frame, handshakeKindVerdict)
	if err != nil {
		return 0, mac, err
	}
	if size == 0 || size != len(frame) || binary.LittleEndian.Uint32(frame[12:]) != 0 {
		return 0, mac, ErrHandshakeMagic
	}
	copy(mac[:], frame[16:])
	return binary.LittleEndian.Uint32(frame[8:]), mac, nil
}

// dialerMAC is what a dialer presents: HMAC(secret, challenge ‖ cluster ‖
// replica).
func dialerMAC(secret []byte, challenge *[handshakeNonceBytes]byte, cluster uint64, replica uint32) [handshakeMACBytes]byte {
	var input [handshakeNonceBytes + 12]byte
	copy(input[:], challenge[:])
	binary.LittleEndian.PutUint64(input[handshakeNonceBytes:], cluster)
	binary.LittleEndian.PutUint32(input[handshakeNonceBytes+8:], replica)
	return macOf(secret, input[:])
}

// acceptorMAC is what an acceptor's verdict carries: HMAC(secret, nonce ‖
// cluster ‖ replica ‖ challenge).
func acceptorMAC(secret []byte, nonce *[handshakeNonceBytes]byte, cluster uint64, replica uint32,
	challenge *[handshakeNonceBytes]byte) [handshakeMACBytes]byte {
	var input [2*handshakeNonceBytes + 12]byte
	copy(input[:], nonce[:])
	binary.LittleEndian.PutUint64(input[handshakeNonceBytes:], cluster)
	binary.LittleEndian.PutUint32(input[handshakeNonceBytes+8:], replica)
	copy(input[handshakeNonceBytes+12:], challenge[:])
	return macOf(secret, input[:])
}

func macOf(secret, input []byte) [handshakeMACBytes]byte {
	mac := hmac.New(sha256.New, secret)
	_, _ = mac.Write(input) // a hash never fails to write
	var sum [handshakeMACBytes]byte
	mac.Sum(sum[:0])
	return sum
}
