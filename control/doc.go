// Package control runs commands on the hosts of a test and moves files to
// and from them: the Remote interface, with one implementation over SSH
// (SSHDialer, DialSSH), one for Docker containers (DialDocker, hosts named
// "docker:NAME": docker exec and docker cp, nothing needed in the image but
// a shell) and one for this machine (NewLocal, local mode). One contract
// suite runs against all three.
//
// Every error names its host first ("n3: ...") and says what failed in one
// line, so that a setup failure can be printed as it is. A command that runs
// and exits non-zero is not an error of Run: its Result says how it ended,
// and Result.Err or Output turn that into an error when the caller wants one.
//
// Over SSH, one connection per host carries every session of the run, at most
// SSHConfig.MaxSessions at a time, and keepalives find a connection that
// went silent. A transport failure before a command is sent (the connection
// died, a session could not be opened) reconnects and retries with backoff;
// once a command has been sent it is never sent again, and losing the
// connection then is reported as ErrConnectionLost: the command may or may
// not have run.
//
// Commands run as root: directly when the login user is root, otherwise
// through sudo, without a password when sudoers allows it and with
// SSHConfig.Password otherwise. Dial finds out which, once per host, and
// says in one line why when neither works. Host keys are checked against
// known_hosts unless SSHConfig.InsecureIgnoreHostKey is set.
package control
