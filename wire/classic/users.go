package classic

// UserStatus is 1 active or 2 inactive.
type UserStatus uint8

// User statuses.
const (
	UserActive   UserStatus = 1
	UserInactive UserStatus = 2
)

func (r *reader) userStatus(what string) UserStatus {
	offset := r.pos
	status := UserStatus(r.u8(what))
	if r.err == nil && status != UserActive && status != UserInactive {
		r.invalid(what, offset, uint64(status), StatusInvalidCommand)
	}
	return status
}

func checkPassword(password []byte) error {
	if len(password) > NameBytesMax {
		return ErrFieldRange
	}
	return nil
}

// GetUser (31): identifier. Reply: UserDetails, or empty when unknown.
type GetUser struct{ User Identifier }

// DeleteUser (34): identifier.
type DeleteUser struct{ User Identifier }

// GetUsers (32) has an empty body; the reply is a UserList.
type GetUsers struct{}

// LogoutUser (39) has an empty body and needs a logged-in connection.
type LogoutUser struct{}

func (GetUser) Code() Code    { return CodeGetUser }
func (DeleteUser) Code() Code { return CodeDeleteUser }
func (GetUsers) Code() Code   { return CodeGetUsers }
func (LogoutUser) Code() Code { return CodeLogoutUser }

// Decode reads the body; trailing bytes are ignored.
func (req *GetUser) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.User, "user_id")
}

// Decode reads the body; trailing bytes are ignored.
func (req *DeleteUser) Decode(body []byte) (int, error) {
	return decodeOneIdentifier(body, &req.User, "user_id")
}

func (*GetUsers) Decode([]byte) (int, error)             { return 0, nil }
func (*LogoutUser) Decode([]byte) (int, error)           { return 0, nil }
func (GetUsers) AppendBody(dst []byte) ([]byte, error)   { return dst, nil }
func (LogoutUser) AppendBody(dst []byte) ([]byte, error) { return dst, nil }

// AppendBody writes the request body.
func (req GetUser) AppendBody(dst []byte) ([]byte, error) { return appendIdentifiers(dst, req.User) }

// AppendBody writes the request body.
func (req DeleteUser) AppendBody(dst []byte) ([]byte, error) { return appendIdentifiers(dst, req.User) }

// CreateUser (33): username name8, password [u8 len][bytes], status u8,
// permissions [has u8][len u32][bytes]. Reply: UserDetails of the new user.
type CreateUser struct {
	Username       []byte
	Password       []byte
	Status         UserStatus
	HasPermissions bool
	Permissions    Permissions
}

func (CreateUser) Code() Code { return CodeCreateUser }

// Decode reads the body; trailing bytes are ignored.
func (req *CreateUser) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Username = r.nameUTF8("username")
	req.Password = r.bytes8("password")
	req.Status = r.userStatus("user status")
	req.HasPermissions, req.Permissions = r.requestPermissions()
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req CreateUser) AppendBody(dst []byte) ([]byte, error) {
	if err := firstError(checkName(req.Username), checkPassword(req.Password), checkUserStatus(req.Status)); err != nil {
		return dst, err
	}
	dst = appendName8(dst, req.Username)
	dst = appendBytes8(dst, req.Password)
	dst = append(dst, uint8(req.Status))
	return appendRequestPermissions(dst, req.HasPermissions, &req.Permissions), nil
}

func checkUserStatus(status UserStatus) error {
	if status != UserActive && status != UserInactive {
		return ErrFieldRange
	}
	return nil
}

// UpdateUser (35): identifier, [has_username u8][name8], [has_status u8]
// [status u8]. A nil Username or a zero Status means "unchanged". The classic
// Go SDK appends one zero byte when both are set; Decode ignores it as
// trailing data.
type UpdateUser struct {
	User     Identifier
	Username []byte
	Status   UserStatus
}

func (UpdateUser) Code() Code { return CodeUpdateUser }

