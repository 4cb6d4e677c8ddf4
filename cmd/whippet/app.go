package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Defaults of the connection flags.
const (
	addressDefault = "127.0.0.1:8090"
	timeoutDefault = 10 * time.Second
)

// envPrefixes are tried in order for a flag left unset: WHIPPET_ first.
var envPrefixes = []string{"WHIPPET_", "IGGY_"}

// app is one invocation: its streams, resolved settings and lazy client.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)

	address   string
	username  string
	password  string
	token     string
	output    string
	quiet     bool
	timeout   time.Duration
	tlsOn     bool
	tlsCAFile string
	tlsDomain string

	contextName string
	sources     map[string]string // flag name → where its value came from
	client      *client.Client
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "whippet",
		Short: "Command-line client of a Whippet (Iggy-compatible) message-streaming server",
		Long: "whippet manages streams, topics, partitions, consumer groups, offsets, users and tokens,\n" +
			"and sends and polls messages, over the Iggy TCP protocol. Streams, topics, consumer groups,\n" +
			"consumers and users are named by id (a number) or by name.\n\n" +
			"Connection flags may also be set in the environment: WHIPPET_<FLAG> or IGGY_<FLAG>,\n" +
			"the flag name upper-cased with dashes as underscores (WHIPPET_TCP_SERVER_ADDRESS,\n" +
			"IGGY_USERNAME, WHIPPET_OUTPUT). A flag on the command line wins over both, and both win\n" +
			"over the selected context: a table of flag values in $WHIPPET_HOME/contexts.toml\n" +
			"(default ~/.whippet), chosen by --context or whippet context use:\n\n" +
			"  [contexts.prod]\n  tcp-server-address = \"10.0.0.7:8090\"\n  username = \"ops\"\n\n" +
			"With no credentials given, the token stored by whippet login for the context is used.\n\n" +
			exitHelp,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.resolve(cmd) },
		RunE:              groupRun,
	}
	a.addConnectionFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	root.AddCommand(a.streamCommand(), a.topicCommand(), a.partitionCommand(), a.segmentCommand(),
		a.messageCommand(), a.groupCommand(), a.offsetCommand(), a.userCommand(), a.tokenCommand(),
		a.clientCommand(), a.statsCommand(), a.pingCommand(), a.meCommand(), a.contextCommand(),
		a.loginCommand(), a.logoutCommand(), a.clusterCommand())
	root.CompletionOptions.DisableDefaultCmd = true
	return root
}

func (a *app) addConnectionFlags(flags *pflag.FlagSet) {
	flags.StringVar(&a.contextName, "context", contextDefault, "use the settings of this context of contexts.toml")
	flags.StringVar(&a.address, "tcp-server-address", addressDefault, "server TCP address, host:port")
	flags.StringVarP(&a.username, "username", "u", "", "log in as this user")
	flags.StringVarP(&a.password, "password", "p", "", "password of --username")
	flags.StringVar(&a.token, "token", "", "log in with this personal access token instead")
	flags.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	flags.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing on success but requested data (lists, polls, tokens)")
	flags.DurationVar(&a.timeout, "timeout", timeoutDefault, "deadline of connecting and of each request")
	flags.BoolVar(&a.tlsOn, "tcp-tls-enabled", false, "connect over TLS")
	flags.StringVar(&a.tlsCAFile, "tcp-tls-ca-file", "", "PEM file of the CA that signed the server certificate")
	flags.StringVar(&a.tlsDomain, "tcp-tls-domain", "", "server name to verify (default: the address host)")
}

// resolve fills each connection flag left unset from the environment,
// then from the selected context, and falls back to the token stored by
// whippet login; then it checks the result.
func (a *app) resolve(cmd *cobra.Command) error {
	a.sources = map[string]string{}
	flags := cmd.Root().PersistentFlags()
	settings, err := a.selectContext(flags)
	var unknown *unknownContextError
	if errors.As(err, &unknown) && cmd.Parent() != nil && cmd.Parent().Name() == "context" {
		err = nil // context list and context use repair a dangling active context
	}
	if err != nil {
		return err
	}
	var failure error
	flags.VisitAll(func(flag *pflag.Flag) {
		if failure == nil && flag.Name != "context" {
			failure = a.resolveFlag(flag, settings)
		}
	})
	if failure != nil {
		return failure
	}
	if err := a.useStoredLogin(); err != nil {
		return err
	}
	if a.output != "table" && a.output != "json" {
		return usagef("--output must be table or json, not %q", a.output)
	}
	if a.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return nil
}

