package main

import (
	"context"
	"net/http"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// Users and personal access tokens.

func userJSON(user *wire.UserInfo) map[string]any {
	status := "active"
	if user.Status == wire.UserInactive {
		status = "inactive"
	}
	return map[string]any{"id": user.ID, "created_at": user.CreatedAt, "status": status, "username": user.Username}
}

func parseUserStatus(text string) (wire.UserStatus, bool) {
	switch text {
	case "", "active":
		return wire.UserActive, true
	case "inactive":
		return wire.UserInactive, true
	}
	return 0, false
}

func (g *gateway) userRoutes(mux *http.ServeMux) {
	g.handle(mux, "GET /users", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		users, err := c.GetUsers(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(users))
		for i := range users {
			out = append(out, userJSON(&users[i]))
		}
		return out, nil
	})
	g.handle(mux, "POST /users", g.createUser)
	g.handle(mux, "GET /users/{user_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		user, err := c.GetUser(ctx, identifier(r.PathValue("user_id")))
		if err != nil {
			return nil, err
		}
		out := userJSON(&user.UserInfo)
		out["permissions"] = permissionsToJSON(user.Permissions)
		return out, nil
	})
	g.handle(mux, "PUT /users/{user_id}", g.updateUser)
	g.handle(mux, "PUT /users/{user_id}/permissions", g.updatePermissions)
	g.handle(mux, "DELETE /users/{user_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nil, c.DeleteUser(ctx, identifier(r.PathValue("user_id")))
	})
	g.handle(mux, "PUT /users/{user_id}/password", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		var body struct {
			Current string `json:"current_password"`
			Next    string `json:"new_password"`
		}
		if err := decode(w, r, &body); err != nil {
			return nil, err
		}
		return nil, c.ChangePassword(ctx, identifier(r.PathValue("user_id")), body.Current, body.Next)
	})
	g.tokenRoutes(mux)
}

func (g *gateway) createUser(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Username    string           `json:"username"`
		Password    string           `json:"password"`
		Status      string           `json:"status"`
		Permissions *permissionsJSON `json:"permissions"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	status, ok := parseUserStatus(body.Status)
	if !ok {
		badRequest(w, "status must be active or inactive")
		return nil, errReplied
	}
	permissions, reason := permissionsFromJSON(body.Permissions)
	if reason != "" {
		badRequest(w, reason)
		return nil, errReplied
	}
	user, err := c.CreateUser(ctx, &wire.CreateUser{Username: body.Username, Password: body.Password, Status: status,
		Permissions: permissions})
	if err != nil {
		return nil, err
	}
	return userJSON(&user.UserInfo), nil
}

func (g *gateway) updateUser(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
	var body struct {
		Username *string `json:"username"`
		Status   *string `json:"status"`
	}
	if err := decode(w, r, &body); err != nil {
		return nil, err
	}
	request := &wire.UpdateUser{User: identifier(r.PathValue("user_id"))}
	if body.Username != nil {
		request.HasUsername, request.Username = true, *body.Username
	}
	if body.Status != nil {
		status, ok := parseUserStatus(*body.Status)
		if !ok {
			badRequest(w, "status must be active or inactive")
			return nil, errReplied
		}
		request.HasStatus, request.Status = true, status
	}
	return nil, c.UpdateUser(ctx, request)
}

func (g *gateway) tokenRoutes(mux *http.ServeMux) {
	g.handle(mux, "GET /personal-access-tokens", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		tokens, err := c.GetPersonalAccessTokens(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(tokens))
		for _, token := range tokens {
			var expiry any
			if token.ExpiryAt != 0 {
				expiry = token.ExpiryAt
			}
			out = append(out, map[string]any{"name": token.Name, "expiry_at": expiry})
		}
		return out, nil
	})
	g.handle(mux, "POST /personal-access-tokens", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		var body struct {
			Name   string `json:"name"`
			Expiry uint64 `json:"expiry"`
		}
		if err := decode(w, r, &body); err != nil {
			return nil, err
		}
		token, err := c.CreatePersonalAccessToken(ctx, body.Name, body.Expiry)
		if err != nil {
			return nil, err
		}
		return map[string]any{"token": token}, nil
	})
	g.handle(mux, "DELETE /personal-access-tokens/{name}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nil, c.DeletePersonalAccessToken(ctx, r.PathValue("name"))
	})
}
