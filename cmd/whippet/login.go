package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

type loginView struct {
	Context   string `json:"context"`
	Address   string `json:"tcp_server_address"`
	Username  string `json:"username"`
	TokenName string `json:"token_name"`
	StoredAt  string `json:"stored_at"`
}

// loginCommand mints a personal access token with the given password and
// stores it for the context, so later commands need no credentials.
func (a *app) loginCommand() *cobra.Command {
	return &cobra.Command{Use: "login [expiry...]",
		Short: "log in once: mint a personal access token and store it for this context",
		Long: "log in with --username and --password, mint a personal access token named\n" +
			"whippet-cli-<host>-<context> (expiry as in pat create; the server default when omitted)\n" +
			"and store it, readable only by you, in $WHIPPET_HOME/tokens/<context>.json.",
		RunE: func(cmd *cobra.Command, args []string) error {
			lifetime, err := parseLifetime(args)
			if err != nil {
				return err
			}
			if a.username == "" || a.password == "" {
				return usagef("login needs --username and --password (or WHIPPET_USERNAME/WHIPPET_PASSWORD)")
			}
			a.token = "" // a stored token must not stand in for the password
			c, err := a.connect(true)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
			defer cancel()
			view, err := a.login(ctx, c, lifetime)
			if err != nil {
				return a.failed(err)
			}
			return a.emit(table{value: view, headers: []string{"CONTEXT", "ADDRESS", "USERNAME", "TOKEN", "STORED_AT"},
				rows: [][]string{{view.Context, view.Address, view.Username, view.TokenName, view.StoredAt}}})
		}}
}

func (a *app) login(ctx context.Context, c *client.Client, lifetime uint64) (*loginView, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	name := "whippet-cli-" + host + "-" + a.contextName
	if len(name) > 30 {
		name = name[:30]
	}
	// A second login replaces the first: its token would be orphaned.
	if err := c.DeletePersonalAccessToken(ctx, name); err != nil && !errors.Is(err, wire.StatusResourceNotFound) {
		return nil, err
	}
	token, err := c.CreatePersonalAccessToken(ctx, name, lifetime)
	if err != nil {
		return nil, err
	}
	path, err := a.saveLogin(&storedLogin{Address: a.address, Username: a.username, Name: name, Token: token})
	if err != nil {
		return nil, err
	}
	return &loginView{Context: a.contextName, Address: a.address, Username: a.username, TokenName: name,
		StoredAt: path}, nil
}

// logoutCommand deletes the stored token on the server and locally.
func (a *app) logoutCommand() *cobra.Command {
	return &cobra.Command{Use: "logout", Short: "delete the token whippet login stored for this context",
		Args: exactArgs(0), RunE: func(cmd *cobra.Command, _ []string) error {
			stored, err := a.loadLogin()
			if err != nil {
				return usagef("stored login: %v", err)
			}
			if stored == nil {
				return usagef("not logged in: no stored token for context %q", a.contextName)
			}
			a.address, a.token, a.username = stored.Address, stored.Token, ""
			c, err := a.connect(true)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
			defer cancel()
			revoked := c.DeletePersonalAccessToken(ctx, stored.Name)
			path, _ := a.tokenPath() // loadLogin found it, so the path resolves
			if err := os.Remove(path); err != nil {
				return a.failed(err)
			}
			if revoked != nil {
				return a.failed(revoked)
			}
			a.done("logged out of %s: token %s deleted", stored.Address, stored.Name)
			return nil
		}}
}
