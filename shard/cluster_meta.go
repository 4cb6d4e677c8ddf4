package shard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/crypto/argon2"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/vsr"
	"github.com/whippetio/whippet/wire"
)

// In cluster mode every metadata write goes through the metadata group
// (group 0, on shard 0 of every node). The node that receives a write
// builds its command as a single node does (identifiers resolved and
// rights checked against its view; timestamps, password hashes and token
// hashes stamped), encodes it (metadata.EncodeCommand) and proposes it as
// a request of its own vsr client. Every node applies committed commands
// in op order through its store and runs the same data-plane follow-ups;
// the proposing node answers when it applies its own request, with the
// result its store produced. Memberships and sessions stay node-local.

// Metadata group identity and operations.
const (
	// MetaGroup is the metadata group's vsr group id.
	MetaGroup uint64 = 0
	// MetaOperation is the vsr operation of a metadata command.
	MetaOperation uint8 = 1
)

// MetaApplication is the metadata plane as the application of group 0
// (ClusterApplication): the host hands it committed entries and state
// transfers and serves snapshots from it; it proposes this node's writes.
// Every method runs on shard 0.
type MetaApplication struct {
	plane *metaPlane
	group *ClusterGroup // set once the group opened
	// entries are committed entries of the batch being applied, one at
	// a time and in op order; done ends the batch.
	entries []vsr.Entry
	done    func()
}

var _ ClusterApplication = (*MetaApplication)(nil)

// Recover returns the op the metadata store's state reflects: the store
// logs each command with its op, so the application record is not used.
func (a *MetaApplication) Recover(g *ClusterGroup, _ []byte) (uint64, error) {
	invariant.Assert(g.ID() == MetaGroup, "the metadata application runs group 0")
	a.group = g
	return a.appliedOp(), nil
}

func (a *MetaApplication) appliedOp() uint64 { return a.plane.store.State().AppliedOp }

// Snapshot appends the applied state to dst (vsr.Snapshotter).
func (a *MetaApplication) Snapshot(dst []byte) []byte { return a.plane.store.ExportSnapshot(dst) }

// Apply runs committed entries through the store in order, then calls
// done. A command every node rejects alike (Prepare fails on the same
// state) counts as applied.
func (a *MetaApplication) Apply(g *ClusterGroup, entries []vsr.Entry, done func()) {
	invariant.Assert(a.done == nil, "one batch at a time")
	a.entries, a.done = entries, done
	a.kick()
}

// kick starts the next entry; entries that finish at once are handled
// in the loop rather than by recursion.
func (a *MetaApplication) kick() {
	for len(a.entries) > 0 {
		entry := &a.entries[0]
		a.entries = a.entries[1:]
		c := a.callOf(entry)
		if entry.Op <= a.appliedOp() {
			// Applied before a restart and handed again; a request of this
			// node cannot be among them, but would be answered from the state.
			if c.origin != nil {
				a.answerApplied(c, entry)
			}
			continue
		}
		if a.applyEntry(entry, c) {
			return
		}
	}
	done := a.done
	a.entries, a.done = nil, nil
	done()
}

// applyEntry starts one entry; false when it finished at once.
func (a *MetaApplication) applyEntry(entry *vsr.Entry, c *call) bool {
	m := a.plane
	command, err := metadata.DecodeCommand(entry.Body)
	if err != nil || entry.Operation != MetaOperation {
		// Every node holds the same bytes and refuses them alike.
		m.front.server.options.Logger.Error("metadata: undecodable committed entry", "op", entry.Op)
		if c.origin != nil {
			c.status = wire.StatusError
			m.reply(c)
		}
		return false
	}
	if c.origin == nil {
		c.code = codeOfKind(command.Kind)
	}
	command.Op = entry.Op
	c.ranges = m.rangesOf(&command)
	execution := &metadata.Execution{Command: command}
	execution.Done = func(e *metadata.Execution) {
		m.executed(c, e)
		if e.Err != nil && engine.IsFatal(e.Err) {
			return // the runtime stops; the batch never ends
		}
		a.kick()
	}
	m.store.Execute(execution)
	return true
}

// callOf is this node's call that entry commits, or a detached call (no
// origin: nothing to answer here) for a command another node proposed.
func (a *MetaApplication) callOf(entry *vsr.Entry) *call {
	if request := a.group.Claim(entry); request != nil {
		return request.Context.(*call)
	}
	return &call{}
}

// propose submits a write built on this node to the group. A write the
// group does not take is answered 58: nothing left this node, so it
// cannot commit, and the client retries (PROTOCOL.md §11).
func (a *MetaApplication) propose(c *call, command *metadata.Command) {
	if a.group == nil {
		c.status = wire.StatusTransientNotAccepted
		a.plane.reply(c)
		return
	}
	body, err := metadata.EncodeCommand(command)
	if err != nil {
		c.result = metaStatus(c.code, err)
		a.plane.reply(c)
		return
	}
	message := make([]byte, vsr.HeaderBytes+len(body))
	copy(message[vsr.HeaderBytes:], body)
	request := &ClusterRequest{Operation: MetaOperation, Message: message, Failed: a.failed, Context: c}
	if err := a.group.Submit(request); err != nil {
		c.status = wire.StatusTransientNotAccepted
		a.plane.reply(c)
	}
}

