package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ErrInvalidConfig prefixes every configuration error; the message names
// the flag.
var ErrInvalidConfig = errors.New("bench: invalid configuration")

// Range is a fixed value (Min == Max) or an inclusive range "min..max"
// from which each message or batch draws its size.
type Range struct {
	Min uint32
	Max uint32
}

// Fixed returns the range holding one value.
func Fixed(value uint32) Range { return Range{Min: value, Max: value} }

// ParseRange reads "1000" or "200..500".
func ParseRange(text string) (Range, error) {
	low, high, isRange := strings.Cut(strings.TrimSpace(text), "..")
	first, err := strconv.ParseUint(strings.TrimSpace(low), 10, 32)
	if err != nil {
		return Range{}, fmt.Errorf("%q is not a count or a range like 200..500", text)
	}
	last := first
	if isRange {
		if last, err = strconv.ParseUint(strings.TrimSpace(high), 10, 32); err != nil {
			return Range{}, fmt.Errorf("%q is not a range like 200..500", text)
		}
	}
	if first == 0 || last < first {
		return Range{}, fmt.Errorf("%q must be positive, low..high with low <= high", text)
	}
	return Range{Min: uint32(first), Max: uint32(last)}, nil
}

// Fixed reports whether every draw gives the same value.
func (r Range) Fixed() bool { return r.Min == r.Max }

// Mean is the expected value of a uniform draw.
func (r Range) Mean() float64 { return (float64(r.Min) + float64(r.Max)) / 2 }

// String prints the range as ParseRange reads it.
func (r Range) String() string {
	if r.Fixed() {
		return strconv.FormatUint(uint64(r.Min), 10)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// byteUnits maps a suffix to its multiplier: decimal (KB, MB) and binary
// (KiB, MiB) as iggy's byte sizes accept them.
var byteUnits = map[string]float64{
	"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
}

// ParseBytes reads a byte size such as "1000", "100MB", "1 GiB", "2.5GB".
func ParseBytes(text string) (uint64, error) {
	number, unit := splitNumber(text)
	value, err := strconv.ParseFloat(number, 64)
	multiplier, known := byteUnits[strings.ToLower(unit)]
	if err != nil || !known || value < 0 || math.IsInf(value, 0) {
		return 0, fmt.Errorf("%q is not a byte size like 100MB or 1GiB", text)
	}
	total := value * multiplier
	if total >= math.MaxUint64/2 {
		return 0, fmt.Errorf("%q is too large", text)
	}
	return uint64(math.Round(total)), nil
}

// ParseRate reads a byte rate: a byte size, optionally followed by "/s".
func ParseRate(text string) (uint64, error) {
	return ParseBytes(strings.TrimSuffix(strings.TrimSpace(text), "/s"))
}

// durationUnits maps humantime suffixes to their length.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond, "ms": time.Millisecond,
	"": time.Second, "s": time.Second, "sec": time.Second, "secs": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "d": 24 * time.Hour, "days": 24 * time.Hour,
}

// ParseDuration reads a humantime duration as iggy-bench does ("10ms",
// "5min", "1h 30m", "0s"); a bare number is seconds.
func ParseDuration(text string) (time.Duration, error) {
	fields := strings.Fields(strings.TrimSpace(text))
	if len(fields) == 0 {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for _, field := range fields {
		for field != "" {
			number, rest := splitNumber(field)
			unit := rest
			if cut := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsDigit(r) || r == '.' }); cut > 0 {
				unit, rest = rest[:cut], rest[cut:]
			} else {
				rest = ""
			}
			value, err := strconv.ParseFloat(number, 64)
			length, known := durationUnits[strings.ToLower(unit)]
			if err != nil || !known || value < 0 {
				return 0, fmt.Errorf("%q is not a duration like 10ms, 5s or 5min", text)
			}
			total += time.Duration(value * float64(length))
			field = rest
		}
	}
	return total, nil
}

// splitNumber splits "100MB" into "100" and "MB" (spaces allowed between).
func splitNumber(text string) (number, unit string) {
	text = strings.TrimSpace(text)
	end := strings.IndexFunc(text, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	if end < 0 {
		return text, ""
	}
	return text[:end], strings.TrimSpace(text[end:])
}

// FormatBytes prints a byte count in the largest decimal unit that keeps
// it whole, as run directory names spell sizes ("8GB", "1500KB", "10B").
func FormatBytes(count uint64) string {
	units := [...]struct {
		suffix string
		size   uint64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}}
	for _, unit := range units {
		if count >= unit.size && count%unit.size == 0 {
			return strconv.FormatUint(count/unit.size, 10) + unit.suffix
		}
	}
	return strconv.FormatUint(count, 10) + "B"
}
