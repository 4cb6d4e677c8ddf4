package metadata

import "github.com/whippetio/whippet/internal/invariant"

func validUsername(name string) bool {
	return len(name) >= usernameBytesMin && len(name) <= usernameBytesMax
}

func prepareCreateUser(s *State, c *Command) error {
	if !validUsername(c.Name) {
		return ErrInvalidName
	}
	if s.UserByName(c.Name) != nil {
		return ErrUsernameExists
	}
	id := lowestFree(s.Users)
	if id >= usersMax {
		return ErrTooManyUsers
	}
	c.UserID = uint32(id)
	return nil
}

func applyCreateUser(s *State, c *Command) Result {
	invariant.Assert(s.User(c.UserID) == nil, "created user slot is free")
	s.Users = place(s.Users, int(c.UserID), &User{
		ID: c.UserID, Username: c.Name, PasswordHash: c.Secret, Status: c.Status,
		HasPermissions: c.HasPermissions, Permissions: append([]byte(nil), c.Permissions...), CreatedAt: c.CreatedAt,
	})
	return Result{UserID: c.UserID}
}

func prepareUserExists(s *State, c *Command) error {
	if s.User(c.UserID) == nil {
		return ErrUserNotFound
	}
	return nil
}

func prepareUpdateUser(s *State, c *Command) error {
	if err := prepareUserExists(s, c); err != nil {
		return err
	}
	if !c.HasName {
		return nil
	}
	if !validUsername(c.Name) {
		return ErrInvalidName
	}
	if other := s.UserByName(c.Name); other != nil && other.ID != c.UserID {
		return ErrUsernameExists
	}
	return nil
}

func applyUpdateUser(s *State, c *Command) Result {
	user := s.User(c.UserID)
	if c.HasName {
		user.Username = c.Name
	}
	if c.HasStatus {
		user.Status = c.Status
	}
	return Result{UserID: c.UserID}
}

func prepareDeleteUser(s *State, c *Command) error {
	if c.UserID == 0 && s.User(0) != nil {
		return ErrRootUser
	}
	return prepareUserExists(s, c)
}

func applyDeleteUser(s *State, c *Command) Result {
	s.Users[c.UserID] = nil
	s.Users = trim(s.Users)
	return Result{UserID: c.UserID}
}

func applyUpdatePermissions(s *State, c *Command) Result {
	user := s.User(c.UserID)
	user.HasPermissions = c.HasPermissions
	user.Permissions = append([]byte(nil), c.Permissions...)
	return Result{UserID: c.UserID}
}

func applyChangePassword(s *State, c *Command) Result {
	s.User(c.UserID).PasswordHash = c.Secret
	return Result{UserID: c.UserID}
}

// HasToken reports whether the user holds a personal access token named name.
func (u *User) HasToken(name string) bool { return u.token(name) >= 0 }

func (u *User) token(name string) int {
	for index := range u.Tokens {
		if u.Tokens[index].Name == name {
			return index
		}
	}
	return -1
}

func prepareCreateToken(s *State, c *Command) error {
	user := s.User(c.UserID)
	if user == nil {
		return ErrUserNotFound
	}
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if user.HasToken(c.Name) {
		return ErrTokenNameExists
	}
	if len(user.Tokens) >= tokensPerUserMax {
		return ErrTooManyTokens
	}
	return nil
}

func applyCreateToken(s *State, c *Command) Result {
	user := s.User(c.UserID)
	user.Tokens = append(user.Tokens, Token{Name: c.Name, TokenHash: c.Secret, ExpiryAt: c.ExpiryAt})
	return Result{UserID: c.UserID}
}

func prepareDeleteToken(s *State, c *Command) error {
	user := s.User(c.UserID)
	if user == nil {
		return ErrUserNotFound
	}
	if !user.HasToken(c.Name) {
		return ErrTokenNotFound
	}
	return nil
}

func applyDeleteToken(s *State, c *Command) Result {
	user := s.User(c.UserID)
	index := user.token(c.Name)
	user.Tokens = append(user.Tokens[:index], user.Tokens[index+1:]...)
	return Result{UserID: c.UserID}
}

// TokenByHash returns the user and token whose hash is tokenHash, for a
// login with a personal access token.
func (s *State) TokenByHash(tokenHash string) (*User, *Token) {
	for _, user := range s.Users {
		if user == nil {
			continue
		}
		for index := range user.Tokens {
			if user.Tokens[index].TokenHash == tokenHash {
				return user, &user.Tokens[index]
			}
		}
	}
	return nil, nil
}

func prepareCreateGroup(s *State, c *Command) error {
	if err := prepareTopicExists(s, c); err != nil {
		return err
	}
	topic := s.Topic(c.StreamID, c.TopicID)
	if !validName(c.Name) {
		return ErrInvalidName
	}
	if topic.GroupByName(c.Name) != nil {
		return ErrGroupNameExists
	}
	if topic.NextGroupID >= groupsPerTopicMax {
		return ErrTooManyGroups
	}
	c.GroupID = topic.NextGroupID
	return nil
}

func applyCreateGroup(s *State, c *Command) Result {
	topic := s.Topic(c.StreamID, c.TopicID)
	invariant.Assert(c.GroupID == topic.NextGroupID, "group ids are monotonic")
	topic.Groups = place(topic.Groups, int(c.GroupID), &ConsumerGroup{ID: c.GroupID, Name: c.Name})
	topic.NextGroupID++
	return Result{StreamID: c.StreamID, TopicID: c.TopicID, GroupID: c.GroupID}
}

func prepareDeleteGroup(s *State, c *Command) error {
	if err := prepareTopicExists(s, c); err != nil {
		return err
	}
	if s.Topic(c.StreamID, c.TopicID).Group(c.GroupID) == nil {
		return ErrGroupNotFound
	}
	return nil
}

func applyDeleteGroup(s *State, c *Command) Result {
	topic := s.Topic(c.StreamID, c.TopicID)
	topic.Groups[c.GroupID] = nil
	return Result{StreamID: c.StreamID, TopicID: c.TopicID, GroupID: c.GroupID}
}

// ExpiredToken names a personal access token past its expiry.
type ExpiredToken struct {
	UserID uint32
	Name   string
}

// ExpiredTokens lists the tokens whose expiry is at or before nowMicros,
// in user id order, for the cleaner to delete.
func (s *State) ExpiredTokens(nowMicros uint64) []ExpiredToken {
	var expired []ExpiredToken
	for _, user := range s.Users {
		if user == nil {
			continue
		}
		for _, token := range user.Tokens {
			if token.ExpiryAt != 0 && token.ExpiryAt <= nowMicros {
				expired = append(expired, ExpiredToken{UserID: user.ID, Name: token.Name})
			}
		}
	}
	return expired
}
