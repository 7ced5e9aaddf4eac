package faultfs

import (
	"fmt"
	"strings"
)

// Names is when the file system makes a name change durable: the
// durability model's one choice (see the package doc).
type Names string

const (
	// NamesPOSIX makes a name durable only when its directory is fsynced,
	// as fsync(2) promises and no more. It finds a program that never
	// fsyncs the directories it creates or renames names in.
	NamesPOSIX Names = "posix"
	// NamesOrdered makes every name change durable, in the order made,
	// at the next fsync or fdatasync of any file or directory of the file
	// system, as the metadata journals of ext4 (data=ordered) and XFS
	// commit them. File data is still durable only at its own file's
	// fsync. Programs that rely on a journaling file system's ordering
	// (etcd 3.4 never fsyncs the directory it creates member/ in) pass
	// here and fail under NamesPOSIX.
	NamesOrdered Names = "ordered"
)

// AllNames is every model, the default first.
func AllNames() []Names { return []Names{NamesPOSIX, NamesOrdered} }

// ParseNames reads a model's name; "" is NamesPOSIX.
func ParseNames(s string) (Names, error) {
	if s == "" {
		return NamesPOSIX, nil
	}
	for _, n := range AllNames() {
		if string(n) == s {
			return n, nil
		}
	}
	all := make([]string, 0, len(AllNames()))
	for _, n := range AllNames() {
		all = append(all, string(n))
	}
	return "", fmt.Errorf("names model %q: want %s", s, strings.Join(all, " or "))
}
