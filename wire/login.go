package wire

// ClientVersion is the prefix of every Register body (§5.2).
type ClientVersion struct {
	Protocol   uint32 // packed, §1.10
	SDKName    string
	SDKVersion string
}

// LoginRegister is the Register body (§5.2) in either shape: password
// (username, password) or token (a personal access token). Both shapes end
// with [context_len u32][context].
//
// A body can parse in both shapes. Decode records which shapes parse
// (PasswordShape, TokenShape) and fills the fields of each, because the
// server tries the password shape first and the token shape second. Encode
// writes the token shape when WithToken is set, else the password shape.
type LoginRegister struct {
	Version   ClientVersion
	Username  string
	Password  string
	Token     string
	WithToken bool
	Context   string // context of the encoded (or first parsed) shape

	PasswordShape bool
	TokenShape    bool
}

func (r *LoginRegister) prefixSize() int {
	return 4 + 1 + len(r.Version.SDKName) + 1 + len(r.Version.SDKVersion)
}

// EncodedSize returns the body size.
func (r *LoginRegister) EncodedSize() int {
	size := r.prefixSize() + 4 + len(r.Context)
	if r.WithToken {
		return size + 1 + len(r.Token)
	}
	return size + 1 + len(r.Username) + 1 + len(r.Password)
}

// Encode writes the body.
func (r *LoginRegister) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(r.Version.Protocol)
	e.str8(r.Version.SDKName)
	e.str8(r.Version.SDKVersion)
	if r.WithToken {
		e.str8(r.Token)
	} else {
		e.str8(r.Username)
		e.str8(r.Password)
	}
	e.str32(r.Context)
	return e.done(size)
}

// Decode reads the body. It fails when the version prefix does not decode
// or when neither shape consumes the body exactly: both mean MalformedLogin.
func (r *LoginRegister) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Version.Protocol = d.u32("protocol version")
	r.Version.SDKName = string(d.name8("sdk name"))
	r.Version.SDKVersion = string(d.name8("sdk version"))
	if d.err != nil {
		return 0, d.err
	}
	credentials := d.pos
	password := decoder{src: src, pos: credentials}
	username := password.name8("username")
	secret := password.slot8("password")
	passwordContext := password.str32("login context")
	r.PasswordShape = password.err == nil && password.pos == len(src)

	token := decoder{src: src, pos: credentials}
	tokenValue := token.name8("token")
	tokenContext := token.str32("login context")
	r.TokenShape = token.err == nil && token.pos == len(src)

	r.Username, r.Password, r.Token, r.Context = "", "", "", ""
	if r.TokenShape {
		r.Token = string(tokenValue)
		r.Context = string(tokenContext)
	}
	if r.PasswordShape {
		r.Username = string(username)
		r.Password = string(secret)
		r.Context = string(passwordContext)
	}
	r.WithToken = !r.PasswordShape
	if !r.PasswordShape && !r.TokenShape {
		return 0, decodeFailure(credentials, "login body fits neither the password nor the token shape")
	}
	return len(src), nil
}

// LoginReply is the success payload of a Register reply (§5.2). Session
// must be non-zero.
type LoginReply struct {
	UserID        uint32
	Session       uint64
	ServerVersion uint32 // packed protocol version
	ServerRelease string // e.g. "0.9.0-edge.5"
}

// EncodedSize returns the payload size.
func (r *LoginReply) EncodedSize() int { return 4 + 8 + 4 + 1 + len(r.ServerRelease) }

// Encode writes the payload.
func (r *LoginReply) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(r.UserID)
	e.u64(r.Session)
	e.u32(r.ServerVersion)
	e.str8(r.ServerRelease)
	return e.done(size)
}

// Decode reads the payload; a zero session is refused as the Go SDK does.
func (r *LoginReply) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.UserID = d.u32("user id")
	r.Session = d.u64("session")
	if d.err == nil && r.Session == 0 {
		d.failAt(4, "session zero")
	}
	r.ServerVersion = d.u32("server protocol version")
	r.ServerRelease = string(d.name8("server version"))
	return d.finish()
}
