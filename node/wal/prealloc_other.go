//go:build !linux

package wal

import "os"

// datasync makes f's data durable: fsync, where fdatasync is Linux's.
func datasync(f *os.File) error { return f.Sync() }

// allocate does nothing: preallocation is Linux's fallocate(2) here.
func allocate(*os.File, int64) error { return nil }