// Decode reads the body; trailing bytes are ignored.
func (req *UpdateUser) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.User = r.identifier("user_id")
	req.Username = nil
	if r.flag("has_username") {
		req.Username = r.nameUTF8("username")
	}
	req.Status = 0
	if r.flag("has_status") {
		req.Status = r.userStatus("user status")
	}
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req UpdateUser) AppendBody(dst []byte) ([]byte, error) {
	err := req.User.check()
	if err == nil && req.Username != nil {
		err = checkName(req.Username)
	}
	if err == nil && req.Status != 0 {
		err = checkUserStatus(req.Status)
	}
	if err != nil {
		return dst, err
	}
	dst = appendIdentifier(dst, req.User)
	dst = appendFlag(dst, req.Username != nil)
	if req.Username != nil {
		dst = appendName8(dst, req.Username)
	}
	dst = appendFlag(dst, req.Status != 0)
	if req.Status != 0 {
		dst = append(dst, uint8(req.Status))
	}
	return dst, nil
}

// UpdatePermissions (36): identifier, [has u8][len u32][permissions].
type UpdatePermissions struct {
	User           Identifier
	HasPermissions bool
	Permissions    Permissions
}

func (UpdatePermissions) Code() Code { return CodeUpdatePermissions }

// Decode reads the body; trailing bytes are ignored.
func (req *UpdatePermissions) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.User = r.identifier("user_id")
	req.HasPermissions, req.Permissions = r.requestPermissions()
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req UpdatePermissions) AppendBody(dst []byte) ([]byte, error) {
	if err := req.User.check(); err != nil {
		return dst, err
	}
	dst = appendIdentifier(dst, req.User)
	return appendRequestPermissions(dst, req.HasPermissions, &req.Permissions), nil
}

// ChangePassword (37): identifier, current and new [u8 len][bytes].
type ChangePassword struct {
	User            Identifier
	CurrentPassword []byte
	NewPassword     []byte
}

func (ChangePassword) Code() Code { return CodeChangePassword }

// Decode reads the body; trailing bytes are ignored.
func (req *ChangePassword) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.User = r.identifier("user_id")
	req.CurrentPassword = r.bytes8("current password")
	req.NewPassword = r.bytes8("new password")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req ChangePassword) AppendBody(dst []byte) ([]byte, error) {
	if err := firstError(req.User.check(), checkPassword(req.CurrentPassword), checkPassword(req.NewPassword)); err != nil {
		return dst, err
	}
	dst = appendIdentifier(dst, req.User)
	dst = appendBytes8(dst, req.CurrentPassword)
	return appendBytes8(dst, req.NewPassword), nil
}

// LoginUser (38): username name8, password [u8 len][bytes], version str32,
// context str32 (length 0 = absent). Allowed before login; reply LoginReply.
// The 0.8 server ignores version and context.
type LoginUser struct {
	Username []byte
	Password []byte
	Version  []byte
	Context  []byte
}

func (LoginUser) Code() Code { return CodeLoginUser }

// Decode reads the body; trailing bytes are ignored.
func (req *LoginUser) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Username = r.nameUTF8("username")
	req.Password = r.bytes8("password")
	req.Version = r.str32("version")
	req.Context = r.str32("context")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req LoginUser) AppendBody(dst []byte) ([]byte, error) {
	if err := firstError(checkName(req.Username), checkPassword(req.Password)); err != nil {
		return dst, err
	}
	if len(req.Version)+len(req.Context) > ControlBodyBytesMax {
		return dst, ErrBodyTooLarge
	}
	dst = appendName8(dst, req.Username)
	dst = appendBytes8(dst, req.Password)
	dst = appendStr32Bytes(dst, req.Version)
	return appendStr32Bytes(dst, req.Context), nil
}

// LoginReply is the reply of both logins: [user_id u32].
type LoginReply struct {
	UserID uint32
}

// AppendBody writes the reply body.
func (l LoginReply) AppendBody(dst []byte) []byte { return appendU32(dst, l.UserID) }

