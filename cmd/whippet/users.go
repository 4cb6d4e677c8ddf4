package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

type userView struct {
	ID          uint32   `json:"id"`
	Username    string   `json:"username"`
	CreatedAt   uint64   `json:"created_at"`
	Status      string   `json:"status"`
	Permissions []string `json:"global_permissions,omitempty"`
	Streams     int      `json:"stream_permissions_count,omitempty"`
}

var userHeaders = []string{"ID", "USERNAME", "CREATED", "STATUS"}

func newUserView(u *wire.UserInfo) userView {
	return userView{ID: u.ID, Username: u.Username, CreatedAt: u.CreatedAt, Status: userStatusName(u.Status)}
}

func userRow(u userView) []string {
	return []string{itoa(u.ID), u.Username, timestamp(u.CreatedAt), u.Status}
}

// globalPermissionNames lists the server-wide rights in wire order, as
// --global-permissions spells them.
var globalPermissionNames = []string{"manage_servers", "read_servers", "manage_users", "read_users",
	"manage_streams", "read_streams", "manage_topics", "read_topics", "poll_messages", "send_messages"}

func globalPermissionFlags(g *wire.GlobalPermissions) []*bool {
	return []*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers, &g.ManageStreams,
		&g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages}
}

// parsePermissions reads --global-permissions: "all", "none" or a comma
// list of right names. Empty text means no permissions at all (nil).
func parsePermissions(text string) (*wire.Permissions, error) {
	if text == "" || text == "none" {
		return nil, nil
	}
	if text == "all" {
		all := wire.AllPermissions()
		return &all, nil
	}
	permissions := &wire.Permissions{}
	flags := globalPermissionFlags(&permissions.Global)
	for _, name := range strings.Split(text, ",") {
		index := -1
		for i, known := range globalPermissionNames {
			if strings.TrimSpace(name) == known {
				index = i
			}
		}
		if index < 0 {
			return nil, usagef("unknown permission %q (want all, none or %s)", name,
				strings.Join(globalPermissionNames, ","))
		}
		*flags[index] = true
	}
	return permissions, nil
}

func permissionNames(p *wire.Permissions) []string {
	if p == nil {
		return nil
	}
	names := []string{}
	for i, flag := range globalPermissionFlags(&p.Global) {
		if *flag {
			names = append(names, globalPermissionNames[i])
		}
	}
	return names
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
	var status, permissionsText string
	create := &cobra.Command{Use: "create <username> <password>", Short: "create a user", Args: exactArgs(2),
		RunE: a.action(func(ctx context.Context, c *client.Client, args []string) error {
			userStatus, err := parseUserStatus(status)
			if err != nil {
				return err
			}
			permissions, err := parsePermissions(permissionsText)
			if err != nil {
				return err
			}
			details, err := c.CreateUser(ctx, &wire.CreateUser{Username: args[0], Password: args[1],
				Status: userStatus, Permissions: permissions})
			if err != nil {
				return err
			}
			return a.emitUser(details)
		})}
	create.Flags().StringVar(&status, "user-status", "active", "active or inactive")
	create.Flags().StringVarP(&permissionsText, "global-permissions", "g", "",
		"all, none, or a comma list of "+strings.Join(globalPermissionNames, ","))
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
	view.Permissions = permissionNames(details.Permissions)
	if details.Permissions != nil {
		view.Streams = len(details.Permissions.Streams)
	}
	return a.emit(table{value: view, headers: append(userHeaders, "GLOBAL_PERMISSIONS"),
		rows: [][]string{append(userRow(view), strings.Join(view.Permissions, ","))}})
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

func (a *app) userPermissions() *cobra.Command {
	return a.userChange("permissions <user> <all|none|right,right...>", "replace a user's global permissions", 2,
		func(ctx context.Context, c *client.Client, user wire.Identifier, args []string) error {
			permissions, err := parsePermissions(args[0])
			if err != nil {
				return err
			}
			return c.UpdatePermissions(ctx, user, permissions)
		})
}
