package bench

import (
	"strconv"
	"strings"
	"unicode"
)

// paramsIdentifier joins what makes two runs comparable: kind, actors,
// sizes, budget and transport, then ours (rate, durability) when set.
func paramsIdentifier(config *Config) string {
	parts := []string{
		config.Kind.Token(),
		strconv.Itoa(config.ActorsLabel()),
		nameToken(config.MessageSize.String()),
		nameToken(config.MessagesPerBatch.String()),
		budgetToken(config),
		config.Transport,
	}
	if config.OpenLoop() {
		parts = append(parts, "rate"+strconv.FormatUint(config.Rate, 10))
	}
	if config.Durability != "" {
		parts = append(parts, config.Durability)
	}
	return strings.Join(parts, "_")
}

// RunName is the run directory's name, as iggy-bench builds it: the params
// identifier, then remark, gitref and identifier when given, then the CPU
// brand in lower snake case.
func RunName(config *Config, hardware *Hardware) string {
	parts := []string{paramsIdentifier(config)}
	for _, optional := range []string{config.Remark, config.GitRef, config.Identifier} {
		if optional != "" {
			parts = append(parts, nameToken(optional))
		}
	}
	parts = append(parts, lowerSnake(hardware.CPUName))
	return strings.Join(parts, "_")
}

func budgetToken(config *Config) string {
	if config.TotalData != 0 {
		return FormatBytes(config.TotalData)
	}
	return strconv.FormatUint(config.MessageBatches, 10)
}

// nameToken keeps a token safe in a file name.
func nameToken(text string) string {
	text = strings.ReplaceAll(text, "..", "-")
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, text)
}

// lowerSnake turns "Intel(R) Xeon(R) CPU @ 2.20GHz" into
// "intel_r_xeon_r_cpu_2_20ghz".
func lowerSnake(text string) string {
	var builder strings.Builder
	pending := false
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if pending && builder.Len() > 0 {
				builder.WriteByte('_')
			}
			builder.WriteRune(r)
			pending = false
			continue
		}
		pending = true
	}
	if builder.Len() == 0 {
		return "unknown_cpu"
	}
	return builder.String()
}
