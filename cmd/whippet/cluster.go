package main

import (
	"context"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/whippetio/whippet/client"
)

type clusterNodeView struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Role    string `json:"role"`
	Status  string `json:"status"`
}

type clusterView struct {
	Name  string            `json:"name"`
	Nodes []clusterNodeView `json:"nodes"`
}

func (a *app) clusterCommand() *cobra.Command {
	metadata := &cobra.Command{Use: "metadata", Short: "list the cluster's nodes, their roles and health",
		Args: exactArgs(0), RunE: a.action(func(ctx context.Context, c *client.Client, _ []string) error {
			metadata, err := c.GetClusterMetadata(ctx)
			if err != nil {
				return err
			}
			view := clusterView{Name: metadata.Name, Nodes: make([]clusterNodeView, len(metadata.Nodes))}
			t := table{value: &view, headers: []string{"NAME", "ADDRESS", "ROLE", "STATUS"}}
			for i, node := range metadata.Nodes {
				view.Nodes[i] = clusterNodeView{Name: node.Name,
					Address: net.JoinHostPort(node.IP, strconv.Itoa(int(node.TCPPort))),
					Role:    node.Role.String(), Status: node.Status.String()}
				row := view.Nodes[i]
				t.rows = append(t.rows, []string{row.Name, row.Address, row.Role, row.Status})
			}
			return a.emit(t)
		})}
	return group("cluster", "inspect the cluster", nil, metadata)
}
