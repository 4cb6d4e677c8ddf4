package shard

import (
	"errors"
	"fmt"
	"time"

	"github.com/whippetio/whippet/engine"
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/internal/invariant"
	"github.com/whippetio/whippet/wire"
)

// metaPlane is shard 0's part of the front: it owns the metadata store
// and the group table, runs every metadata call in arrival order, and
// publishes a new view after each change.
type metaPlane struct {
	front  *front
	store  *metadata.Store
	groups *groupTable
	// cluster is set in cluster mode: writes go through the metadata
	// group (cluster_meta.go) instead of straight to the store.
	cluster *MetaApplication
	// waiting holds calls that arrived before the store opened.
	waiting []*call
	// root is the bootstrap of the root user in cluster mode, while the
	// replicated state has none.
	root rootBootstrap
}

// rootBootstrap creates the root user through the metadata group: a node
// whose store is empty proposes it (again every rootProposePeriod, until
// the state holds a root user); the first proposal to commit creates it on
// every node and the others fail alike (the name exists). A node whose own
// root credentials differ from the committed root user's stops: left
// running it would accept a password its peers reject.
type rootBootstrap struct {
	pending bool
	hash    string // this node's root password hash (the cluster salt)
	timer   TimerID
	armed   bool // timer runs
}

// rootProposePeriod is how often a node re-proposes the root user while
// the metadata group has none: a proposal made before the group had a
// primary was not taken.
const rootProposePeriod = time.Second

// ErrRootCredentials: this node's configured root credentials are not
// those of the cluster's root user.
var ErrRootCredentials = errors.New("shard: root credentials differ from the cluster's")

func newMetaPlane(f *front) *metaPlane {
	return &metaPlane{front: f, groups: newGroupTable(f.server.options.RebalancingTimeout)}
}

// open opens the store on the shard's storage, creates the root user on
// a first start, publishes the first view and reports to StartServer.
func (m *metaPlane) open() {
	server := m.front.server
	storage := server.data.Local(m.front.shard).Storage()
	metadata.OpenStore(storage, server.options.metadataPath(), server.options.Logger, func(store *metadata.Store, err error) {
		if err != nil {
			server.opened <- fmt.Errorf("shard: open metadata: %w", err)
			return
		}
		m.store = store
		if len(store.State().Users) == 0 && server.options.Cluster != nil {
			options := &server.options
			m.root = rootBootstrap{pending: true,
				hash: rootPasswordHash(options.RootUsername, options.RootPassword, m.clusterSecret())}
			m.opened()
			return
		}
		if len(store.State().Users) == 0 {
			m.createRoot()
			return
		}
		m.opened()
	})
	_, err := m.front.shard.Every(time.Second, func(time.Time) {
		if m.groups.expire() {
			m.publish(viewGroupsOnly)
		}
	})
	invariant.Assert(err == nil, "front: the rebalance timer fits")
}

// rootCommand creates the bootstrap root user (id 0, every right).
func (m *metaPlane) rootCommand(hash string) metadata.Command {
	all := wire.AllPermissions()
	permissions := make([]byte, all.EncodedSize())
	all.Encode(permissions)
	return metadata.Command{Kind: metadata.CreateUser, Name: m.front.server.options.RootUsername, Secret: hash,
		Status: uint8(wire.UserActive), HasPermissions: true, Permissions: permissions, CreatedAt: 1}
}

// createRoot creates the root user of a single node in its store.
func (m *metaPlane) createRoot() {
	options := &m.front.server.options
	hash := rootPasswordHash(options.RootUsername, options.RootPassword, m.clusterSecret())
	execution := &metadata.Execution{Command: m.rootCommand(hash)}
	execution.Done = func(e *metadata.Execution) {
		if e.Err != nil {
			options.Fatal(fmt.Errorf("shard: create the root user: %w", e.Err))
			m.front.server.opened <- e.Err
			return
		}
		options.Logger.Info("created the root user", "username", options.RootUsername)
		m.opened()
	}
	m.store.Execute(execution)
}

