package meminfo

import "testing"

// TestMemTotalBytes: a well-formed MemTotal line gives its size in bytes
// wherever it sits; a missing, malformed, zero or overflowing one gives none.
func TestMemTotalBytes(t *testing.T) {
	for _, row := range []struct {
		text string
		want uint64
		ok   bool
	}{
		{"MemTotal:       16384 kB\nMemFree: 1 kB\n", 16384 << 10, true},
		{"MemFree: 1 kB\nMemTotal: 24576000 kB", 24576000 << 10, true},
		{"MemFree: 1 kB\n", 0, false},
		{"MemTotal: 0 kB\n", 0, false},
		{"MemTotal: 16384\n", 0, false},
		{"MemTotal: 16384 MB\n", 0, false},
		{"MemTotal: lots kB\n", 0, false},
		{"MemTotal: 18014398509481984 kB\n", 0, false},
		{"", 0, false},
	} {
		got, ok := MemTotalBytes(row.text)
		if got != row.want || ok != row.ok {
			t.Errorf("%q: %d, %v; want %d, %v", row.text, got, ok, row.want, row.ok)
		}
	}
}
