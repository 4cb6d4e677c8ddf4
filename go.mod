module github.com/whippetio/whippet

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/google/flatbuffers v2.0.8+incompatible
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.50.0
)

require github.com/klauspost/cpuid/v2 v2.2.10 // indirect
