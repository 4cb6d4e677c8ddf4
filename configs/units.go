package configs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written with a unit, as Iggy's config does:
// "500 ms", "30 s", "1 m", "7 days", or Go's own form ("1m30s").
type Duration time.Duration

// Size is a byte count written with a unit: "4096 B", "64 KiB", "2 MB", "1 GiB".
type Size uint64

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond,
	"ms": time.Millisecond, "s": time.Second, "sec": time.Second, "secs": time.Second,
	"second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

var sizeUnits = map[string]uint64{
	"b":  1,
	"kb": 1000, "mb": 1000 * 1000, "gb": 1000 * 1000 * 1000, "tb": 1000 * 1000 * 1000 * 1000,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// UnmarshalText parses a duration with its unit.
func (d *Duration) UnmarshalText(text []byte) error {
	parsed, err := ParseDuration(string(text))
	if err != nil {
		return err
	}
	*d = Duration(parsed)
	return nil
}

// MarshalText writes the duration in Go's form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Std returns the duration as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ParseDuration reads "<number> <unit>" (the space is optional) or Go's form.
func ParseDuration(text string) (time.Duration, error) {
	text = strings.TrimSpace(text)
	if text == "0" {
		return 0, nil
	}
	number, unit := splitNumberUnit(text)
	scale, ok := durationUnits[strings.ToLower(unit)]
	if ok && number != "" {
		value, err := strconv.ParseFloat(number, 64)
		if err == nil && value >= 0 {
			return time.Duration(value * float64(scale)), nil
		}
	}
	parsed, err := time.ParseDuration(text)
	if err != nil || parsed < 0 {
		return 0, fmt.Errorf("%q is not a duration (use e.g. \"500 ms\", \"30 s\", \"1 m\")", text)
	}
	return parsed, nil
}

// UnmarshalText parses a size with its unit.
func (s *Size) UnmarshalText(text []byte) error {
	parsed, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*s = Size(parsed)
	return nil
}

// MarshalText writes the size in bytes.
func (s Size) MarshalText() ([]byte, error) {
	return []byte(strconv.FormatUint(uint64(s), 10) + " B"), nil
}

// ParseSize reads "<number> <unit>" with decimal (KB, MB) or binary (KiB,
// MiB) units; a bare number is bytes.
func ParseSize(text string) (uint64, error) {
	text = strings.TrimSpace(text)
	number, unit := splitNumberUnit(text)
	if unit == "" {
		unit = "b"
	}
	scale, ok := sizeUnits[strings.ToLower(unit)]
	value, err := strconv.ParseFloat(number, 64)
	if !ok || err != nil || value < 0 || value*float64(scale) > float64(1<<63) {
		return 0, fmt.Errorf("%q is not a size (use e.g. \"4096 B\", \"64 KiB\", \"1 GiB\")", text)
	}
	return uint64(value * float64(scale)), nil
}

func splitNumberUnit(text string) (number, unit string) {
	cut := strings.IndexFunc(text, func(r rune) bool {
		return !(r >= '0' && r <= '9') && r != '.'
	})
	if cut < 0 {
		return text, ""
	}
	return text[:cut], strings.TrimSpace(text[cut:])
}
