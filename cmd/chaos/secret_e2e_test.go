package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/campaign"
	"chaos/internal/secret"
	"chaos/storeweb"
)

// A password given any of the three ways (--password-file, the
// environment, the deprecated --password) appears nowhere chaos writes or
// shows: not in any file of the store (test.json, results.json, chaos.log,
// report.html, history.jsonl, node logs, campaign.json, junit.xml of
// --test-count 2), not in chaos serve's answer to any route of those runs
// and campaign, not in the replay commands and not on stdout or stderr.
// Local mode does not use the password; every writer still sees the flags.
func TestNoWriterShowsThePassword(t *testing.T) {
	skipE2E(t)
	pwFile := filepath.Join(t.TempDir(), "password")
	for _, c := range []struct {
		way, password string
		args          []string
		env           string
		replayHas     string // what the replay command shows instead
	}{
		{way: "password-file", password: "pw-from-file-5c1e7a", args: []string{"--password-file", pwFile},
			replayHas: "--password-file " + pwFile},
		{way: "environment", password: "pw-from-env-93b2d4", env: secret.PasswordEnv + "=pw-from-env-93b2d4"},
		{way: "password flag", password: "pw-from-flag-0fa6e1", args: []string{"--password", "pw-from-flag-0fa6e1"},
			replayHas: "--password '<redacted>'"},
	} {
		t.Run(c.way, func(t *testing.T) {
			require.NoError(t, os.WriteFile(pwFile, []byte(c.password+"\n"), 0o600))
			store := t.TempDir()
			env := secret.Environ(os.Environ())
			if c.env != "" {
				env = append(env, c.env)
			}
			args := append([]string{"run", "--time-limit", "2s", "--recovery", "1s", "--nemesis", "none",
				"--test-count", "2", "--keep-going", "--store", store, "--seed", "11"}, c.args...)
			code, out, errOut := runChaosEnv(t, 4*time.Minute, env, args...)
			require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assertHidden(t, c.password, "stdout", []byte(out))
			assertHidden(t, c.password, "stderr", []byte(errOut))
			assert.Equal(t, c.way == "password flag", strings.Contains(errOut, "chaos: warning: --password is visible to other users"),
				"the warning is printed for --password only; stderr:\n%s", errOut)

			files := storeFiles(t, store)
			for _, want := range []string{"test.json", "results.json", "chaos.log", "report.html", "history.jsonl", campaign.RecordFile, campaign.JUnitFile} {
				assert.Contains(t, files, want, "the store has no %s to check", want)
			}
			assertNoPassword(t, c.password, store)
			assertServeHidesPassword(t, c.password, store)
			assertReplays(t, store, c.replayHas)
		})
	}
}

// assertHidden fails t, naming what, when b holds the password.
func assertHidden(t *testing.T, password, what string, b []byte) {
	t.Helper()
	if bytes.Contains(b, []byte(password)) {
		t.Errorf("%s shows the password", what)
	}
}

// storeFiles are the base names of the regular files under store.
func storeFiles(t *testing.T, store string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	require.NoError(t, filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			names[d.Name()] = true
		}
		return err
	}))
	return names
}

// assertNoPassword checks every regular file under store.
func assertNoPassword(t *testing.T, password, store string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		assertHidden(t, password, p, b)
		return err
	}))
}

// assertServeHidesPassword asks chaos serve's handler for every route of
// the store: the listing, each run's page, files and zip (unpacked), and
// each campaign's page and files.
func assertServeHidesPassword(t *testing.T, password, store string) {
	t.Helper()
	s, err := storeweb.Open(store)
	require.NoError(t, err)
	defer s.Close()
	h := storeweb.NewHandler(s)
	get := func(target string) []byte {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		require.Equal(t, http.StatusOK, rec.Code, target)
		assertHidden(t, password, "GET "+target, rec.Body.Bytes())
		return rec.Body.Bytes()
	}
	get("/")
	runs, err := s.Runs()
	require.NoError(t, err)
	require.Len(t, runs, 2, "the runs of --test-count 2")
	for _, r := range runs {
		get(r.Href())
		files, err := s.Files(path.Join(r.Name, r.Time))
		require.NoError(t, err)
		for _, f := range files {
			get(fileHref(r.Href(), f.Path))
		}
		zipped := get(r.ZipHref())
		zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
		require.NoError(t, err)
		require.Len(t, zr.File, len(files))
		for _, e := range zr.File {
			rc, err := e.Open()
			require.NoError(t, err)
			b, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err)
			assertHidden(t, password, "GET "+r.ZipHref()+": "+e.Name, b)
		}
	}
	camps, err := s.Campaigns()
	require.NoError(t, err)
	require.Len(t, camps, 1)
	get(camps[0].Href())
	files, err := s.Files(path.Join("campaigns", camps[0].Name, camps[0].Time))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		get(fileHref(camps[0].Href(), f.Path))
	}
}

// fileHref is the route of the file at the slash path p under dir.
func fileHref(dir, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return dir + strings.Join(segs, "/")
}

// assertReplays checks the replay commands of the campaign: each names
// --seed and shows want ("" for nothing about the password).
func assertReplays(t *testing.T, store, want string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(store, "campaigns", "*", "2*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	b, err := os.ReadFile(filepath.Join(dirs[0], campaign.RecordFile))
	require.NoError(t, err)
	var rec campaign.Record
	require.NoError(t, json.Unmarshal(b, &rec))
	require.Len(t, rec.Tests, 1)
	require.Len(t, rec.Tests[0].Runs, 2)
	for _, r := range rec.Tests[0].Runs {
		assert.Contains(t, r.Replay, "--seed ")
		if want == "" {
			assert.NotContains(t, r.Replay, "--password", "a password from the environment stays there")
		} else {
			assert.Contains(t, r.Replay, want)
		}
	}
}
