package classic

// GetPersonalAccessTokens (41) has an empty body; the reply is a TokenList.
type GetPersonalAccessTokens struct{}

func (GetPersonalAccessTokens) Code() Code                          { return CodeGetPersonalAccessTokens }
func (*GetPersonalAccessTokens) Decode([]byte) (int, error)         { return 0, nil }
func (GetPersonalAccessTokens) AppendBody(d []byte) ([]byte, error) { return d, nil }

// CreatePersonalAccessToken (42): name name8, expiry u64 µs (0 = server
// default, u64::MAX = never). The classic Go SDK writes its u32 argument
// into the upper four bytes; the server takes the u64 as sent. Reply: RawToken.
type CreatePersonalAccessToken struct {
	Name   []byte
	Expiry uint64
}

func (CreatePersonalAccessToken) Code() Code { return CodeCreatePersonalAccessToken }

// Decode reads the body; trailing bytes are ignored.
func (req *CreatePersonalAccessToken) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Name = r.nameUTF8("token name")
	req.Expiry = r.u64("token expiry")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req CreatePersonalAccessToken) AppendBody(dst []byte) ([]byte, error) {
	if err := checkName(req.Name); err != nil {
		return dst, err
	}
	return appendU64(appendName8(dst, req.Name), req.Expiry), nil
}

// DeletePersonalAccessToken (43): name name8.
type DeletePersonalAccessToken struct {
	Name []byte
}

func (DeletePersonalAccessToken) Code() Code { return CodeDeletePersonalAccessToken }

// Decode reads the body; trailing bytes are ignored.
func (req *DeletePersonalAccessToken) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Name = r.nameUTF8("token name")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req DeletePersonalAccessToken) AppendBody(dst []byte) ([]byte, error) {
	if err := checkName(req.Name); err != nil {
		return dst, err
	}
	return appendName8(dst, req.Name), nil
}

// LoginWithPersonalAccessToken (44): token name8. Allowed before login;
// reply LoginReply.
type LoginWithPersonalAccessToken struct {
	Token []byte
}

func (LoginWithPersonalAccessToken) Code() Code { return CodeLoginWithPersonalAccessToken }

// Decode reads the body; trailing bytes are ignored.
func (req *LoginWithPersonalAccessToken) Decode(body []byte) (int, error) {
	r := reader{buf: body}
	req.Token = r.nameUTF8("token")
	return r.pos, r.result()
}

// AppendBody writes the request body.
func (req LoginWithPersonalAccessToken) AppendBody(dst []byte) ([]byte, error) {
	if err := checkName(req.Token); err != nil {
		return dst, err
	}
	return appendName8(dst, req.Token), nil
}

// RawToken is the CreatePersonalAccessToken reply: [token name8], shown once.
type RawToken struct {
	Token string
}

// AppendBody writes the reply body.
func (t RawToken) AppendBody(dst []byte) []byte { return appendNameString(dst, t.Token) }

// Decode reads the reply body, which must be consumed exactly.
func (t *RawToken) Decode(body []byte) error {
	r := reader{buf: body}
	t.Token = string(r.nameUTF8("token"))
	return r.exact("raw token")
}

// TokenEntry is [name name8][expiry_at u64]; expiry_at 0 means never, else
// absolute µs.
type TokenEntry struct {
	Name     string
	ExpiryAt uint64
}

// TokenList is the GetPersonalAccessTokens reply: entries to the end.
type TokenList struct {
	Tokens []TokenEntry
}

// AppendBody writes the reply body.
func (l *TokenList) AppendBody(dst []byte) []byte {
	for _, token := range l.Tokens {
		dst = appendNameString(dst, token.Name)
		dst = appendU64(dst, token.ExpiryAt)
	}
	return dst
}

// Decode reads entries to the end of the body.
func (l *TokenList) Decode(body []byte) error {
	r := reader{buf: body}
	l.Tokens = nil
	for r.remaining() > 0 && r.err == nil {
		l.Tokens = append(l.Tokens, TokenEntry{Name: string(r.nameUTF8("token name")), ExpiryAt: r.u64("token expiry_at")})
	}
	return r.exact("token list")
}

// CheckTokenName applies the 0.8 range of personal access token names:
// StatusInvalidPersonalAccessTokenName or StatusOK.
func CheckTokenName(name []byte) Status {
	if len(name) < TokenNameBytesMin || len(name) > TokenNameBytesMax {
		return StatusInvalidPersonalAccessTokenName
	}
	return StatusOK
}
