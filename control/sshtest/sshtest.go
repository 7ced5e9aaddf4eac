// Package sshtest is an SSH server for tests that records every credential
// offered to it: it stands in for a host that logs what it is sent, such
// as one a planted file names. It refuses every login but one with the
// password it was given, and then answers every command with "0" (as if
// `id -u` said root) and exit status 0.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Server is a listening SSH server on loopback.
type Server struct {
	// Addr is host:port, on 127.0.0.1.
	Addr    string
	HostKey ssh.PublicKey

	password string // "" refuses every login
	kiOnly   bool   // asks for keyboard-interactive answers alone
	ln       net.Listener

	mu      sync.Mutex
	offered []string
}

// Start serves on a free loopback port until the test ends. A login with
// password (not "") is accepted; every other is refused after its
// credential is recorded.
func Start(t testing.TB, password string) *Server {
	t.Helper()
	return start(t, &Server{password: password})
}

// StartInteractive serves as Start does, but offers keyboard-interactive
// login alone (a "Verification code:" prompt), and refuses every answer.
func StartInteractive(t testing.TB) *Server {
	t.Helper()
	return start(t, &Server{kiOnly: true})
}

func start(t testing.TB, s *Server) *Server {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr, s.HostKey, s.ln = ln.Addr().String(), signer.PublicKey(), ln
	cfg := s.config()
	cfg.AddHostKey(signer)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.accept(cfg)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return s
}

// Offered is every credential offered so far, in order: "password X",
// "keyboard-interactive X" (an answer) or "publickey FINGERPRINT".
func (s *Server) Offered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.offered...)
}

// KnownHostsLine is the known_hosts line that verifies this server.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey)
}

func (s *Server) record(format string, args ...any) {
	s.mu.Lock()
	s.offered = append(s.offered, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

var errRefused = errors.New("sshtest: refused")

// config asks for every kind of credential and records what comes.
func (s *Server) config() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			s.record("password %s", pw)
			if s.password != "" && string(pw) == s.password {
				return nil, nil
			}
			return nil, errRefused
		},
		KeyboardInteractiveCallback: func(_ ssh.ConnMetadata, ask ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := ask("", "", []string{"Verification code: "}, []bool{false})
			for _, a := range answers {
				s.record("keyboard-interactive %s", a)
			}
			if err != nil {
				return nil, err
			}
			return nil, errRefused
		},
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			s.record("publickey %s", ssh.FingerprintSHA256(key))
			return nil, errRefused
		},
	}
	if s.kiOnly {
		cfg.PasswordCallback, cfg.PublicKeyCallback = nil, nil
	}
	return cfg
}

func (s *Server) accept(cfg *ssh.ServerConfig) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		wg.Go(func() { serve(conn, cfg) })
	}
}

// serve logs one connection in and answers its commands.
func serve(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go answer(ch, chReqs)
	}
}

// answer replies to a session's exec with "0" and exit status 0.
func answer(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			req.Reply(false, nil)
			continue
		}
		req.Reply(true, nil)
		fmt.Fprintln(ch, "0")
		ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
		return
	}
}
