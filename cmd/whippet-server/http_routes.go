package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/wire"
)

// handler runs one authenticated REST call with its session's client.
type handler func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error)

// routes is the REST API, on Go's pattern mux (method and path
// wildcards), mirroring Iggy's paths.
func (g *gateway) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "pong") // the peer may have left
	})
	mux.HandleFunc("POST /users/login", g.onLogin)
	mux.HandleFunc("POST /personal-access-tokens/login", g.onTokenLogin)
	mux.HandleFunc("DELETE /users/logout", g.onLogout)
	mux.HandleFunc("POST /users/logout", g.onLogout)
	g.systemRoutes(mux)
	g.streamRoutes(mux)
	g.messageRoutes(mux)
	g.groupRoutes(mux)
	g.userRoutes(mux)
	g.clusterRoutes(mux)
	return g.limitBody(mux)
}

// limitBody caps request bodies at http.max_request_size.
func (g *gateway) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.bodyMax {
			writeJSON(w, http.StatusRequestEntityTooLarge, httpError{ID: uint32(wire.StatusInvalidFormat),
				Code: "request_too_large", Reason: "request body exceeds http.max_request_size"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, g.bodyMax)
		next.ServeHTTP(w, r)
	})
}

// handle wraps an authenticated call: 401 without a session, then the
// call's value as JSON (204 when nil), or its error as Iggy's body.
func (g *gateway) handle(mux *http.ServeMux, pattern string, call handler) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		session, _ := g.authenticate(w, r)
		if session == nil {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), httpRequestTimeout)
		defer cancel()
		value, err := call(w, r, ctx, session.client)
		outcome := "ok"
		switch {
		case err == errReplied:
			outcome = "error"
		case err != nil:
			outcome = "error"
			writeError(w, err)
		case value == nil:
			w.WriteHeader(http.StatusNoContent)
		default:
			code := http.StatusOK
			if r.Method == http.MethodPost {
				code = http.StatusCreated
			}
			writeJSON(w, code, value)
		}
		if g.metrics != nil {
			g.metrics.observeRequest(pattern, outcome, time.Since(started))
		}
	})
}

// errReplied says the handler already wrote its (error) reply.
var errReplied = &client.Error{Status: wire.StatusInvalidFormat}

// decode reads a JSON body into value, answering 400 when it cannot.
func decode(w http.ResponseWriter, r *http.Request, value any) error {
	if err := json.NewDecoder(r.Body).Decode(value); err != nil {
		badRequest(w, "invalid JSON body: "+err.Error())
		return errReplied
	}
	return nil
}

func (g *gateway) onLogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if decode(w, r, &body) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), httpRequestTimeout)
	defer cancel()
	token, session, err := g.login(ctx, body.Username, body.Password)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, identityInfo(session, token))
}

// onTokenLogin logs in with a personal access token.
func (g *gateway) onTokenLogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if decode(w, r, &body) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), httpRequestTimeout)
	defer cancel()
	token, session, err := g.loginToken(ctx, body.Token)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, identityInfo(session, token))
}

func identityInfo(session *httpSession, token string) any {
	return map[string]any{"user_id": session.userID,
		"access_token": map[string]any{"token": token, "expiry": session.expiry.Unix()}}
}

func (g *gateway) onLogout(w http.ResponseWriter, r *http.Request) {
	session, key := g.authenticate(w, r)
	if session == nil {
		return
	}
	g.logout(key)
	w.WriteHeader(http.StatusNoContent)
}

func (g *gateway) systemRoutes(mux *http.ServeMux) {
	g.handle(mux, "GET /stats", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		stats, err := c.GetStats(ctx)
		if err != nil {
			return nil, err
		}
		return statsJSON(stats), nil
	})
	g.handle(mux, "GET /clients", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nonNil(c.GetClients(ctx))
	})
	g.handle(mux, "GET /clients/me", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		return nonNil(c.GetMe(ctx))
	})
	g.handle(mux, "GET /clients/{client_id}", func(w http.ResponseWriter, r *http.Request, ctx context.Context, c *client.Client) (any, error) {
		number, err := strconv.ParseUint(r.PathValue("client_id"), 10, 32)
		if err != nil {
			badRequest(w, "client_id must be a number")
			return nil, errReplied
		}
		return nonNil(c.GetClient(ctx, uint32(number)))
	})
}

// nonNil turns a successful empty result into an empty JSON value rather
// than 204, for reads.
func nonNil[T any](value T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return value, nil
}

func statsJSON(s *wire.Stats) map[string]any {
	return map[string]any{"process_id": s.ProcessID, "cpu_usage": s.CPUUsage, "total_cpu_usage": s.TotalCPUUsage,
		"memory_usage": s.MemoryUsage, "total_memory": s.TotalMemory, "available_memory": s.AvailableMemory,
		"run_time": s.RunTime, "start_time": s.StartTime, "read_bytes": s.ReadBytes, "written_bytes": s.WrittenBytes,
		"messages_size_bytes": s.MessagesSizeBytes, "streams_count": s.StreamsCount, "topics_count": s.TopicsCount,
		"partitions_count": s.PartitionsCount, "segments_count": s.SegmentsCount, "messages_count": s.MessagesCount,
		"clients_count": s.ClientsCount, "consumer_groups_count": s.ConsumerGroupsCount, "hostname": s.Hostname,
		"os_name": s.OSName, "os_version": s.OSVersion, "kernel_version": s.KernelVersion,
		"iggy_server_version": s.ServerVersion, "iggy_server_semver": s.ServerSemver, "threads_count": s.ThreadsCount,
		"free_disk_space": s.FreeDiskSpace, "total_disk_space": s.TotalDiskSpace}
}
