package wire

// CreatePersonalAccessToken mints a token (§6.3). Expiry is a lifetime in
// µs: 0 = server default (never), ExpiryNever = never.
type CreatePersonalAccessToken struct {
	Name   string
	Expiry uint64
}

// EncodedSize returns the body size.
func (r *CreatePersonalAccessToken) EncodedSize() int { return 1 + len(r.Name) + 8 }

// Encode writes the body.
func (r *CreatePersonalAccessToken) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.str8(r.Name)
	e.u64(r.Expiry)
	return e.done(size)
}

// Decode reads the body.
func (r *CreatePersonalAccessToken) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Name = string(d.name8("token name"))
	r.Expiry = d.u64("token expiry")
	return d.finish()
}

// DeletePersonalAccessToken deletes a token by name (§6.3).
type DeletePersonalAccessToken struct {
	Name string
}

// EncodedSize returns the body size.
func (r *DeletePersonalAccessToken) EncodedSize() int { return 1 + len(r.Name) }

// Encode writes the body.
func (r *DeletePersonalAccessToken) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.str8(r.Name)
	return e.done(size)
}

// Decode reads the body.
func (r *DeletePersonalAccessToken) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Name = string(d.name8("token name"))
	return d.finish()
}

// RawToken is the CreatePersonalAccessToken reply: the only time the raw
// token is shown (§7.7).
type RawToken struct {
	Token string
}

// EncodedSize returns the payload size.
func (t *RawToken) EncodedSize() int { return 1 + len(t.Token) }

// Encode writes the payload.
func (t *RawToken) Encode(dst []byte) int {
	size := t.EncodedSize()
	e := newEncoder(dst, size)
	e.str8(t.Token)
	return e.done(size)
}

// Decode reads the payload.
func (t *RawToken) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	t.Token = string(d.name8("token"))
	return d.finish()
}

// TokenInfo is one entry of a GetPersonalAccessTokens reply. ExpiryAt is
// an absolute µs timestamp; 0 means never.
type TokenInfo struct {
	Name     string
	ExpiryAt uint64
}

// TokenList is a GetPersonalAccessTokens reply: entries to the end.
type TokenList []TokenInfo

// EncodedSize returns the payload size.
func (l TokenList) EncodedSize() int {
	size := 0
	for _, token := range l {
		size += 1 + len(token.Name) + 8
	}
	return size
}

// Encode writes the payload.
func (l TokenList) Encode(dst []byte) int {
	size := l.EncodedSize()
	e := newEncoder(dst, size)
	for _, token := range l {
		e.str8(token.Name)
		e.u64(token.ExpiryAt)
	}
	return e.done(size)
}

// Decode reads entries until src ends.
func (l *TokenList) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	*l = (*l)[:0]
	for d.err == nil && d.remaining() > 0 {
		*l = append(*l, TokenInfo{Name: string(d.name8("token name")), ExpiryAt: d.u64("token expiry")})
	}
	return d.finish()
}
