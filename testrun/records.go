package testrun

import (
	"path/filepath"

	"chaos/control"
	"chaos/testrun/runrecord"
)

// sshRecord is cfg without its secrets, files made absolute.
func sshRecord(cfg control.SSHConfig) *runrecord.SSHRecord {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	r := &runrecord.SSHRecord{User: cfg.User, Port: cfg.Port, StrictHostKeyChecking: !cfg.InsecureIgnoreHostKey}
	for _, k := range cfg.KeyFiles {
		r.PrivateKeys = append(r.PrivateKeys, abs(k))
	}
	if cfg.KnownHosts != "" {
		r.KnownHosts = abs(cfg.KnownHosts)
	}
	return r
}
