package bench

import (
	"testing"
	"time"
)

func TestParseRange(t *testing.T) {
	rows := []struct {
		text    string
		want    Range
		wantErr bool
	}{
		{"1000", Fixed(1000), false},
		{"200..500", Range{200, 500}, false},
		{" 7 .. 7 ", Fixed(7), false},
		{"0", Range{}, true},
		{"500..200", Range{}, true},
		{"abc", Range{}, true},
		{"1..", Range{}, true},
	}
	for _, row := range rows {
		got, err := ParseRange(row.text)
		if (err != nil) != row.wantErr || got != row.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v, error %v", row.text, got, err, row.want, row.wantErr)
		}
	}
	if Fixed(3).String() != "3" || (Range{2, 9}).String() != "2..9" || (Range{2, 4}).Mean() != 3 {
		t.Error("Range String/Mean")
	}
}

func TestParseBytes(t *testing.T) {
	rows := []struct {
		text    string
		want    uint64
		wantErr bool
	}{
		{"1000", 1000, false}, {"100MB", 100_000_000, false}, {"1 GiB", 1 << 30, false},
		{"2.5GB", 2_500_000_000, false}, {"8gb", 8_000_000_000, false}, {"64KiB", 65536, false},
		{"10 XB", 0, true}, {"", 0, true}, {"-1MB", 0, true},
	}
	for _, row := range rows {
		got, err := ParseBytes(row.text)
		if (err != nil) != row.wantErr || got != row.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, error %v", row.text, got, err, row.want, row.wantErr)
		}
	}
	if rate, err := ParseRate("800MB/s"); err != nil || rate != 800_000_000 {
		t.Errorf("ParseRate = %d, %v", rate, err)
	}
}

func TestParseDuration(t *testing.T) {
	rows := []struct {
		text    string
		want    time.Duration
		wantErr bool
	}{
		{"10ms", 10 * time.Millisecond, false}, {"0s", 0, false}, {"5min", 5 * time.Minute, false},
		{"1h 30m", 90 * time.Minute, false}, {"2", 2 * time.Second, false}, {"1m30s", 90 * time.Second, false},
		{"1.5s", 1500 * time.Millisecond, false}, {"10 parsecs", 0, true}, {"", 0, true},
	}
	for _, row := range rows {
		got, err := ParseDuration(row.text)
		if (err != nil) != row.wantErr || got != row.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", row.text, got, err, row.want, row.wantErr)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	rows := map[uint64]string{8_000_000_000: "8GB", 1_500_000: "1500KB", 10: "10B", 1_000_000: "1MB", 0: "0B"}
	for value, want := range rows {
		if got := FormatBytes(value); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", value, got, want)
		}
	}
}
