package shard

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whippetio/whippet/vsr"
)

// TestClusterNetLimits asserts the relationships between the transport's
// limits, each with the reason it must hold.
func TestClusterNetLimits(t *testing.T) {
	check := func(ok bool, why string) {
		t.Helper()
		if !ok {
			t.Error(why)
		}
	}
	check(clusterPeersMax <= 256, "a replica id fits the vsr header's one byte")
	check(clusterMessageBytesMax <= peerFrameBytesMax, "a link's largest message is a frame a peer connection accepts")
	check(peerFrameBytesMax >= frameBytesMax+64<<10, "a Prepare holding the largest client frame's batch fits a peer frame")
	check(clusterMessageBytesMax > vsrHeaderBytes, "a message holds its header and a body")
	check(clusterMessageBytesMax >= vsr.MessageBytesMax, "every message vsr sends crosses a link")
	check(clusterQueueBytesMax >= 2*clusterMessageBytesMax, "two largest messages queue, so a large Prepare does not starve heartbeats")
	check(clusterQueueMessagesMax >= 2*vsrMessagesPerStepMax, "a peer's queue takes two bursts of one vsr step")
	check(clusterBatchBytesMax <= clusterConnBytesMax, "one batch fits what a connection may hold unsent")
	check(clusterConnBuffersMax <= pushQueueLenMax, "the buffers handed to a connection fit its push queue")
	check(clusterConnBuffersMax >= 2, "a link sends one buffer while the next waits")
	check(handshakeAuthBytes <= frameHeadBytesMax, "the acceptor sizes the auth frame from its head")
	check(vsrSizeOffset+4 <= frameHeadBytesMax, "a vsr message's size is within the head a connection gathers")
	check(clusterDialBackoffMin > 0 && clusterDialBackoffMin < clusterDialBackoffMax, "backoff grows from a positive floor")
	check(clusterDialBackoffMax <= clusterHandshakeTimeout, "a down peer is dialed again within a handshake's time")
	check(clusterSecretBytesMin >= sha256.Size/2, "a shared secret has at least 128 bits")
	check(netBufClass(clusterMessageBytesMax) < netBufClassCount, "the largest message has a buffer class")
	check(poolClassBytesMin<<(netBufClassCount-1) >= clusterMessageBytesMax, "the largest class holds the largest message")
	// vsr's own limits, through its exported behaviour: its header is the
	// transport's, and it refuses what a link could not carry.
	var header vsr.Header
	message := testMessage(1, 1, vsrHeaderBytes)
	check(vsr.DecodeMessage(message, &header) == nil && int(header.Size) == vsrHeaderBytes, "an empty vsr message is one header")
	check(errors.Is(vsr.DecodeMessage(message[:vsrHeaderBytes-1], &header), vsr.ErrShort), "vsr's header is vsrHeaderBytes")
	check(headerSizeAt(message) == vsrHeaderBytes, "vsr keeps the message size at vsrSizeOffset")
	check(errors.Is(vsr.DecodeMessage(make([]byte, clusterMessageBytesMax+1), &header), vsr.ErrTooLarge),
		"vsr's messageBytesMax is at most clusterMessageBytesMax: every message vsr sends crosses a link")
}

// vsrMessagesPerStepMax mirrors vsr's bound on the messages one Step or
// Tick emits (repair burst, a broadcast, a pipeline's replies).
const vsrMessagesPerStepMax = 64 + 2*16 + 32*2

func headerSizeAt(message []byte) int {
	return int(message[vsrSizeOffset]) | int(message[vsrSizeOffset+1])<<8 |
		int(message[vsrSizeOffset+2])<<16 | int(message[vsrSizeOffset+3])<<24
}

// TestClusterHandshakeFrames pins the handshake's byte layout (drawn in
// cluster_net_handshake.go) with hand-written frames, and checks that
// decoding refuses a wrong magic, version, kind, length or reserved byte.
func TestClusterHandshakeFrames(t *testing.T) {
	var nonce [handshakeNonceBytes]byte
	for i := range nonce {
		nonce[i] = byte(i)
	}
	ask := make([]byte, handshakeAskBytes)
	encodeAsk(ask, 0x1122334455667788, &nonce)
	wantAsk := "5748524c" + "0100" + "0100" + "8877665544332211" + hex.EncodeToString(nonce[:])
	if got := hex.EncodeToString(ask); got != wantAsk {
		t.Fatalf("ask %s, want %s", got, wantAsk)
	}
	cluster, challenge, err := decodeAsk(ask)
	if err != nil || cluster != 0x1122334455667788 || challenge != nonce {
		t.Fatalf("decodeAsk: %#x %v", cluster, err)
	}
	auth := handshakeAuth{cluster: 7, replica: 2, nonce: nonce}
	auth.mac[0], auth.mac[31] = 0xaa, 0xbb
	frame := make([]byte, handshakeAuthBytes)
	encodeAuth(frame, &auth)
	wantAuth := "5748524c" + "0100" + "0200" + "0700000000000000" + "02000000" + "00000000" +
		hex.EncodeToString(nonce[:]) + "aa" + hex.EncodeToString(make([]byte, 30)) + "bb"
	if got := hex.EncodeToString(frame); got != wantAuth {
		t.Fatalf("auth %s, want %s", got, wantAuth)
	}
	var decoded handshakeAuth
	if err := decodeAuth(frame, &decoded); err != nil || decoded != auth {
		t.Fatalf("decodeAuth: %+v %v", decoded, err)
	}
	for _, c := range []struct {
		name   string
		offset int
		want   error
	}{
		{"magic", 0, ErrHandshakeMagic},
		{"version", 4, ErrHandshakeVersion},
		{"kind", 6, ErrHandshakeMagic},
		{"reserved", 20, ErrHandshakeMagic},
	} {
		bad := bytes.Clone(frame)
		bad[c.offset] ^= 0x40
		if err := decodeAuth(bad, &decoded); !errors.Is(err, c.want) {
			t.Errorf("%s flipped: %v, want %v", c.name, err, c.want)
		}
	}
	if err := decodeAuth(frame[:handshakeAuthBytes-1], &decoded); err == nil {
		t.Error("a short auth frame decoded")
	}
	if size, err := handshakePrefix(frame[:handshakePrefixBytes-1], handshakeKindAuth); size != 0 || err != nil {
		t.Errorf("a partial prefix: %d %v, want to wait for more", size, err)
	}
}