// Decode reads the reply body, which must be consumed exactly.
func (l *LoginReply) Decode(body []byte) error {
	r := reader{buf: body}
	l.UserID = r.u32("user_id")
	return r.exact("login reply")
}

// UserEntry is [id u32][created_at u64][status u8][username name8].
type UserEntry struct {
	ID        uint32
	CreatedAt uint64
	Status    UserStatus
	Username  string
}

// UserDetails is a user entry plus its permissions: [1][len u32][bytes], or
// four zero bytes when it has none. Reply of GetUser and CreateUser.
type UserDetails struct {
	User           UserEntry
	HasPermissions bool
	Permissions    Permissions
}

// UserList is the GetUsers reply: entries to the end of the body.
type UserList struct {
	Users []UserEntry
}

func appendUserEntry(dst []byte, u *UserEntry) []byte {
	dst = appendU32(dst, u.ID)
	dst = appendU64(dst, u.CreatedAt)
	dst = append(dst, uint8(u.Status))
	return appendNameString(dst, u.Username)
}

func (r *reader) userEntry() UserEntry {
	return UserEntry{
		ID:        r.u32("user id"),
		CreatedAt: r.u64("user created_at"),
		Status:    r.userStatus("user status"),
		Username:  string(r.nameUTF8("username")),
	}
}

// AppendBody writes the reply body.
func (d *UserDetails) AppendBody(dst []byte) []byte {
	dst = appendUserEntry(dst, &d.User)
	if !d.HasPermissions {
		return appendU32(dst, 0)
	}
	dst = append(dst, 1)
	dst = appendU32(dst, uint32(d.Permissions.EncodedSize()))
	return AppendPermissions(dst, &d.Permissions)
}

// Decode reads a UserDetails body, which must be consumed exactly.
func (d *UserDetails) Decode(body []byte) error {
	r := reader{buf: body}
	d.User = r.userEntry()
	d.HasPermissions = r.flag("has_permissions")
	d.Permissions = Permissions{}
	if r.err == nil && d.HasPermissions {
		d.Permissions = r.sizedPermissions()
	} else if r.err == nil {
		offset := r.pos
		if padding := r.take(3, "permissions padding"); padding != nil && (padding[0]|padding[1]|padding[2]) != 0 {
			r.invalid("permissions padding", offset, 0, StatusInvalidFormat)
		}
	}
	return r.exact("user details")
}

// AppendBody writes the reply body.
func (l *UserList) AppendBody(dst []byte) []byte {
	for i := range l.Users {
		dst = appendUserEntry(dst, &l.Users[i])
	}
	return dst
}

// Decode reads entries to the end of the body.
func (l *UserList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Users = nil
	for r.remaining() > 0 && r.err == nil {
		l.Users = append(l.Users, r.userEntry())
	}
	return r.exact("user list")
}

// decodeOneIdentifier is the decoder of every identifier-only body.
func decodeOneIdentifier(body []byte, id *Identifier, what string) (int, error) {
	r := reader{buf: body}
	*id = r.identifier(what)
	return r.pos, r.result()
}

// appendIdentifiers checks and writes a body made of identifiers only.
func appendIdentifiers(dst []byte, ids ...Identifier) ([]byte, error) {
	for _, id := range ids {
		if err := id.check(); err != nil {
			return dst, err
		}
	}
	for _, id := range ids {
		dst = appendIdentifier(dst, id)
	}
	return dst, nil
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckCredentials applies the 0.8 length ranges to a username and password
// (LoginUser, CreateUser): StatusInvalidUsername, StatusInvalidPassword, or
// StatusOK.
func CheckCredentials(username, password []byte) Status {
	if len(username) < UsernameBytesMin || len(username) > UsernameBytesMax {
		return StatusInvalidUsername
	}
	if len(password) < PasswordBytesMin || len(password) > PasswordBytesMax {
		return StatusInvalidPassword
	}
	return StatusOK
}