// answerApplied answers c, whose entry the state already reflects.
func (a *MetaApplication) answerApplied(c *call, entry *vsr.Entry) {
	command, err := metadata.DecodeCommand(entry.Body)
	if err == nil && a.plane.answerFromState(c, &command) {
		return
	}
	c.status = wire.StatusError
	a.plane.reply(c)
}

// failed answers a write that will not be claimed here: one never
// proposed with 58; one whose outcome is unknown (a state transfer hid
// it, or it waited past the host's request lifetime) with what the state
// shows of it, when it shows it; otherwise with an error.
func (a *MetaApplication) failed(request *ClusterRequest, err error) {
	c := request.Context.(*call)
	if errors.Is(err, ErrClusterNotAccepted) {
		c.status = wire.StatusTransientNotAccepted
		a.plane.reply(c)
		return
	}
	if errors.Is(err, ErrClusterOutcomeUnknown) {
		command, decodeErr := metadata.DecodeCommand(request.Message[vsr.HeaderBytes:])
		if decodeErr == nil && a.plane.answerFromState(c, &command) {
			return
		}
	}
	c.status = wire.StatusError
	a.plane.reply(c)
}

// codeOfKind names the request a command stems from, for the logs of a
// command proposed on another node.
func codeOfKind(kind metadata.Kind) wire.Code { return kindCodes[kind] }

var kindCodes = map[metadata.Kind]wire.Code{
	metadata.CreateStream: wire.CodeCreateStream, metadata.UpdateStream: wire.CodeUpdateStream,
	metadata.DeleteStream: wire.CodeDeleteStream, metadata.PurgeStream: wire.CodePurgeStream,
	metadata.CreateTopic: wire.CodeCreateTopic, metadata.UpdateTopic: wire.CodeUpdateTopic,
	metadata.DeleteTopic: wire.CodeDeleteTopic, metadata.PurgeTopic: wire.CodePurgeTopic,
	metadata.CreatePartitions: wire.CodeCreatePartitions, metadata.DeletePartitions: wire.CodeDeletePartitions,
	metadata.CreateUser: wire.CodeCreateUser, metadata.UpdateUser: wire.CodeUpdateUser,
	metadata.DeleteUser: wire.CodeDeleteUser, metadata.UpdatePermissions: wire.CodeUpdatePermissions,
	metadata.ChangePassword:            wire.CodeChangePassword,
	metadata.CreatePersonalAccessToken: wire.CodeCreatePersonalAccessToken,
	metadata.DeletePersonalAccessToken: wire.CodeDeletePersonalAccessToken,
	metadata.CreateConsumerGroup:       wire.CodeCreateConsumerGroup,
	metadata.DeleteConsumerGroup:       wire.CodeDeleteConsumerGroup,
}

// rootPasswordHash is the root user's password hash for the bootstrap
// record. Without a cluster the salt is random. In cluster mode every node
// writes the bootstrap record on its own at its first start, and the
// replicated states must be byte-identical, so the salt is derived from
// the cluster's shared secret (unknown outside the cluster) and the
// username: every node stores the same hash.
func rootPasswordHash(username, password string, clusterSecret []byte) string {
	if len(clusterSecret) == 0 {
		return hashPassword(password)
	}
	mac := hmac.New(sha256.New, clusterSecret)
	mac.Write([]byte("whippet root password salt\x00" + username))
	salt := mac.Sum(nil)[:argonSaltBytes]
	return hashPasswordSalted(password, salt)
}

// hashPasswordSalted is hashPassword's PHC string with a given salt.
func hashPasswordSalted(password string, salt []byte) string {
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyBytes)
	encoding := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime,
		argonThreads, encoding.EncodeToString(salt), encoding.EncodeToString(key))
}

// clusterSecret keys the bootstrap root salt in cluster mode (nil on a
// single node): the replicas' shared secret, or else the cluster's name
// and id, which every node also shares.
func (m *metaPlane) clusterSecret() []byte {
	options := &m.front.server.options
	switch {
	case options.Cluster == nil:
		return nil
	case len(options.Roster.Secret) > 0:
		return options.Roster.Secret
	}
	return binary.LittleEndian.AppendUint64([]byte(options.ClusterName), options.Cluster.Options().Cluster)
}

// waits reports whether a call must wait for the plane to open: for the
// store, and in cluster mode for the metadata group too, because a write
// run before it would change this node's state alone.
func (m *metaPlane) waits() bool {
	return m.store == nil || m.front.server.options.Cluster != nil && m.cluster == nil
}

// opened follows the store's opening: in cluster mode the metadata group
// opens on shard 0 first (its replica resumes from the store's applied
// op), then the plane serves.
func (m *metaPlane) opened() {
	cluster := m.front.server.options.Cluster
	if cluster == nil {
		m.ready()
		return
	}
	application := &MetaApplication{plane: m}
	config := GroupConfig{Group: MetaGroup, Application: application, Sync: true}
	cluster.Local(m.front.shard).Open(config, func(_ *ClusterGroup, err error) {
		if err != nil {
			m.front.server.opened <- fmt.Errorf("shard: open the metadata group: %w", err)
			return
		}
		m.cluster = application
		m.ready()
	})
}
