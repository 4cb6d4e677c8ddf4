package shard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

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

// metaProposalsMax bounds the metadata writes a node queues behind the
// one in flight; beyond it a write is answered 58 (nothing was sent).
const metaProposalsMax = 1024

// metaResendDefault is how often an unanswered proposal is sent again
// when the host names no interval.
const metaResendDefault = 250 * time.Millisecond

// MetaGroupHost is what the metadata plane needs of the host of group 0
// (shard/cluster_host*.go); it is called on shard 0 only.
type MetaGroupHost interface {
	// Propose hands one request of client to the group: a Step at the
	// local replica when it is the primary, else a send to the primary
	// it knows. The host copies body. false means nothing was sent (no
	// primary known, a view change, a full queue): the request cannot
	// commit from this attempt.
	Propose(client, request uint64, operation uint8, body []byte) bool
}

// MetaApplication is the metadata plane as the application of group 0:
// the host hands it committed entries and state transfers, and serves
// snapshots from it. Every method runs on shard 0.
type MetaApplication struct {
	plane  *metaPlane
	host   MetaGroupHost
	client uint64
	// request is the last request number this node's client sent.
	request uint64
	// queue holds writes waiting to be proposed. One is in flight at a
	// time: vsr drops a client's request older than one it committed, so
	// overlapping requests of one client could lose the older one.
	queue  []metaProposal
	flight metaProposal
	flying bool
	// entries are committed entries not yet through the store; they run
	// one at a time, in op order.
	entries  []metaEntry
	applying bool
}

type metaProposal struct {
	c       *call
	request uint64
	body    []byte
}

type metaEntry struct {
	op, client, request uint64
	operation           uint8
	body                []byte
	snapshot            []byte
	done                func(error)
}

// MetaClient is the vsr client id of node's metadata proposals in this
// incarnation: bits 56..63 name the node (node+1), bits 48..55 the shard
// (0), and the low bits are random, so request numbers can restart at 1
// after a restart without colliding with the client table's old row.
func MetaClient(node int) uint64 {
	invariant.Assert(node >= 0 && node < 255, "a node index fits the client id")
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // crypto/rand never fails on Linux (getrandom)
	return uint64(node+1)<<56 | binary.LittleEndian.Uint64(nonce[:])&(1<<48-1) | 1
}

// AttachCluster switches the metadata plane to cluster mode: from now on
// writes are proposed through host, and the returned application is what
// the host of group 0 applies committed entries to. node is this node's
// replica index; resend is how often an unanswered proposal is sent again
// (0: metaResendDefault). Call it on shard 0 once the store is open
// (MetaOpen), before the group's replica is opened with AppliedOp.
func (s *Server) AttachCluster(host MetaGroupHost, node int, resend time.Duration) *MetaApplication {
	m := s.fronts[0].meta
	invariant.Assert(m != nil && m.store != nil, "the cluster attaches to an open metadata plane")
	invariant.Assert(m.cluster == nil, "the cluster attaches once")
	if resend <= 0 {
		resend = metaResendDefault
	}
	application := &MetaApplication{plane: m, host: host, client: MetaClient(node)}
	m.cluster = application
	_, err := m.front.shard.Every(resend, application.resend)
	invariant.Assert(err == nil, "the metadata resend timer fits")
	return application
}

// AppliedOp is the op the metadata store's state reflects: the replica of
// group 0 opens with it (vsr.Config.AppliedOp).
func (a *MetaApplication) AppliedOp() uint64 { return a.plane.store.State().AppliedOp }

// Snapshot appends the applied state to dst (vsr.Snapshotter).
func (a *MetaApplication) Snapshot(dst []byte) []byte { return a.plane.store.ExportSnapshot(dst) }

// Apply runs one committed entry through the store after those handed
// earlier; done runs once it is applied (durable in the store, the view
// published) or rejected alike on every node. entry.Body is copied.
func (a *MetaApplication) Apply(entry vsr.Entry, done func(error)) {
	a.entries = append(a.entries, metaEntry{op: entry.Op, client: entry.Client, request: entry.Request,
		operation: entry.Operation, body: append([]byte(nil), entry.Body...), done: done})
	a.kick()
}