func (m *metaPlane) ready() {
	m.publish(viewEverything)
	m.front.server.opened <- nil
	waiting := m.waiting
	m.waiting = nil
	for _, c := range waiting {
		m.run(c)
	}
	if m.root.pending {
		m.proposeRoot()
		timer, err := m.front.shard.Every(rootProposePeriod, func(time.Time) { m.proposeRoot() })
		invariant.Assert(err == nil, "front: the root bootstrap timer fits")
		m.root.timer, m.root.armed = timer, true
	}
}

// proposeRoot proposes the root user unless the state holds one by now.
// Nobody waits on the proposal: checkRoot sees its outcome in the state.
func (m *metaPlane) proposeRoot() {
	if m.checkRoot(); !m.root.pending {
		return
	}
	command := m.rootCommand(m.root.hash)
	m.cluster.propose(&call{code: wire.CodeCreateUser}, &command)
}

// checkRoot ends the bootstrap once the state holds the root user (id 0),
// and stops the node when that user is not this node's root.
func (m *metaPlane) checkRoot() {
	if !m.root.pending {
		return
	}
	options := &m.front.server.options
	root := m.store.State().User(0)
	if root == nil {
		return
	}
	m.root.pending = false
	if m.root.armed {
		m.front.shard.Stop(m.root.timer)
		m.root.armed = false
	}
	if root.Username == options.RootUsername && root.PasswordHash == m.root.hash {
		options.Logger.Info("created the root user through the metadata group", "username", root.Username)
		return
	}
	options.Fatal(fmt.Errorf("%w: this node's WHIPPET_ROOT_USERNAME/WHIPPET_ROOT_PASSWORD (%q) are not the "+
		"credentials of the cluster's root user %q; start every node with the cluster's root credentials",
		ErrRootCredentials, options.RootUsername, root.Username))
}

// publish makes the current state the view every shard reads, copying
// again what change names.
func (m *metaPlane) publish(change viewChange) {
	if m.store == nil {
		return // nothing to show before the store opens
	}
	prev := m.front.server.view.Load()
	m.front.server.view.Store(buildView(prev, m.store.State(), m.groups, change))
	m.checkRoot()
}

// changeOf is what a logged command changed.
func changeOf(command *metadata.Command) viewChange {
	switch command.Kind {
	case metadata.CreateUser, metadata.UpdateUser, metadata.DeleteUser, metadata.UpdatePermissions,
		metadata.ChangePassword, metadata.CreatePersonalAccessToken, metadata.DeletePersonalAccessToken:
		return viewChange{stream: -1, users: true}
	}
	return viewChange{stream: int(command.StreamID), groups: true}
}

func (m *metaPlane) close() {
	if m.store == nil {
		return
	}
	m.store.Close(func(err error) {
		if err != nil {
			m.front.server.options.Logger.Warn("close metadata", "err", err.Error())
		}
	})
}

// run executes one metadata call on shard 0.
func (m *metaPlane) run(c *call) {
	if m.waits() {
		m.waiting = append(m.waiting, c)
		return
	}
	view := m.front.server.view.Load()
	switch c.code {
	case wire.CodeJoinConsumerGroup, wire.CodeLeaveConsumerGroup, wire.CodeSyncConsumerGroup:
		m.runGroupMembership(c, view)
		m.reply(c)
		return
	}
	command, ok := m.command(c, view)
	if !ok {
		m.reply(c)
		return
	}
	if m.cluster != nil {
		m.cluster.propose(c, &command)
		return
	}
	execution := &metadata.Execution{Command: command}
	execution.Done = func(e *metadata.Execution) { m.executed(c, e) }
	m.store.Execute(execution)
}

