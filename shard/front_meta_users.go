package shard

import (
	"github.com/whippetio/whippet/engine/metadata"
	"github.com/whippetio/whippet/wire"
)

// prepareMeta checks what needs no metadata and does the slow work of a
// metadata write on the connection's shard (argon2id hashing, token
// minting), so that shard 0 spends its time on the log alone. It returns
// false when the call is answered already.
func (f *front) prepareMeta(c *call) bool {
	switch request := c.body.(type) {
	case *wire.CreateStream:
		return checkStatus(c, wire.CheckNoOptions(request.Options))
	case *wire.UpdateStream:
		return checkStatus(c, wire.CheckNoOptions(request.Options))
	case *wire.CreateTopic:
		if request.PartitionsCount > partitionsPerRequestMax {
			c.status = wire.StatusTooManyPartitions
			return false
		}
	case *wire.PartitionsChange:
		if request.PartitionsCount == 0 || request.PartitionsCount > partitionsPerRequestMax {
			c.status = wire.StatusTooManyPartitions
			return false
		}
	case *wire.CreateUser:
		return f.prepareCreateUser(c, request)
	case *wire.UpdateUser:
		if request.HasUsername && !validUsername(request.Username) {
			c.status = wire.StatusInvalidUsername
			return false
		}
		return checkStatus(c, wire.CheckNoOptions(request.Options))
	case *wire.ChangePassword:
		return f.prepareChangePassword(c, request)
	case *wire.CreatePersonalAccessToken:
		c.secret = newToken()
	}
	return true
}

func checkStatus(c *call, err error) bool {
	if err != nil {
		c.status = decodeStatus(err)
		return false
	}
	return true
}

func validUsername(name string) bool {
	return len(name) >= usernameBytesMin && len(name) <= usernameBytesMax
}

func validPassword(password string) bool {
	return len(password) >= passwordBytesMin && len(password) <= passwordBytesMax
}

func (f *front) prepareCreateUser(c *call, request *wire.CreateUser) bool {
	switch {
	case !validUsername(request.Username):
		c.status = wire.StatusInvalidUsername
	case !validPassword(request.Password):
		c.status = wire.StatusInvalidPassword
	case request.Status != wire.UserActive && request.Status != wire.UserInactive:
		c.status = wire.StatusInvalidUserStatus
	case !f.server.view.Load().access(c.userID).manageUsers():
		c.status = wire.StatusUnauthorized
	default:
		if !checkStatus(c, wire.CheckNoOptions(request.Options)) {
			return false
		}
		c.secret = hashPassword(request.Password)
		return true
	}
	return false
}

// prepareChangePassword verifies the current password here, against the
// view, because argon2id is slow: a wrong one is a committed 42 (§10).
func (f *front) prepareChangePassword(c *call, request *wire.ChangePassword) bool {
	view := f.server.view.Load()
	user := view.userOf(request.User)
	switch {
	case user == nil:
		c.result = wire.StatusResourceNotFound
	case user.ID != c.userID && !view.access(c.userID).manageUsers():
		c.status = wire.StatusUnauthorized
	case !validPassword(request.NewPassword):
		c.status = wire.StatusInvalidPassword
	case !f.verifyPassword(request.CurrentPassword, user.PasswordHash):
		c.result = wire.StatusInvalidCredentials
	default:
		c.secret = hashPassword(request.NewPassword)
		return true
	}
	return false
}

