package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/whippetio/whippet/client"
	"github.com/whippetio/whippet/configs"
	"github.com/whippetio/whippet/shard"
)

// fronts are the Go-side listeners in front of the shards: the TLS
// terminator of the TCP protocol and the HTTP API.
type fronts struct {
	proxy   *tlsProxy
	gateway *gateway
	http    *http.Server
	admin   *client.Client
	adminMu sync.Mutex
}

// startFronts starts what config enables; shards is the address the
// shards listen on; view is the replication layer of a clustered node
// (nil on a single node). A front that cannot listen fails the start.
func startFronts(config *configs.Config, server *shard.Server, view shard.ClusterView, root configs.Credentials, logger *slog.Logger) (*fronts, error) {
	runtime := server.Runtime()
	f := &fronts{}
	if config.TCP.Enabled && config.TCP.TLS.Enabled {
		tlsConfig, err := loadTLS(config.TCP.TLS.CertFile, config.TCP.TLS.KeyFile)
		if err != nil {
			return nil, err
		}
		if f.proxy, err = startTLSProxy(config.TCP.Address, runtime, tlsConfig, logger); err != nil {
			return nil, err
		}
		logger.Info("tcp tls listening", "tls_address", f.proxy.listener.Addr().String())
	}
	if !config.HTTP.Enabled {
		return f, nil
	}
	if err := f.startHTTP(config, server, view, root, logger); err != nil {
		// An operator who enabled the API relies on it (health checks,
		// metrics): a taken address fails the start rather than leaving a
		// broker that looks healthy to its clients and dark to its monitors.
		f.close()
		return nil, fmt.Errorf("http.address %s: %w", config.HTTP.Address, err)
	}
	return f, nil
}

func (f *fronts) startHTTP(config *configs.Config, server *shard.Server, view shard.ClusterView, root configs.Credentials, logger *slog.Logger) error {
	gateway, err := newGateway(shardsDialer(server.Runtime()), []byte(config.HTTP.JWT.EncodingSecret), config.HTTP.JWT.AccessTokenExpiry.Std(),
		int64(config.HTTP.MaxRequestSize), logger)
	if err != nil {
		return err
	}
	gateway.credential = server.CredentialStamp
	gateway.durability = server.AckDurability
	f.gateway = gateway
	var tlsConfig *tls.Config
	if config.HTTP.TLS.Enabled {
		if tlsConfig, err = loadTLS(config.HTTP.TLS.CertFile, config.HTTP.TLS.KeyFile); err != nil {
			return err
		}
	}
	handler := gateway.routes()
	if config.HTTP.Metrics.Enabled {
		gateway.metrics = newMetrics(func(ctx context.Context) (*client.Client, error) {
			return f.adminClient(ctx, server.Runtime(), root)
		})
		gateway.metrics.registry.MustRegister(&shardCollector{shards: server.Runtime().Shards()}, &latencyCollector{server: server},
			&fileCollector{shards: server.Runtime().Shards()}, &appendCollector{server: server})
		if clustered, ok := view.(clusterView); ok {
			gateway.metrics.registry.MustRegister(&clusterCollector{view: clustered, names: clustered.names})
		}
		mux := http.NewServeMux()
		mux.Handle("GET "+config.HTTP.Metrics.Endpoint, promhttp.HandlerFor(gateway.metrics.registry, promhttp.HandlerOpts{}))
		mux.Handle("/", handler)
		handler = mux
	}
	httpServer, listener, err := gateway.listen(config.HTTP.Address, tlsConfig, handler)
	if err != nil {
		return err
	}
	f.http = httpServer
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	logger.Info("http listening", "http_address", listener.Addr().String(), "scheme", scheme)
	return nil
}

// adminClient is the metrics session, logged in as the root user.
func (f *fronts) adminClient(ctx context.Context, runtime *shard.Runtime, root configs.Credentials) (*client.Client, error) {
	f.adminMu.Lock()
	defer f.adminMu.Unlock()
	if f.admin != nil {
		return f.admin, nil
	}
	c, err := client.Dial(ctx, client.Options{Address: shardsAddress, Dial: shardsDialer(runtime),
		Username: root.Username, Password: root.Password, ReconnectAttempts: 3, ReplyTimeout: httpRequestTimeout})
	if err != nil {
		return nil, err
	}
	f.admin = c
	return c, nil
}

// close stops the fronts before the shards shut down.
func (f *fronts) close() {
	if f.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.http.Shutdown(ctx) // in-flight requests end with the shards anyway
	}
	if f.gateway != nil {
		f.gateway.close()
	}
	f.adminMu.Lock()
	if f.admin != nil {
		_ = f.admin.Close() // the server forgets the session
	}
	f.adminMu.Unlock()
	if f.proxy != nil {
		f.proxy.close()
	}
}
