package shard

import "errors"

func uringAvailable() error { return errors.New("not yet") }

func newURingBackend() (Backend, error) { return nil, errors.New("not yet") }
