// Command whippet is the command-line client of a Whippet (or Iggy) server:
// the verbs of iggy-cli (stream, topic, partition, segment, message,
// consumer-group, consumer-offset, user, pat, client, stats, ping, me) over
// the Iggy TCP protocol through the client package.
//
// Connection settings come from flags, then WHIPPET_* environment variables,
// then IGGY_* ones (--tcp-server-address, WHIPPET_TCP_SERVER_ADDRESS,
// IGGY_TCP_SERVER_ADDRESS). Output is a table unless --output json.
// Failures print the protocol status name and exit with a code that tells
// a usage error, a server refusal and a connection failure apart.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Exit codes; exitHelp in the root command's help lists them.
const (
	exitOK         = 0
	exitFailed     = 1 // anything else: bad reply, local I/O
	exitUsage      = 2 // bad command line: unknown verb, flag, argument
	exitRefused    = 3 // the server answered with a non-OK status
	exitConnection = 4 // no connection: refused, unreachable, timed out, dropped
)

const exitHelp = `Exit codes:
  0  success
  1  other failure (local I/O, malformed reply)
  2  usage error (unknown command or flag, bad argument)
  3  the server refused the request; the protocol status name is printed
  4  connection failure (server unreachable, connection dropped, timeout)`

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, lookupEnv: os.LookupEnv}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if a.client != nil {
		_ = a.client.Close() // the process ends; nothing to report
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	fmt.Fprintf(stderr, "error: %s\n", describe(err))
	if code == exitUsage {
		fmt.Fprintln(stderr, "Run 'whippet --help' for usage.")
	}
	return code
}

// usageError is a command line the CLI cannot run.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// runError marks an error returned while running a command, after its
// command line was accepted; any other error came from cobra's parsing.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var usage *usageError
	var ran *runError
	switch {
	case errors.As(err, &usage):
		return exitUsage
	case !errors.As(err, &ran):
		return exitUsage
	case client.StatusOf(err) != wire.StatusOK:
		return exitRefused
	case connectionFailure(err):
		return exitConnection
	}
	return exitFailed
}

func connectionFailure(err error) bool {
	var netErr net.Error
	var opErr *net.OpError
	var verifyErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	return errors.As(err, &netErr) || errors.As(err, &opErr) || errors.As(err, &verifyErr) ||
		errors.As(err, &recordErr) ||
		errors.Is(err, client.ErrDisconnected) || errors.Is(err, client.ErrDesynchronized) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// describe leads with the protocol status name when the server refused.
func describe(err error) string {
	status := client.StatusOf(err)
	if status == wire.StatusOK {
		return err.Error()
	}
	return fmt.Sprintf("%s: %v", status.String(), err)
}
