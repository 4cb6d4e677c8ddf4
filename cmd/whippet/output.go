package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/whippetio/whippet/wire"
)

// table is what a command prints: a JSON value for --output json, and
// headed columns for the default table output.
type table struct {
	value   any
	headers []string
	rows    [][]string
}

// emit prints t in the selected format.
func (a *app) emit(t table) error {
	if a.output == "json" {
		encoder := json.NewEncoder(a.stdout)
		encoder.SetIndent("", "  ")
		return encoder.Encode(t.value)
	}
	writer := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(writer, strings.Join(t.headers, "\t"))
	for _, row := range t.rows {
		fmt.Fprintln(writer, strings.Join(row, "\t"))
	}
	return writer.Flush()
}

// created prints what a create command made, unless --quiet asks for
// silence in table output (JSON output is always printed).
func (a *app) created(t table) error {
	if a.quiet && a.output == "table" {
		return nil
	}
	return a.emit(t)
}

// properties is a two-column table for one entity.
func properties(value any, pairs ...string) table {
	t := table{value: value, headers: []string{"PROPERTY", "VALUE"}}
	for i := 0; i+1 < len(pairs); i += 2 {
		t.rows = append(t.rows, []string{pairs[i], pairs[i+1]})
	}
	return t
}

func itoa[T ~uint8 | ~uint32 | ~uint64 | ~int](value T) string {
	return strconv.FormatUint(uint64(value), 10)
}

// timestamp renders µs since the epoch as UTC RFC 3339; 0 is "-".
func timestamp(micros uint64) string {
	if micros == 0 {
		return "-"
	}
	return time.UnixMicro(int64(micros)).UTC().Format("2006-01-02T15:04:05.000000Z")
}

// expiry renders a µs lifetime with its sentinels.
func expiry(micros uint64) string {
	switch micros {
	case wire.ExpiryNever:
		return "never"
	case 0:
		return "server_default"
	}
	return (time.Duration(micros) * time.Microsecond).String()
}

// size renders a byte limit with its sentinels.
func size(bytes uint64) string {
	switch bytes {
	case wire.ExpiryNever:
		return "unlimited"
	case 0:
		return "server_default"
	}
	return itoa(bytes)
}

func userStatusName(s wire.UserStatus) string {
	switch s {
	case wire.UserActive:
		return "active"
	case wire.UserInactive:
		return "inactive"
	}
	return "unknown(" + itoa(uint8(s)) + ")"
}

func transportName(t wire.Transport) string {
	switch t {
	case wire.TransportTCP:
		return "tcp"
	}
	return "transport(" + itoa(uint8(t)) + ")"
}

// printable returns payload as text when it is printable UTF-8, else hex.
func printable(payload []byte) string {
	if !utf8.Valid(payload) {
		return "0x" + fmt.Sprintf("%x", payload)
	}
	for _, r := range string(payload) {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(string(payload))
		}
	}
	return string(payload)
}

// uint128 renders a message id in decimal, as Iggy's tools do.
func uint128(value wire.Uint128) string {
	if value.Hi == 0 {
		return itoa(value.Lo)
	}
	number := new(big.Int).SetUint64(value.Hi)
	number.Lsh(number, 64)
	return number.Or(number, new(big.Int).SetUint64(value.Lo)).String()
}