// Restore installs a state transfer (Ready.Snapshot as of op) after the
// entries handed earlier; done runs once the state is durable and the
// data plane follows it.
func (a *MetaApplication) Restore(snapshot []byte, op uint64, done func(error)) {
	a.entries = append(a.entries, metaEntry{op: op, snapshot: append([]byte(nil), snapshot...), done: done})
	a.kick()
}

func (a *MetaApplication) kick() {
	for !a.applying && len(a.entries) > 0 {
		entry := a.entries[0]
		a.entries[0] = metaEntry{}
		a.entries = a.entries[1:]
		if entry.snapshot != nil {
			a.applying = true
			a.restore(entry)
			continue
		}
		if entry.op <= a.AppliedOp() {
			entry.done(nil) // applied before a restart: handed again
			continue
		}
		a.applying = a.applyEntry(entry)
	}
}

// applyEntry starts one entry; false when it finished at once.
func (a *MetaApplication) applyEntry(entry metaEntry) bool {
	m := a.plane
	c := a.callOf(entry)
	command, err := metadata.DecodeCommand(entry.body)
	if err != nil || entry.operation != MetaOperation {
		// Every node holds the same bytes and refuses them alike.
		m.front.server.options.Logger.Error("metadata: undecodable committed entry", "op", entry.op)
		if c.origin != nil {
			c.status = wire.StatusError
			m.reply(c)
		}
		entry.done(nil)
		return false
	}
	if c.origin == nil {
		c.code = codeOfKind(command.Kind)
	}
	command.Op = entry.op
	c.ranges = m.rangesOf(&command)
	execution := &metadata.Execution{Command: command}
	execution.Done = func(e *metadata.Execution) {
		m.executed(c, e)
		a.applying = false
		err := e.Err
		if err != nil && !engine.IsFatal(err) {
			err = nil // a rejection every node makes alike
		}
		entry.done(err)
		a.kick()
	}
	m.store.Execute(execution)
	return true
}

// callOf is this node's call waiting for entry, or a detached call (no
// origin: nothing to answer) for a command proposed elsewhere.
func (a *MetaApplication) callOf(entry metaEntry) *call {
	if a.flying && entry.client == a.client && entry.request == a.flight.request {
		c := a.flight.c
		a.flight, a.flying = metaProposal{}, false
		a.next()
		return c
	}
	return &call{}
}

// propose queues a write built on this node.
func (a *MetaApplication) propose(c *call, command *metadata.Command) {
	if len(a.queue) >= metaProposalsMax {
		c.status = wire.StatusTransientNotAccepted
		a.plane.reply(c)
		return
	}
	a.queue = append(a.queue, metaProposal{c: c, body: metadata.EncodeCommand(command)})
	a.next()
}

// next sends the oldest queued write when none is in flight. A write the
// host cannot send is answered 58: nothing left this node, so it cannot
// commit, and the client retries (PROTOCOL.md §11).
func (a *MetaApplication) next() {
	for !a.flying && len(a.queue) > 0 {
		p := a.queue[0]
		a.queue[0] = metaProposal{}
		a.queue = a.queue[1:]
		p.request = a.request + 1
		if !a.host.Propose(a.client, p.request, MetaOperation, p.body) {
			p.c.status = wire.StatusTransientNotAccepted
			a.plane.reply(p.c)
			continue
		}
		a.request = p.request
		a.flight, a.flying = p, true
	}
}

// resend sends the write in flight again: it may be lost, or the primary
// changed. vsr's client table answers a duplicate of a committed request,
// and a refusal leaves the write in flight, because it may have committed.
func (a *MetaApplication) resend(time.Time) {
	if a.flying {
		_ = a.host.Propose(a.client, a.flight.request, MetaOperation, a.flight.body) // retried next period
	}
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

// clusterSecret is the cluster's shared secret in cluster mode, else nil.
func (m *metaPlane) clusterSecret() []byte { return nil }