// TestClusterHandshakeMACs checks both MACs against HMAC-SHA256 computed
// directly over the inputs the layout names, and that each depends on
// every input.
func TestClusterHandshakeMACs(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	var challenge, nonce [handshakeNonceBytes]byte
	challenge[0], nonce[0] = 1, 2
	input := append(bytes.Clone(challenge[:]), 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 3, 0, 0, 0)
	direct := hmac.New(sha256.New, secret)
	direct.Write(input)
	if got := dialerMAC(secret, &challenge, 0x1122334455667788, 3); !bytes.Equal(got[:], direct.Sum(nil)) {
		t.Fatal("dialerMAC is not HMAC-SHA256(secret, challenge ‖ cluster ‖ replica)")
	}
	input = append(bytes.Clone(nonce[:]), 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 3, 0, 0, 0)
	input = append(input, challenge[:]...)
	direct = hmac.New(sha256.New, secret)
	direct.Write(input)
	if got := acceptorMAC(secret, &nonce, 0x1122334455667788, 3, &challenge); !bytes.Equal(got[:], direct.Sum(nil)) {
		t.Fatal("acceptorMAC is not HMAC-SHA256(secret, nonce ‖ cluster ‖ replica ‖ challenge)")
	}
	base := dialerMAC(secret, &challenge, 9, 1)
	other := challenge
	other[31] ^= 1
	for name, mac := range map[string][handshakeMACBytes]byte{
		"secret":    dialerMAC(append(bytes.Clone(secret), 'x'), &challenge, 9, 1),
		"challenge": dialerMAC(secret, &other, 9, 1),
		"cluster":   dialerMAC(secret, &challenge, 8, 1),
		"replica":   dialerMAC(secret, &challenge, 9, 2),
	} {
		if mac == base {
			t.Errorf("the dialer's MAC ignores the %s", name)
		}
	}
}

// TestClusterNetOptionsRefused: NewClusterNet names what is wrong with
// options it refuses.
func TestClusterNetOptionsRefused(t *testing.T) {
	valid := func() ClusterNetOptions {
		return ClusterNetOptions{Cluster: 1, Replica: 0, ReplicaAddresses: []string{"127.0.0.1:1", "127.0.0.1:2"},
			Secret: testSecret, Deliver: func(*Shard, int, []byte) {}}
	}
	if _, err := NewClusterNet(valid()); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	for name, change := range map[string]func(o *ClusterNetOptions){
		"cluster id is zero":       func(o *ClusterNetOptions) { o.Cluster = 0 },
		"0 replica addresses":      func(o *ClusterNetOptions) { o.ReplicaAddresses = nil },
		"17 replica addresses":     func(o *ClusterNetOptions) { o.ReplicaAddresses = make([]string, 17) },
		"replica 2 outside":        func(o *ClusterNetOptions) { o.Replica = 2 },
		"replica -1 outside":       func(o *ClusterNetOptions) { o.Replica = -1 },
		"secret of 31 bytes":       func(o *ClusterNetOptions) { o.Secret = testSecret[:31] },
		"Deliver is required":      func(o *ClusterNetOptions) { o.Deliver = nil },
		"replica 1 has no address": func(o *ClusterNetOptions) { o.ReplicaAddresses[1] = "" },
		"share the address":        func(o *ClusterNetOptions) { o.ReplicaAddresses[1] = o.ReplicaAddresses[0] },
	} {
		options := valid()
		change(&options)
		_, err := NewClusterNet(options)
		if !errors.Is(err, ErrClusterNetOptions) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

// TestClusterNetRefusalLog: a refusal is logged once per key and interval,
// the next line counts those skipped, and the key table stays bounded.
func TestClusterNetRefusalLog(t *testing.T) {
	var log refusalLog
	now := time.Unix(1000, 0)
	if _, ok := log.admit("10.0.0.1 mac", now); !ok {
		t.Fatal("a first refusal is not logged")
	}
	for range 5 {
		if _, ok := log.admit("10.0.0.1 mac", now.Add(time.Second)); ok {
			t.Fatal("a repeated refusal is logged within the interval")
		}
	}
	if _, ok := log.admit("10.0.0.2 mac", now.Add(time.Second)); !ok {
		t.Fatal("another host's refusal is not logged")
	}
	quiet, ok := log.admit("10.0.0.1 mac", now.Add(clusterRefusalLogInterval+time.Second))
	if !ok || quiet != 5 {
		t.Fatalf("after the interval: logged %v, %d skipped, want true, 5", ok, quiet)
	}
	for i := range 3 * clusterRefusalKeysMax {
		log.admit(strconv.Itoa(i), now)
		if len(log.seen) > clusterRefusalKeysMax {
			t.Fatalf("%d keys remembered", len(log.seen))
		}
	}
}