// executed maps the store's outcome and runs what follows a change.
func (m *metaPlane) executed(c *call, e *metadata.Execution) {
	if e.Err != nil {
		if engine.IsFatal(e.Err) {
			m.front.server.fatal(e.Err)
			c.status = wire.StatusError
		} else {
			c.result = metaStatus(c.code, e.Err)
		}
		m.reply(c)
		return
	}
	m.publish(changeOf(&e.Command))
	m.after(c, &e.Command, e.Result)
}

// reply hands the call back to its origin shard.
func (m *metaPlane) reply(c *call) {
	if c.origin == nil {
		return // a replicated command another node proposed: nobody to answer here
	}
	if c.origin == m.front {
		m.front.complete(c)
		return
	}
	m.front.post(c.origin.shard.ID(), Message{Kind: kindCallDone, Data: c})
}

// clientGone removes an ended session from its groups.
func (m *metaPlane) clientGone(gone *clientGone) {
	m.groups.leaveAll(gone.client)
	if m.store != nil {
		m.publish(viewGroupsOnly)
	}
}

// metaStatus maps a store rejection to the committed result (§10).
func metaStatus(code wire.Code, err error) wire.Status {
	switch {
	case errors.Is(err, metadata.ErrStreamNotFound):
		return wire.StatusStreamIDNotFound
	case errors.Is(err, metadata.ErrStreamNameExists):
		return wire.StatusStreamNameAlreadyExists
	case errors.Is(err, metadata.ErrTopicNotFound):
		return wire.StatusTopicIDNotFound
	case errors.Is(err, metadata.ErrTopicNameExists):
		return wire.StatusTopicNameAlreadyExists
	case errors.Is(err, metadata.ErrTooManyStreams):
		return wire.StatusTooManyStreams
	case errors.Is(err, metadata.ErrTooManyTopics):
		return wire.StatusTooManyTopics
	case errors.Is(err, metadata.ErrTooManyPartitions):
		if code == wire.CodeDeletePartitions {
			return wire.StatusInvalidPartitionsCount
		}
		return wire.StatusTooManyPartitions
	case errors.Is(err, metadata.ErrUserNotFound), errors.Is(err, metadata.ErrTokenNotFound):
		return wire.StatusResourceNotFound
	case errors.Is(err, metadata.ErrUsernameExists):
		return wire.StatusUserAlreadyExists
	case errors.Is(err, metadata.ErrTooManyUsers):
		return wire.StatusUsersLimitReached
	case errors.Is(err, metadata.ErrTokenNameExists):
		return wire.StatusPersonalAccessTokenAlreadyExists
	case errors.Is(err, metadata.ErrTooManyTokens):
		return wire.StatusPersonalAccessTokensLimitReached
	case errors.Is(err, metadata.ErrGroupNotFound):
		return wire.StatusConsumerGroupIDNotFound
	case errors.Is(err, metadata.ErrGroupNameExists):
		return wire.StatusConsumerGroupNameAlreadyExists
	case errors.Is(err, metadata.ErrRootUser):
		return wire.StatusCannotDeleteUser
	case errors.Is(err, metadata.ErrInvalidName):
		return invalidNameStatus(code)
	case errors.Is(err, metadata.ErrCommandTooLarge):
		return wire.StatusInvalidCommand
	}
	return wire.StatusError
}

func invalidNameStatus(code wire.Code) wire.Status {
	switch code {
	case wire.CodeCreateStream, wire.CodeUpdateStream:
		return wire.StatusInvalidStreamName
	case wire.CodeCreateTopic, wire.CodeUpdateTopic:
		return wire.StatusInvalidTopicName
	case wire.CodeCreateUser, wire.CodeUpdateUser:
		return wire.StatusInvalidUsername
	case wire.CodeCreatePersonalAccessToken, wire.CodeDeletePersonalAccessToken:
		return wire.StatusInvalidPersonalAccessTokenName
	case wire.CodeCreateConsumerGroup:
		return wire.StatusInvalidConsumerGroupName
	}
	return wire.StatusInvalidCommand
}
