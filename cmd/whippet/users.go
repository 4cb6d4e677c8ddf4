package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

type userView struct {
	ID          uint32             `json:"id"`
	Username    string             `json:"username"`
	CreatedAt   uint64             `json:"created_at"`
	Status      string             `json:"status"`
	Permissions []string           `json:"global_permissions,omitempty"`
	Streams     []streamRightsView `json:"stream_permissions,omitempty"`
}

var userHeaders = []string{"ID", "USERNAME", "CREATED", "STATUS"}

func newUserView(u *wire.UserInfo) userView {
	return userView{ID: u.ID, Username: u.Username, CreatedAt: u.CreatedAt, Status: userStatusName(u.Status)}
}

func userRow(u userView) []string {
	return []string{itoa(u.ID), u.Username, timestamp(u.CreatedAt), u.Status}
}

func parseUserStatus(text string) (wire.UserStatus, error) {
	switch text {
	case "active":
		return wire.UserActive, nil
	case "inactive":
		return wire.UserInactive, nil
	}
	return 0, usagef("user status must be active or inactive, not %q", text)
}

func (a *app) userCommand() *cobra.Command {
	var status string
	var rights rightsFlags
	create := &cobra.Command{Use: "create <username> <password>", Short: "create a user", Args: exactArgs(2),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			userStatus, err := parseUserStatus(status)
			if err != nil {
				return err
			}
			permissions, err := parsePermissions(rights.global, rights.streams)
			if err != nil {
				return err
			}
			details, err := c.CreateUser(ctx, &wire.CreateUser{Username: args[0], Password: args[1],
				Status: userStatus, Permissions: permissions})
			if err != nil {
				return err
			}
			if a.quiet && a.output == "table" {
				return nil
			}
			return a.emitUser(details)
		})}
	create.Flags().StringVar(&status, "user-status", "active", "active or inactive")
	rights.register(create)
	get := &cobra.Command{Use: "get <user>", Short: "show a user and its permissions", Args: exactArgs(1),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			user, err := identifier("user", args[0])
			if err != nil {
				return err
			}
			details, err := c.GetUser(ctx, user)
			if err != nil {
				return err
			}
			return a.emitUser(details)
		})}
	list := &cobra.Command{Use: "list", Short: "list users", Aliases: []string{"ls"}, Args: exactArgs(0),
		RunE: a.action(a.userList)}
	return group("user", "manage users", []string{"u"}, create, get, list, a.userDelete(), a.userRename(),
		a.userStatus(), a.userPassword(), a.userPermissions())
}

func (a *app) emitUser(details *wire.UserDetails) error {
	view := newUserView(&details.UserInfo)
	if details.Permissions != nil {
		view.Permissions = rightNames(globalRightNames, globalRights(&details.Permissions.Global))
		view.Streams = newStreamRightsViews(details.Permissions)
	}
	return a.emit(table{value: view, headers: append(userHeaders, "GLOBAL_PERMISSIONS", "STREAM_PERMISSIONS"),
		rows: [][]string{append(userRow(view), dash(strings.Join(view.Permissions, ",")),
			dash(streamRightsText(view.Streams)))}})
}

func (a *app) userList(ctx context.Context, c *client.Client, _ []string) error {
	users, err := c.GetUsers(ctx)
	if err != nil {
		return err
	}
	views := make([]userView, len(users))
	t := table{headers: userHeaders}
	for i := range users {
		views[i] = newUserView(&users[i])
		t.rows = append(t.rows, userRow(views[i]))
	}
	t.value = views
	return a.emit(t)
}

// userChange is a user subcommand that takes the user and some values.
func (a *app) userChange(use, short string, argsCount int,
	call func(ctx context.Context, c *client.Client, user wire.Identifier, args []string) error) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: exactArgs(argsCount),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			user, err := identifier("user", args[0])
			if err != nil {
				return err
			}
			if err := call(ctx, c, user, args[1:]); err != nil {
				return err
			}
			a.done("user %s: %s done", args[0], strings.Fields(use)[0])
			return nil
		})}
}

func (a *app) userDelete() *cobra.Command {
	return a.userChange("delete <user>", "delete a user", 1,
		func(ctx context.Context, c *client.Client, user wire.Identifier, _ []string) error {
			return c.DeleteUser(ctx, user)
		})
}

func (a *app) userRename() *cobra.Command {
	return a.userChange("name <user> <new_name>", "rename a user", 2,
		func(ctx context.Context, c *client.Client, user wire.Identifier, args []string) error {
			return c.UpdateUser(ctx, &wire.UpdateUser{User: user, HasUsername: true, Username: args[0]})
		})
}

func (a *app) userStatus() *cobra.Command {
	return a.userChange("status <user> <active|inactive>", "activate or deactivate a user", 2,
		func(ctx context.Context, c *client.Client, user wire.Identifier, args []string) error {
			status, err := parseUserStatus(args[0])
			if err != nil {
				return err
			}
			return c.UpdateUser(ctx, &wire.UpdateUser{User: user, HasStatus: true, Status: status})
		})
}

func (a *app) userPassword() *cobra.Command {
	return a.userChange("password <user> <current_password> <new_password>", "change a user's password", 3,
		func(ctx context.Context, c *client.Client, user wire.Identifier, args []string) error {
			return c.ChangePassword(ctx, user, args[0], args[1])
		})
}

// rightsFlags are the permission flags of user create and permissions.
type rightsFlags struct {
	global  string
	streams []string
}

func (f *rightsFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.global, "global-permissions", "g", "",
		"all, none, or a comma list of "+strings.Join(globalRightNames, ","))
	cmd.Flags().StringArrayVarP(&f.streams, "stream-permissions", "s", nil,
		"STREAM_ID[:rights][#TOPIC_ID[:rights]]... (repeatable); stream rights "+
			strings.Join(streamRightNames, ",")+"; topic rights "+strings.Join(topicRightNames, ","))
}

func (a *app) userPermissions() *cobra.Command {
	var rights rightsFlags
	cmd := a.userChange("permissions <user>", "replace a user's permissions (none given: clear them)", 1,
		func(ctx context.Context, c *client.Client, user wire.Identifier, _ []string) error {
			permissions, err := parsePermissions(rights.global, rights.streams)
			if err != nil {
				return err
			}
			return c.UpdatePermissions(ctx, user, permissions)
		})
	rights.register(cmd)
	return cmd
}
