package wire

// Empty is an empty request body or reply payload.
type Empty struct{}

// EncodedSize returns 0.
func (Empty) EncodedSize() int { return 0 }

// Encode writes nothing.
func (Empty) Encode([]byte) int { return 0 }

// Decode consumes nothing; DecodeAll then rejects any byte.
func (*Empty) Decode([]byte) (int, error) { return 0, nil }

// Requests with an empty body (§6).
type (
	Ping                    = Empty
	GetStats                = Empty
	GetClusterMetadata      = Empty
	GetMe                   = Empty
	GetClients              = Empty
	GetUsers                = Empty
	LogoutUser              = Empty
	GetPersonalAccessTokens = Empty
	GetStreams              = Empty
)

// Raw is an opaque payload: the ZIP archive of a GetSnapshot reply.
type Raw []byte

// EncodedSize returns the payload length.
func (r Raw) EncodedSize() int { return len(r) }

// Encode copies the payload.
func (r Raw) Encode(dst []byte) int { return copy(dst[:len(r)], r) }

// Decode takes all of src as a view.
func (r *Raw) Decode(src []byte) (int, error) {
	*r = src
	return len(src), nil
}

// GetSnapshot asks for a diagnostic archive (§6.1).
type GetSnapshot struct {
	Compression uint8 // 1 stored, 2 deflated, 3 bzip2, 4 zstd, 5 lzma, 6 xz
	Types       []uint8
}

// Snapshot compression and content types.
const (
	SnapshotStored  uint8 = 1
	SnapshotXZ      uint8 = 6
	SnapshotTypeAll uint8 = 100
)

// EncodedSize returns the body size.
func (r *GetSnapshot) EncodedSize() int { return 2 + len(r.Types) }

// Encode writes the body.
func (r *GetSnapshot) Encode(dst []byte) int {
	size := r.EncodedSize()
	e := newEncoder(dst, size)
	e.u8(r.Compression)
	e.slot8(r.Types)
	return e.done(size)
}

// Decode reads the body; compression and every type must be known.
func (r *GetSnapshot) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Compression = d.u8("snapshot compression")
	if d.err == nil && (r.Compression < SnapshotStored || r.Compression > SnapshotXZ) {
		d.failAt(0, "snapshot compression unknown")
	}
	r.Types = d.slot8("snapshot types")
	for _, kind := range r.Types {
		if (kind < 1 || kind > 6) && kind != SnapshotTypeAll {
			d.fail("snapshot type unknown")
		}
	}
	return d.finish()
}

// OptionsScope selects the catalog DescribeOptions returns (§1.9).
type OptionsScope uint8

// Option scopes.
const (
	ScopeTopic  OptionsScope = 1
	ScopeStream OptionsScope = 2
	ScopeUser   OptionsScope = 3
)

// DescribeOptions asks for an option catalog (§6.1).
type DescribeOptions struct {
	Scope OptionsScope
}

// EncodedSize returns 1.
func (r *DescribeOptions) EncodedSize() int { return 1 }

// Encode writes the scope.
func (r *DescribeOptions) Encode(dst []byte) int {
	e := newEncoder(dst, 1)
	e.u8(uint8(r.Scope))
	return e.done(1)
}

// Decode reads the scope; other values are rejected.
func (r *DescribeOptions) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.Scope = OptionsScope(d.u8("options scope"))
	if d.err == nil && (r.Scope < ScopeTopic || r.Scope > ScopeUser) {
		d.failAt(0, "options scope unknown")
	}
	return d.finish()
}

// OptionSpec is one catalog entry of a DescribeOptions reply (§7.7).
type OptionSpec struct {
	Key         string
	Kind        HeaderKind
	Default     []byte
	Description string
}

// OptionSpecs is a DescribeOptions reply: [count u32] then the entries.
type OptionSpecs []OptionSpec

// EncodedSize returns the payload size.
func (s OptionSpecs) EncodedSize() int {
	size := 4
	for _, spec := range s {
		size += 1 + len(spec.Key) + 1 + 4 + len(spec.Default) + 4 + len(spec.Description)
	}
	return size
}

// Encode writes the payload.
func (s OptionSpecs) Encode(dst []byte) int {
	size := s.EncodedSize()
	e := newEncoder(dst, size)
	e.u32(uint32(len(s)))
	for _, spec := range s {
		e.str8(spec.Key)
		e.u8(uint8(spec.Kind))
		e.u32(uint32(len(spec.Default)))
		e.bytes(spec.Default)
		e.str32(spec.Description)
	}
	return e.done(size)
}

// Decode reads the payload.
func (s *OptionSpecs) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	const specBytesMin = 1 + 1 + 1 + 4 + 4
	count := d.count32(specBytesMin, "option specs")
	*s = make(OptionSpecs, 0, count)
	for range count {
		spec := OptionSpec{Key: string(d.name8("option key"))}
		spec.Kind = HeaderKind(d.u8("option kind"))
		spec.Default = d.str32("option default")
		spec.Description = string(d.str32("option description"))
		*s = append(*s, spec)
	}
	return d.finish()
}

// GetClient asks for one connection's details (§6.1).
type GetClient struct {
	ClientID uint32
}

// EncodedSize returns 4.
func (r *GetClient) EncodedSize() int { return 4 }

// Encode writes the client id.
func (r *GetClient) Encode(dst []byte) int {
	e := newEncoder(dst, 4)
	e.u32(r.ClientID)
	return e.done(4)
}

// Decode reads the client id.
func (r *GetClient) Decode(src []byte) (int, error) {
	d := decoder{src: src}
	r.ClientID = d.u32("client id")
	return d.finish()
}
