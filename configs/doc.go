// Package configs loads the server configuration: the embedded default
// server.toml, a file merged over it, then WHIPPET_* environment overrides,
// and validates the result into values the other rooms take as options.
//
// Invariants:
//  1. Every key of the embedded default is a field of Config, and every field
//     has a default there (TestDefaultLoads fails on drift).
//  2. An unknown key in a file, a value of the wrong kind or out of range is
//     an error wrapping ErrInvalid whose message names the key.
//  3. An unknown WHIPPET_ variable is a warning, not an error: environments
//     carry variables for other tools of the same name space.
//  4. Loading never writes anything.
//  5. With [cluster] enabled, every node has a name and client and replica
//     addresses with nonzero ports, none shared with another node, and the
//     vsr cluster id is ClusterID(cluster.name) on every node.
package configs
