package wire

// UserStatus is a user's status (§1.9).
type UserStatus uint8

// User statuses.
const (
	UserActive   UserStatus = 1
	UserInactive UserStatus = 2
)

func (d *decoder) userStatus(what string) UserStatus {
	start := d.pos
	status := UserStatus(d.u8(what))
	if d.err == nil && status != UserActive && status != UserInactive {
		d.failAt(start, what+": unknown user status")
	}
	return status
}

// UserTarget is a body naming one user (§6.2).
type UserTarget struct {
	User Identifier
}

// Requests whose body is one user identifier.
type (
	GetUser    = UserTarget
	DeleteUser = UserTarget
)

// EncodedSize returns the body size.
func (r *UserTarget) EncodedSize() int { return r.User.EncodedSize() }

// Encode writes the body.
func (r *UserTarget) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.User)
	return e.done(size)
}

// Decode reads the body.
func (r *UserTarget) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.User = d.identifier("user id")
	return d.finish()
}

// CreateUser creates a user (§6.2). Username and password lengths are the
// server's to check (status 43 and friends), not the decoder's.
type CreateUser struct {
	Username    string
	Password    string
	Status      UserStatus
	Permissions *Permissions // nil: none
	Options     Headers
}

// EncodedSize returns the body size.
func (r *CreateUser) EncodedSize() int {
	return 1 + len(r.Username) + 1 + len(r.Password) + 1 + permissionsWrapperSize(r.Permissions) +
		r.Options.EncodedSize()
}

// Encode writes the body.
func (r *CreateUser) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.str8(r.Username)
	e.str8(r.Password)
	e.u8(uint8(r.Status))
	e.permissionsWrapper(r.Permissions)
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body.
func (r *CreateUser) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Username = string(d.name8("username"))
	r.Password = string(d.slot8("password"))
	r.Status = d.userStatus("user status")
	r.Permissions = d.permissionsWrapper()
	r.Options = d.optionsTail()
	return d.finish()
}

// UpdateUser changes a user's name and/or status (§6.2).
type UpdateUser struct {
	User        Identifier
	HasUsername bool
	Username    string
	HasStatus   bool
	Status      UserStatus
	Options     Headers
}

// EncodedSize returns the body size.
func (r *UpdateUser) EncodedSize() int {
	size := r.User.EncodedSize() + 2 + r.Options.EncodedSize()
	if r.HasUsername {
		size += 1 + len(r.Username)
	}
	if r.HasStatus {
		size++
	}
	return size
}

// Encode writes the body.
func (r *UpdateUser) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.User)
	e.boolean(r.HasUsername)
	if r.HasUsername {
		e.str8(r.Username)
	}
	e.boolean(r.HasStatus)
	if r.HasStatus {
		e.u8(uint8(r.Status))
	}
	e.headers(r.Options)
	return e.done(size)
}

// Decode reads the body.
func (r *UpdateUser) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.User = d.identifier("user id")
	r.HasUsername = d.boolean("has username")
	r.Username = ""
	if r.HasUsername {
		r.Username = string(d.name8("username"))
	}
	r.HasStatus = d.boolean("has status")
	r.Status = 0
	if r.HasStatus {
		r.Status = d.userStatus("user status")
	}
	r.Options = d.optionsTail()
	return d.finish()
}

// UpdatePermissions replaces a user's permissions; nil clears them (§6.2).
type UpdatePermissions struct {
	User        Identifier
	Permissions *Permissions
}

// EncodedSize returns the body size.
func (r *UpdatePermissions) EncodedSize() int {
	return r.User.EncodedSize() + permissionsWrapperSize(r.Permissions)
}

// Encode writes the body.
func (r *UpdatePermissions) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.User)
	e.permissionsWrapper(r.Permissions)
	return e.done(size)
}

// Decode reads the body.
func (r *UpdatePermissions) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.User = d.identifier("user id")
	r.Permissions = d.permissionsWrapper()
	return d.finish()
}

// ChangePassword sets a user's password (§6.2).
type ChangePassword struct {
	User            Identifier
	CurrentPassword string
	NewPassword     string
}

// EncodedSize returns the body size.
func (r *ChangePassword) EncodedSize() int {
	return r.User.EncodedSize() + 2 + len(r.CurrentPassword) + len(r.NewPassword)
}

// Encode writes the body.
func (r *ChangePassword) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.identifier(r.User)
	e.str8(r.CurrentPassword)
	e.str8(r.NewPassword)
	return e.done(size)
}

// Decode reads the body.
func (r *ChangePassword) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.User = d.identifier("user id")
	r.CurrentPassword = string(d.slot8("current password"))
	r.NewPassword = string(d.slot8("new password"))
	return d.finish()
}

// UserInfo is a user entry (§7.4).
type UserInfo struct {
	ID        uint32
	CreatedAt uint64
	Status    UserStatus
	Username  string
	Options   Headers
}

const userInfoBytesMin = 4 + 8 + 1 + 1 + 4

func (u *UserInfo) size() int { return userInfoBytesMin + len(u.Username) + u.Options.EncodedSize() }

func (e *encoder) userInfo(u *UserInfo) {
	e.u32(u.ID)
	e.u64(u.CreatedAt)
	e.u8(uint8(u.Status))
	e.str8(u.Username)
	e.optionsBlock(u.Options)
}

func (d *decoder) userInfo() UserInfo {
	return UserInfo{
		ID:        d.u32("user id"),
		CreatedAt: d.u64("user created at"),
		Status:    UserStatus(d.u8("user status")),
		Username:  string(d.name8("username")),
		Options:   d.optionsBlock(),
	}
}

// UserDetails is a GetUser or CreateUser reply: the entry, then
// [1][len u32][permissions] or four zero bytes for none (§7.4).
type UserDetails struct {
	UserInfo
	Permissions *Permissions
}

// EncodedSize returns the payload size.
func (u *UserDetails) EncodedSize() int {
	if u.Permissions == nil {
		return u.size() + 4
	}
	return u.size() + permissionsWrapperSize(u.Permissions)
}

// Encode writes the payload.
func (u *UserDetails) Encode(dst []byte) int {
	size := u.EncodedSize()
	e := newEncoder(dst, size)
	e.userInfo(&u.UserInfo)
	if u.Permissions == nil {
		e.u32(0)
	} else {
		e.permissionsWrapper(u.Permissions)
	}
	return e.done(size)
}

// Decode reads the payload. Like the Go SDK it needs only the first of the
// four zero bytes that mean "no permissions", and takes the rest if there.
func (u *UserDetails) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	u.UserInfo = d.userInfo()
	if d.err == nil && d.remaining() > 0 && d.src[d.pos] == 0 {
		u.Permissions = nil
		for range min(4, d.remaining()) {
			if d.u8("no permissions") != 0 {
				d.failAt(d.pos-1, "no-permissions marker not zero")
			}
		}
		return d.finish()
	}
	u.Permissions = d.permissionsWrapper()
	return d.finish()
}

// UserList is a GetUsers reply: entries to the end of the payload.
type UserList []UserInfo

// EncodedSize returns the payload size.
func (l UserList) EncodedSize() int {
	size := 0
	for i := range l {
		size += l[i].size()
	}
	return size
}

// Encode writes the payload.
func (l UserList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	for i := range l {
		e.userInfo(&l[i])
	}
	return e.done(size)
}

// Decode reads entries until src ends.
func (l *UserList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*l = (*l)[:0]
	for d.err == nil && d.remaining() > 0 {
		*l = append(*l, d.userInfo())
	}
	return d.finish()
}