// userCommand builds user commands on shard 0.
func (m *metaPlane) userCommand(c *call, view *frontView, access access, command metadata.Command) (
	metadata.Command, bool) {
	if request, ok := c.body.(*wire.CreateUser); ok {
		command.Kind, command.Name, command.Secret = metadata.CreateUser, request.Username, c.secret
		command.Status = uint8(request.Status)
		command.HasPermissions, command.Permissions = permissionBytes(request.Permissions)
		return command, true
	}
	var target wire.Identifier
	switch request := c.body.(type) {
	case *wire.UpdateUser:
		target, command.Kind = request.User, metadata.UpdateUser
		command.HasName, command.Name = request.HasUsername, request.Username
		command.HasStatus, command.Status = request.HasStatus, uint8(request.Status)
	case *wire.UserTarget:
		target, command.Kind = request.User, metadata.DeleteUser
	case *wire.UpdatePermissions:
		target, command.Kind = request.User, metadata.UpdatePermissions
		command.HasPermissions, command.Permissions = permissionBytes(request.Permissions)
	case *wire.ChangePassword:
		target, command.Kind, command.Secret = request.User, metadata.ChangePassword, c.secret
	}
	user := view.userOf(target)
	switch {
	case user == nil:
		c.result = wire.StatusResourceNotFound
	case command.Kind == metadata.ChangePassword && user.ID != c.userID && !access.manageUsers():
		c.status = wire.StatusUnauthorized
	case command.Kind != metadata.ChangePassword && !access.manageUsers():
		c.status = wire.StatusUnauthorized
	case command.Kind == metadata.UpdatePermissions && user.ID == rootUserID:
		c.result = wire.StatusCannotChangePermissions
	case command.Kind == metadata.DeleteUser && user.ID == rootUserID:
		c.result = wire.StatusCannotDeleteUser
	case command.Kind == metadata.UpdateUser && command.HasStatus && user.ID == rootUserID:
		c.result = wire.StatusCannotChangePermissions
	default:
		command.UserID = user.ID
		return command, true
	}
	return command, false
}

func permissionBytes(permissions *wire.Permissions) (bool, []byte) {
	if permissions == nil {
		return false, nil
	}
	encoded := make([]byte, permissions.EncodedSize())
	permissions.Encode(encoded)
	return true, encoded
}

// after runs what follows a logged change (data-plane partitions, group
// rebalances) and builds the success payload.
func (m *metaPlane) after(c *call, command *metadata.Command, result metadata.Result) {
	view := m.front.server.view.Load()
	switch command.Kind {
	case metadata.CreateStream:
		info := m.front.streamInfo(view.stream(result.StreamID))
		c.payload = &info
	case metadata.CreateUser:
		c.payload = userDetails(view.user(result.UserID))
	case metadata.CreatePersonalAccessToken:
		c.payload = &wire.RawToken{Token: c.secret}
	case metadata.CreateConsumerGroup:
		topic := view.stream(command.StreamID).Topics[command.TopicID]
		info := groupInfo(topic, topic.Group(result.GroupID), nil)
		c.payload = &info
	case metadata.DeleteUser, metadata.UpdateUser:
		if command.Kind == metadata.DeleteUser || command.HasStatus && command.Status != uint8(wire.UserActive) {
			for shardID := range m.front.server.fronts {
				m.front.post(shardID, Message{Kind: kindUserGone, Value: uint64(command.UserID)})
			}
		}
	case metadata.DeleteConsumerGroup:
		key := metadata.GroupKey{StreamID: command.StreamID, TopicID: command.TopicID, GroupID: command.GroupID}
		m.dropGroups(func(k metadata.GroupKey) bool { return k == key })
	case metadata.CreateTopic, metadata.CreatePartitions, metadata.DeletePartitions, metadata.DeleteTopic,
		metadata.DeleteStream, metadata.PurgeTopic, metadata.PurgeStream, metadata.UpdateTopic:
		m.afterPartitions(c, command, result, view)
		return
	}
	m.reply(c)
}

// dropGroups forgets the memberships of deleted groups.
func (m *metaPlane) dropGroups(match func(metadata.GroupKey) bool) {
	for key, group := range m.groups.groups {
		if !match(key) {
			continue
		}
		entry := wire.ClientGroup{StreamID: key.StreamID, TopicID: key.TopicID, GroupID: key.GroupID}
		for _, member := range group.members {
			m.front.server.clients.setGroup(member.sessionID, entry, false)
		}
		m.groups.drop(key)
	}
	m.publish(viewGroupsOnly)
}