func (a *app) resolveFlag(flag *pflag.Flag, settings map[string]string) error {
	a.sources[flag.Name] = "default"
	if flag.Changed {
		a.sources[flag.Name] = "flag --" + flag.Name
		return nil
	}
	if name, value, found := a.env(flag.Name); found {
		if err := flag.Value.Set(value); err != nil {
			return usagef("environment %s: %v", name, err)
		}
		a.sources[flag.Name] = "environment " + name
		return nil
	}
	if value, found := settings[flag.Name]; found {
		if err := flag.Value.Set(value); err != nil {
			return usagef("context %s, %s: %v", a.contextName, flag.Name, err)
		}
		a.sources[flag.Name] = "context " + a.contextName
	}
	return nil
}

// useStoredLogin takes the token of whippet login when no credentials
// were given and the login was made against the same address.
func (a *app) useStoredLogin() error {
	if a.token != "" || a.username != "" {
		return nil
	}
	login, err := a.loadLogin()
	if err != nil {
		return usagef("stored login: %v", err)
	}
	if login != nil && login.Address == a.address {
		a.token = login.Token
		a.sources["token"] = "whippet login (" + tokensDirName + "/" + a.contextName + ".json)"
	}
	return nil
}

func (a *app) env(flagName string) (string, string, bool) {
	suffix := strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	for _, prefix := range envPrefixes {
		if value, found := a.lookupEnv(prefix + suffix); found {
			return prefix + suffix, value, true
		}
	}
	return "", "", false
}

// connect returns a client of the server that dials (and logs in, when
// login is asked for) on its first request, so a bad command line is
// reported before any connection is tried.
func (a *app) connect(login bool) (*client.Client, error) {
	options := client.Options{Address: a.address, ReplyTimeout: a.timeout, DialTimeout: a.timeout,
		ReconnectAttempts: -1, SDKName: "whippet-cli"}
	if login {
		switch {
		case a.token != "":
			options.Token = a.token
		case a.username != "":
			options.Username, options.Password = a.username, a.password
		default:
			return nil, usagef("no credentials: set --username and --password, or --token " +
				"(or WHIPPET_USERNAME/WHIPPET_PASSWORD, WHIPPET_TOKEN)")
		}
	}
	if a.tlsOn {
		config, err := a.tlsConfig()
		if err != nil {
			return nil, err
		}
		options.TLS = config
	}
	c, err := client.New(options)
	if err != nil {
		return nil, usagef("connection settings: %v", err)
	}
	a.client = c
	return c, nil
}

// failed marks err as a run-time failure, naming the server when the
// connection is what failed.
func (a *app) failed(err error) error {
	if _, usage := err.(*usageError); usage {
		return err
	}
	if client.StatusOf(err) == wire.StatusOK && connectionFailure(err) {
		err = fmt.Errorf("server %s: %w", a.address, err)
	}
	return &runError{err: err}
}

func (a *app) tlsConfig() (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.tlsDomain}
	if a.tlsCAFile == "" {
		return config, nil
	}
	pem, err := os.ReadFile(a.tlsCAFile)
	if err != nil {
		return nil, usagef("--tcp-tls-ca-file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, usagef("--tcp-tls-ca-file %s: no PEM certificate", a.tlsCAFile)
	}
	config.RootCAs = pool
	return config, nil
}

// action adapts a command body: it connects (logged in), bounds the
// request by --timeout, and marks what it returns as a run-time error.
func (a *app) action(body func(ctx context.Context, c *client.Client, args []string) error) func(
	*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := a.connect(true)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
		defer cancel()
		if err := body(ctx, c, args); err != nil {
			return a.failed(err)
		}
		return nil
	}
}

// done reports a successful change in table output unless --quiet.
func (a *app) done(format string, args ...any) {
	if a.quiet || a.output == "json" {
		return
	}
	fmt.Fprintf(a.stdout, format+"\n", args...)
}

// groupRun is the body of a command that only groups subcommands: it
// refuses to run bare or with an unknown subcommand.
func groupRun(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help() // help goes to stderr; the error below is what matters
	return usagef("%s needs a subcommand", cmd.CommandPath())
}

// group returns a command that only holds subcommands.
func group(use, short string, aliases []string, children ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Aliases: aliases, RunE: groupRun}
	cmd.AddCommand(children...)
	return cmd
}

// exactArgs is cobra.ExactArgs whose failure is a usage error.
func exactArgs(count int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != count {
			return usagef("%s takes %d argument(s), got %d: usage: %s", cmd.CommandPath(), count, len(args),
				cmd.UseLine())
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs whose failure is a usage error.
func rangeArgs(least, most int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < least || (most >= 0 && len(args) > most) {
			return usagef("%s: wrong number of arguments (%d): usage: %s", cmd.CommandPath(), len(args),
				cmd.UseLine())
		}
		return nil
	}
}
