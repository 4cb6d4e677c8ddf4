package shard

import (
	"bytes"
	"testing"
)

// FuzzClusterHandshakeDecode feeds arbitrary bytes to the handshake
// decoders: they never panic, and what the auth decoder accepts encodes
// back to the same bytes.
func FuzzClusterHandshakeDecode(f *testing.F) {
	var nonce [handshakeNonceBytes]byte
	ask := make([]byte, handshakeAskBytes)
	encodeAsk(ask, testClusterID, &nonce)
	auth := make([]byte, handshakeAuthBytes)
	encodeAuth(auth, &handshakeAuth{cluster: testClusterID, replica: 1, nonce: nonce})
	verdict := make([]byte, handshakeVerdictBytes)
	var mac [handshakeMACBytes]byte
	encodeVerdict(verdict, 2, &mac)
	for _, seed := range [][]byte{ask, auth, verdict, []byte("GET / HTTP/1.1\r\n"), nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = decodeAsk(data)
		_, _, _ = decodeVerdict(data)
		for kind := uint16(0); kind <= handshakeKindVerdict+1; kind++ {
			if size, err := handshakePrefix(data, kind); err == nil && size != 0 && size > frameHeadBytesMax {
				t.Fatalf("kind %d sized %d, beyond a connection's head", kind, size)
			}
		}
		var decoded handshakeAuth
		if decodeAuth(data, &decoded) == nil {
			again := make([]byte, handshakeAuthBytes)
			encodeAuth(again, &decoded)
			if !bytes.Equal(again, data) {
				t.Fatalf("auth %x re-encodes as %x", data, again)
			}
		}
	})
}
