// Package ansible holds the playbooks that prepare real hosts for chaos; its test runs them against testbed hosts.
package ansible
