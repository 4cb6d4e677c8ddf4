package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Command is a parsed command line.
type Command struct {
	// Name is "run", "examples", "suite" or "help".
	Name   string
	Config Config
	Suite  SuiteOptions
	// Profile is cpu, mem or trace to profile the bench itself.
	Profile string
}

// ErrHelp is returned when the command line asks for help.
var ErrHelp = errors.New("bench: help requested")

// ParseArgs reads an iggy-bench command line:
//
//	[GLOBAL OPTS] <KIND> [KIND OPTS] [tcp [TCP OPTS]] [output [OUTPUT OPTS]]
//
// plus "examples", "suite [OPTS]" and "help". Our own options (--rate,
// --in-flight, --durability, --max-duration, --seed, --server-binary,
// --profile) are accepted in every section.
func ParseArgs(args []string) (Command, error) {
	command := Command{Name: "run"}
	if len(args) > 0 {
		switch args[0] {
		case "examples":
			return Command{Name: "examples"}, nil
		case "help", "-h", "--help":
			return Command{Name: "help"}, ErrHelp
		case "suite":
			command.Name = "suite"
			suite, err := parseSuite(args[1:], &command.Profile)
			command.Suite = suite
			return command, err
		}
	}
	parsed := rawOptions{}
	rest, err := parseSection(globalFlags(&parsed), args)
	if err != nil {
		return command, err
	}
	if len(rest) == 0 {
		return command, fmt.Errorf("%w: missing benchmark kind (%s)", ErrInvalidConfig, kindList())
	}
	kind, ok := ParseKind(rest[0])
	if !ok {
		return command, fmt.Errorf("%w: unknown benchmark kind %q (%s)", ErrInvalidConfig, rest[0], kindList())
	}
	if rest, err = parseSection(kindFlags(&parsed, kind), rest[1:]); err != nil {
		return command, err
	}
	if err = parseTrailing(&parsed, rest); err != nil {
		return command, err
	}
	command.Config, err = parsed.config(kind)
	command.Profile = parsed.profile
	return command, err
}

// parseTrailing reads the optional transport and output sections, which
// must end the command line.
func parseTrailing(parsed *rawOptions, rest []string) error {
	var err error
	if len(rest) > 0 && isTransport(rest[0]) {
		parsed.transport = rest[0]
		if rest, err = parseSection(transportFlags(parsed), rest[1:]); err != nil {
			return err
		}
	}
	if len(rest) > 0 && rest[0] == "output" {
		parsed.output = true
		if rest, err = parseSection(outputFlags(parsed), rest[1:]); err != nil {
			return err
		}
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected %q", ErrInvalidConfig, strings.Join(rest, " "))
	}
	if !parsed.output && (parsed.remark != "" || parsed.extraInfo != "" || parsed.gitRef != "" || parsed.gitRefDate != "") {
		return fmt.Errorf("%w: --remark, --extra-info, --gitref and --gitref-date belong to the output section",
			ErrInvalidConfig)
	}
	return nil
}

func isTransport(word string) bool {
	switch word {
	case "tcp", "quic", "http", "websocket", "ws":
		return true
	}
	return false
}

func kindList() string {
	var names []string
	for _, kind := range Kinds() {
		names = append(names, kind.String()+" ("+kind.Alias()+")")
	}
	return strings.Join(names, ", ")
}

// parseSection parses flags until the first word that is not one.
func parseSection(set *flag.FlagSet, args []string) ([]string, error) {
	set.SetOutput(io.Discard)
	if err := set.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return set.Args(), nil
}

// valueFunc adapts a parse function to flag.Value.
type valueFunc struct {
	text  *string
	parse func(string) error
}

func (v valueFunc) String() string {
	if v.text == nil {
		return ""
	}
	return *v.text
}

func (v valueFunc) Set(text string) error {
	if err := v.parse(text); err != nil {
		return err
	}
	*v.text = text
	return nil
}

// define registers a value under a long name and optional short name.
func define(set *flag.FlagSet, value flag.Value, long, short, usage string) {
	set.Var(value, long, usage)
	if short != "" {
		set.Var(value, short, usage)
	}
}

// durationValue parses humantime into target.
func durationValue(target *time.Duration) valueFunc {
	text := target.String()
	return valueFunc{text: &text, parse: func(value string) (err error) {
		*target, err = ParseDuration(value)
		return err
	}}
}

// bytesValue parses a byte size into target.
func bytesValue(target *uint64) valueFunc {
	text := ""
	return valueFunc{text: &text, parse: func(value string) (err error) {
		*target, err = ParseBytes(value)
		return err
	}}
}

// rangeValue parses a count or a range into target.
func rangeValue(target *Range) valueFunc {
	text := target.String()
	return valueFunc{text: &text, parse: func(value string) (err error) {
		*target, err = ParseRange(value)
		return err
	}}
}
