package classic

import (
	"encoding/binary"
	"testing"
)

// Goal: Detect classifies all 126 legacy detection samples as expected, on
// exactly the number of bytes the sample says the decision rests on.
// Method: feed each prefix whole, then every shorter prefix: a decided
// sample must say NeedMore for every prefix shorter than its decision point
// and give the same verdict for every longer one.
func TestDetectionVectors(t *testing.T) {
	samples := loadVectors[detectionVector](t, "detection.json", 126)
	verdicts := map[string]Verdict{"classic": Classic, "vsr": VSR, "need-more": NeedMore, "reject": Reject}
	counts := map[Verdict]int{}
	for _, sample := range samples {
		prefix := unhex(t, sample.Prefix)
		want, ok := verdicts[sample.Expected]
		if !ok {
			t.Fatalf("%s: unknown expected verdict %q", sample.Name, sample.Expected)
		}
		got := Detect(prefix)
		if got.Verdict != want {
			t.Errorf("%s: verdict %v, want %v (%s)", sample.Name, got.Verdict, want, sample.Reason)
			continue
		}
		counts[got.Verdict]++
		if want == NeedMore {
			checkNeedMore(t, sample, got, len(prefix))
			continue
		}
		if got.Bytes != sample.Decided {
			t.Errorf("%s: decided on %d bytes, want %d", sample.Name, got.Bytes, sample.Decided)
		}
		for length := 0; length <= len(prefix); length++ {
			partial := Detect(prefix[:length])
			if length < sample.Decided && partial.Verdict != NeedMore {
				t.Errorf("%s: %d bytes gave %v before the decision point", sample.Name, length, partial.Verdict)
			}
			if length >= sample.Decided && partial.Verdict != want {
				t.Errorf("%s: %d bytes gave %v, want %v", sample.Name, length, partial.Verdict, want)
			}
		}
	}
	total := counts[Classic] + counts[VSR] + counts[NeedMore] + counts[Reject]
	if total != len(samples) || counts[Classic] != 62 || counts[VSR] != 57 {
		t.Fatalf("verdict counts %v over %d samples", counts, len(samples))
	}
}

// checkNeedMore: a waiting verdict must ask for more than it has, with a
// deadline exactly when the wait is for a VSR candidate header.
func checkNeedMore(t *testing.T, sample detectionVector, got Detection, have int) {
	if got.Bytes <= have {
		t.Errorf("%s: NeedMore asks for %d bytes with %d buffered", sample.Name, got.Bytes, have)
	}
	if have < DetectPrologueBytes && (got.Deadline || got.Bytes != DetectPrologueBytes) {
		t.Errorf("%s: short prologue must wait for 8 bytes without a deadline: %+v", sample.Name, got)
	}
	if have >= DetectPrologueBytes && (!got.Deadline || got.Bytes != VSRHeaderBytes) {
		t.Errorf("%s: a VSR candidate waits for 256 bytes under the deadline: %+v", sample.Name, got)
	}
	if sample.Decided != have {
		t.Errorf("%s: sample says undecided after %d bytes, buffered %d", sample.Name, sample.Decided, have)
	}
}

// Goal: every code a real classic client sends is decided on its first 8
// bytes, at its minimum body and at its cap; a body above the cap or below
// the minimum is not classic.
func TestDetectClassicBounds(t *testing.T) {
	for _, info := range codeTable {
		prologue := func(bodyBytes int) []byte {
			frame := binary.LittleEndian.AppendUint32(nil, uint32(bodyBytes+RequestCodeBytes))
			return binary.LittleEndian.AppendUint32(frame, uint32(info.code))
		}
		if got := Detect(prologue(info.bodyBytesMin)); got.Verdict != Classic || got.Bytes != 8 {
			t.Errorf("%v at its minimum body: %+v", info.code, got)
		}
		if info.emptyBody {
			if got := Detect(prologue(1)); got.Verdict == Classic {
				t.Errorf("%v with a body must not be classic", info.code)
			}
			continue
		}
		if got := Detect(prologue(info.code.BodyBytesMax())); got.Verdict != Classic {
			t.Errorf("%v at its cap: %+v", info.code, got)
		}
		if got := Detect(prologue(info.code.BodyBytesMax() + 1)); got.Verdict == Classic {
			t.Errorf("%v above its cap is classic", info.code)
		}
		if info.bodyBytesMin > 0 {
			if got := Detect(prologue(info.bodyBytesMin - 1)); got.Verdict == Classic {
				t.Errorf("%v below its minimum is classic", info.code)
			}
		}
	}
}

// Goal: step 5 accepts exactly the valid VSR request headers.
func TestDetectVSRCandidate(t *testing.T) {
	valid := func() []byte {
		header := make([]byte, VSRHeaderBytes)
		header[0] = 0x7f // a sealed checksum: bytes 0..7 are not zero
		binary.LittleEndian.PutUint32(header[vsrSizeAt:], VSRHeaderBytes)
		header[vsrCommandAt] = vsrCommandRequest
		header[vsrClientAt+15] = 1
		header[vsrOperationAt] = 2
		return header
	}
	if got := Detect(valid()); got.Verdict != VSR || got.Bytes != VSRHeaderBytes {
		t.Fatalf("valid sealed header: %+v", got)
	}
	breakers := map[string]func([]byte){
		"command 8":       func(h []byte) { h[vsrCommandAt] = 8 },
		"size 255":        func(h []byte) { binary.LittleEndian.PutUint32(h[vsrSizeAt:], 255) },
		"size above cap":  func(h []byte) { binary.LittleEndian.PutUint32(h[vsrSizeAt:], VSRFrameBytesMax+1) },
		"client zero":     func(h []byte) { h[vsrClientAt+15] = 0 },
		"operation 0":     func(h []byte) { h[vsrOperationAt] = 0 },
		"operation 64":    func(h []byte) { h[vsrOperationAt] = 64 },
		"operation 150":   func(h []byte) { h[vsrOperationAt] = 150 },
		"operation 163":   func(h []byte) { h[vsrOperationAt] = 163 },
		"TLS record head": func(h []byte) { copy(h, []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01}) },
	}
	for name, breaker := range breakers {
		header := valid()
		breaker(header)
		if got := Detect(header); got.Verdict != Reject {
			t.Errorf("%s: %+v, want reject", name, got)
		}
	}
	for _, operation := range []uint8{1, 3, 128, 149, 160, 162} {
		header := valid()
		header[vsrOperationAt] = operation
		if got := Detect(header); got.Verdict != VSR {
			t.Errorf("operation %d: %+v", operation, got)
		}
	}
}
