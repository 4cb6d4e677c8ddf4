package classic

import "encoding/binary"

// Verdict is what Detect concludes about a connection's framing.
type Verdict uint8

// Verdicts. NeedMore is the zero value: nothing is decided yet.
const (
	NeedMore Verdict = iota
	Classic
	VSR
	Reject
)

func (v Verdict) String() string {
	switch v {
	case Classic:
		return "classic"
	case VSR:
		return "vsr"
	case Reject:
		return "reject"
	}
	return "need-more"
}

// Detection is the result of Detect. For NeedMore, Bytes is how many bytes
// the connection must have buffered before Detect can say more, and Deadline
// tells whether the caller must bound that wait by DetectCandidateDeadline
// (a VSR candidate) or only by its idle policy (fewer than 8 bytes). For a
// decision, Bytes is how many bytes the decision rested on.
type Detection struct {
	Verdict  Verdict
	Bytes    int
	Deadline bool
}

// Detect classifies the first bytes of a connection (PROTOCOL-0.8.md §11.2).
// It is pure: it consumes nothing, and the caller hands the same buffer to
// the chosen codec. Reject means close without a reply.
//
//  1. Fewer than 8 bytes: wait (no deadline).
//  2. Bytes 0..7 zero: VSR (an unsealed request header checksum).
//  3. A known code with a plausible body length: classic.
//  4. A TLS record on a plaintext listener: reject.
//  5. Otherwise a VSR candidate: wait for 256 bytes under the deadline, then
//     VSR if the header is a valid request header, else reject.
func Detect(prefix []byte) Detection {
	if len(prefix) < DetectPrologueBytes {
		return Detection{Verdict: NeedMore, Bytes: DetectPrologueBytes}
	}
	if binary.LittleEndian.Uint64(prefix[0:8]) == 0 {
		return Detection{Verdict: VSR, Bytes: DetectPrologueBytes}
	}
	length := binary.LittleEndian.Uint32(prefix[0:4])
	code := Code(binary.LittleEndian.Uint32(prefix[4:8]))
	if classicPlausible(length, code) {
		return Detection{Verdict: Classic, Bytes: DetectPrologueBytes}
	}
	if prefix[0] == 0x16 && prefix[1] == 0x03 && prefix[2] <= 0x04 {
		return Detection{Verdict: Reject, Bytes: DetectPrologueBytes}
	}
	if len(prefix) < VSRHeaderBytes {
		return Detection{Verdict: NeedMore, Bytes: VSRHeaderBytes, Deadline: true}
	}
	if vsrRequestHeaderValid(prefix[:VSRHeaderBytes]) {
		return Detection{Verdict: VSR, Bytes: VSRHeaderBytes}
	}
	return Detection{Verdict: Reject, Bytes: VSRHeaderBytes}
}

// classicPlausible is step 3: a known code whose body length fits it.
func classicPlausible(length uint32, code Code) bool {
	info, ok := lookupCode(code)
	if !ok || length < RequestCodeBytes {
		return false
	}
	bodyBytes := uint64(length) - RequestCodeBytes
	if info.emptyBody {
		return bodyBytes == 0
	}
	return bodyBytes >= uint64(info.bodyBytesMin) && bodyBytes <= uint64(code.BodyBytesMax())
}

// Fields of a 0.9 request header the detector checks (PROTOCOL.md §2.2).
const (
	vsrSizeAt         = 48
	vsrCommandAt      = 60
	vsrClientAt       = 128
	vsrOperationAt    = 176
	vsrCommandRequest = 5
	vsrClientBytes    = 16
)

// vsrRequestHeaderValid is step 5: command 5, a size within the VSR bounds,
// a non-zero client id and an operation a client may send.
func vsrRequestHeaderValid(header []byte) bool {
	if header[vsrCommandAt] != vsrCommandRequest {
		return false
	}
	size := binary.LittleEndian.Uint32(header[vsrSizeAt:])
	if size < VSRHeaderBytes || size > VSRFrameBytesMax {
		return false
	}
	client := header[vsrClientAt : vsrClientAt+vsrClientBytes]
	if binary.LittleEndian.Uint64(client[0:8]) == 0 && binary.LittleEndian.Uint64(client[8:16]) == 0 {
		return false
	}
	return vsrClientOperation(header[vsrOperationAt])
}

// vsrClientOperation accepts what a client may send: Register, NonReplicated,
// Logout, the metadata writes 128..149 and the partition writes 160..162.
func vsrClientOperation(operation uint8) bool {
	switch {
	case operation >= 1 && operation <= 3:
		return true
	case operation >= 128 && operation <= 149:
		return true
	case operation >= 160 && operation <= 162:
		return true
	}
	return false
}
