package shard

// SendVec records a vectored send as one send of its joined bytes.
func (f *fakeBackend) SendVec(_ int, spans [][]byte, token uint64) error {
	f.sends = append(f.sends, token)
	var joined []byte
	for _, span := range spans {
		joined = append(joined, span...)
	}
	f.sent = append(f.sent, joined)
	return nil
}
