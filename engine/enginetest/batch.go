package enginetest

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Message is one message of a test batch.
type Message struct {
	IDLow, IDHigh uint64
	Payload       []byte
	Headers       []byte
	// Offset is filled by Decode.
	Offset uint64
}

// Batch encodes messages as a producer would (PROTOCOL.md §8.2–8.4):
// server fields zero, frame checksums and the batch checksum computed.
func Batch(originTimestamp uint64, messages ...Message) []byte {
	length := 256
	for _, m := range messages {
		length += 48 + len(m.Payload) + len(m.Headers)
	}
	record := make([]byte, length)
	binary.LittleEndian.PutUint64(record[24:], originTimestamp)
	binary.LittleEndian.PutUint64(record[32:], uint64(length))
	binary.LittleEndian.PutUint32(record[48:], uint32(len(messages)))
	at := 256
	for index, m := range messages {
		frame := record[at:]
		binary.LittleEndian.PutUint64(frame[8:], m.IDLow)
		binary.LittleEndian.PutUint64(frame[16:], m.IDHigh)
		binary.LittleEndian.PutUint32(frame[24:], uint32(index))
		binary.LittleEndian.PutUint32(frame[32:], uint32(len(m.Headers)))
		binary.LittleEndian.PutUint32(frame[36:], uint32(len(m.Payload)))
		copy(frame[48:], m.Payload)
		copy(frame[48+len(m.Payload):], m.Headers)
		frameLength := 48 + len(m.Payload) + len(m.Headers)
		binary.LittleEndian.PutUint64(frame[0:], xxh3.Hash(frame[8:frameLength]))
		at += frameLength
	}
	binary.LittleEndian.PutUint64(record[40:], BatchChecksum(record))
	return record
}

// BatchChecksum computes a record's batch checksum independently of the
// engine's code.
func BatchChecksum(record []byte) uint64 {
	covered := append([]byte(nil), record[:40]...)
	covered = append(covered, record[48:52]...)
	for at := 256; at < len(record); {
		covered = append(covered, record[at:at+8]...)
		at += 48 + int(binary.LittleEndian.Uint32(record[at+36:])) + int(binary.LittleEndian.Uint32(record[at+32:]))
	}
	return xxh3.Hash(covered)
}

// Decode walks poll output (back-to-back records), verifies every
// checksum, and returns the messages with their absolute offsets.
func Decode(records []byte) ([]Message, error) {
	var messages []Message
	for at := 0; at < len(records); {
		if len(records)-at < 256 {
			return nil, fmt.Errorf("enginetest: partial header at %d", at)
		}
		length := int(binary.LittleEndian.Uint64(records[at+32:]))
		if length < 256 || at+length > len(records) {
			return nil, fmt.Errorf("enginetest: bad batch_length %d at %d", length, at)
		}
		record := records[at : at+length]
		if BatchChecksum(record) != binary.LittleEndian.Uint64(record[40:]) {
			return nil, fmt.Errorf("enginetest: batch checksum mismatch at %d", at)
		}
		decoded, err := decodeFrames(record)
		if err != nil {
			return nil, err
		}
		messages = append(messages, decoded...)
		at += length
	}
	return messages, nil
}

func decodeFrames(record []byte) ([]Message, error) {
	base := binary.LittleEndian.Uint64(record[8:])
	count := int(binary.LittleEndian.Uint32(record[48:]))
	var messages []Message
	for at := 256; at < len(record); {
		frame := record[at:]
		payload := int(binary.LittleEndian.Uint32(frame[36:]))
		headers := int(binary.LittleEndian.Uint32(frame[32:]))
		frameLength := 48 + payload + headers
		if frameLength > len(frame) {
			return nil, fmt.Errorf("enginetest: frame overruns its record")
		}
		if xxh3.Hash(frame[8:frameLength]) != binary.LittleEndian.Uint64(frame[0:]) {
			return nil, fmt.Errorf("enginetest: frame checksum mismatch")
		}
		messages = append(messages, Message{
			IDLow:   binary.LittleEndian.Uint64(frame[8:]),
			IDHigh:  binary.LittleEndian.Uint64(frame[16:]),
			Payload: append([]byte(nil), frame[48:48+payload]...),
			Headers: append([]byte(nil), frame[48+payload:frameLength]...),
			Offset:  base + uint64(binary.LittleEndian.Uint32(frame[24:])),
		})
		at += frameLength
	}
	if len(messages) != count {
		return nil, fmt.Errorf("enginetest: message_count %d, frames %d", count, len(messages))
	}
	return messages, nil
}
