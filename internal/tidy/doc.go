// Package tidy holds no production code: its tests enforce the house rules
// of ../../shared/STYLE.md that a machine can check, so review need not.
//
// Invariants checked by TestTidy and TestImports:
//  1. A non-generated Go file has at most fileLinesMax lines.
//  2. A non-test function has at most functionLinesMax lines.
//  3. No fmt.Print* and no recover() outside cmd/.
//  4. No time.Now, time.Sleep, goroutines or global math/rand in vsr/ (not vsr/sim).
//  5. Each room imports only the rooms its row of the import table names.
package tidy
