package client

import (
	"context"

	"github.com/whippetio/whippet/wire"
)

// command runs a command whose success payload is empty or ignored.
func (c *Client) command(ctx context.Context, command wire.Code, body wire.Body) error {
	_, err := c.invoke(ctx, command, body)
	return err
}

// query runs a command and decodes its payload into value. An empty payload
// means "not found" for several reads (§4.4); it is reported as *Error
// with notFound, or as success when notFound is StatusOK.
func (c *Client) query(ctx context.Context, command wire.Code, body wire.Body, value wire.Decoder,
	notFound wire.Status) error {
	_, err := c.queryInto(ctx, command, body, value, notFound, nil)
	return err
}

// queryInto is query receiving the reply frame into into when it fits
// (invokeInto); it returns the call, whose buffer holds the reply, or nil
// when no reply came.
func (c *Client) queryInto(ctx context.Context, command wire.Code, body wire.Body, value wire.Decoder,
	notFound wire.Status, into []byte) (*call, error) {
	done, err := c.invokeInto(ctx, command, body, into)
	if err != nil {
		return nil, err
	}
	if len(done.reply.Payload) == 0 && notFound != wire.StatusOK {
		return done, &Error{Command: command, Status: notFound}
	}
	return done, decodePayload(done, value)
}

// Ping checks the connection; it needs no login.
func (c *Client) Ping(ctx context.Context) error { return c.command(ctx, wire.CodePing, nil) }

// GetStats returns server statistics.
func (c *Client) GetStats(ctx context.Context) (*wire.Stats, error) {
	var stats wire.Stats
	return &stats, c.query(ctx, wire.CodeGetStats, nil, &stats, wire.StatusEmptyResponse)
}

// GetSnapshot returns a diagnostic ZIP archive.
func (c *Client) GetSnapshot(ctx context.Context, request *wire.GetSnapshot) ([]byte, error) {
	var archive wire.Raw
	return archive, c.query(ctx, wire.CodeGetSnapshot, request, &archive, wire.StatusOK)
}

// GetClusterMetadata returns the cluster roster (§11).
func (c *Client) GetClusterMetadata(ctx context.Context) (*wire.ClusterMetadata, error) {
	var metadata wire.ClusterMetadata
	return &metadata, c.query(ctx, wire.CodeGetClusterMetadata, nil, &metadata, wire.StatusEmptyResponse)
}

// DescribeOptions returns the option catalog of a scope.
func (c *Client) DescribeOptions(ctx context.Context, scope wire.OptionsScope) (wire.OptionSpecs, error) {
	var specs wire.OptionSpecs
	return specs, c.query(ctx, wire.CodeDescribeOptions, &wire.DescribeOptions{Scope: scope}, &specs,
		wire.StatusEmptyResponse)
}

// GetMe returns the caller's own connection.
func (c *Client) GetMe(ctx context.Context) (*wire.ClientDetails, error) {
	var details wire.ClientDetails
	return &details, c.query(ctx, wire.CodeGetMe, nil, &details, wire.StatusClientNotFound)
}

// GetClient returns one connection; an unknown id is StatusClientNotFound.
func (c *Client) GetClient(ctx context.Context, clientID uint32) (*wire.ClientDetails, error) {
	var details wire.ClientDetails
	return &details, c.query(ctx, wire.CodeGetClient, &wire.GetClient{ClientID: clientID}, &details,
		wire.StatusClientNotFound)
}

// GetClients lists the connections.
func (c *Client) GetClients(ctx context.Context) (wire.ClientList, error) {
	var clients wire.ClientList
	return clients, c.query(ctx, wire.CodeGetClients, nil, &clients, wire.StatusOK)
}

// SendRaw sends any command code with a raw body and returns the raw
// payload (after the result section): the path for codes this client has
// no method for.
func (c *Client) SendRaw(ctx context.Context, command wire.Code, body []byte) ([]byte, error) {
	raw := wire.Raw(body)
	done, err := c.invoke(ctx, command, &raw)
	if err != nil {
		return nil, err
	}
	return done.reply.Payload, nil
}

// GetUser returns a user; a missing user is StatusResourceNotFound.
func (c *Client) GetUser(ctx context.Context, user wire.Identifier) (*wire.UserDetails, error) {
	var details wire.UserDetails
	return &details, c.query(ctx, wire.CodeGetUser, &wire.UserTarget{User: user}, &details,
		wire.StatusResourceNotFound)
}

// GetUsers lists the users.
func (c *Client) GetUsers(ctx context.Context) (wire.UserList, error) {
	var users wire.UserList
	return users, c.query(ctx, wire.CodeGetUsers, nil, &users, wire.StatusOK)
}

// CreateUser creates a user and returns it.
func (c *Client) CreateUser(ctx context.Context, request *wire.CreateUser) (*wire.UserDetails, error) {
	var details wire.UserDetails
	return &details, c.query(ctx, wire.CodeCreateUser, request, &details, wire.StatusOK)
}

// DeleteUser deletes a user.
func (c *Client) DeleteUser(ctx context.Context, user wire.Identifier) error {
	return c.command(ctx, wire.CodeDeleteUser, &wire.UserTarget{User: user})
}

// UpdateUser renames a user and/or changes its status.
func (c *Client) UpdateUser(ctx context.Context, request *wire.UpdateUser) error {
	return c.command(ctx, wire.CodeUpdateUser, request)
}

// UpdatePermissions replaces a user's permissions (nil clears them).
func (c *Client) UpdatePermissions(ctx context.Context, user wire.Identifier, permissions *wire.Permissions) error {
	return c.command(ctx, wire.CodeUpdatePermissions, &wire.UpdatePermissions{User: user, Permissions: permissions})
}

// ChangePassword changes a user's password.
func (c *Client) ChangePassword(ctx context.Context, user wire.Identifier, current, next string) error {
	return c.command(ctx, wire.CodeChangePassword,
		&wire.ChangePassword{User: user, CurrentPassword: current, NewPassword: next})
}

// GetPersonalAccessTokens lists the caller's tokens.
func (c *Client) GetPersonalAccessTokens(ctx context.Context) (wire.TokenList, error) {
	var tokens wire.TokenList
	return tokens, c.query(ctx, wire.CodeGetPersonalAccessTokens, nil, &tokens, wire.StatusOK)
}

// CreatePersonalAccessToken mints a token; expiry is a lifetime in µs
// (0 = server default, wire.ExpiryNever = never). The raw token is shown
// only here.
func (c *Client) CreatePersonalAccessToken(ctx context.Context, name string, expiry uint64) (string, error) {
	var token wire.RawToken
	err := c.query(ctx, wire.CodeCreatePersonalAccessToken,
		&wire.CreatePersonalAccessToken{Name: name, Expiry: expiry}, &token, wire.StatusEmptyResponse)
	return token.Token, err
}

// DeletePersonalAccessToken deletes a token by name.
func (c *Client) DeletePersonalAccessToken(ctx context.Context, name string) error {
	return c.command(ctx, wire.CodeDeletePersonalAccessToken, &wire.DeletePersonalAccessToken{Name: name})
}
