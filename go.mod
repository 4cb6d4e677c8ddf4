module github.com/whippetio/whippet

go 1.26
