package fakeclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	s0 := time.Unix(1700000000, 500000000)
	for in, want := range map[string]File{
		"":                                      Reset(),
		"+0 x1\n":                               Reset(),
		"# a comment\n":                         Reset(),
		"+2s":                                   {Offset: 2 * time.Second, Rate: 1},
		"-1.5":                                  {Offset: -1500 * time.Millisecond, Rate: 1},
		"# started 1700000000.5\n+1.25 x0.05\n": {Started: s0, Offset: 1250 * time.Millisecond, Rate: 0.05},
		"# started 1700000000.500000000\n; x\n\n+0 x2\n-3 x1\n": {Started: s0, Rate: 2},
	} {
		got, err := Parse([]byte(in))
		require.NoError(t, err, "%q", in)
		assert.True(t, want.Started.Equal(got.Started), "%q: started %v, want %v", in, got.Started, want.Started)
		want.Started, got.Started = time.Time{}, time.Time{}
		assert.Equal(t, want, got, "%q", in)
	}
}

func TestParseRefusesWhatChaosDoesNotWrite(t *testing.T) {
	for _, in := range []string{"2", "+a", "+1 y2", "+1 x0", "+1 x-1", "+1 x", "+1 x1 x2", "@2020-01-01 00:00:00", "+1e400"} {
		_, err := Parse([]byte(in))
		assert.ErrorContains(t, err, "want an offset in seconds and a rate", "%q", in)
	}
	_, err := Parse([]byte("# started yesterday\n+0 x1"))
	assert.ErrorContains(t, err, "want seconds since 1970")
}

// The spec lines chaos writes for each kind of clock fault.
func TestSpecStrings(t *testing.T) {
	f := Reset()
	assert.Equal(t, "+0 x1", string(trim(f.Format())), "reset")
	f = f.Bump(1500 * time.Millisecond)
	assert.Equal(t, "+1.5 x1", string(trim(f.Format())), "bump")
	// A strobe: +d, -d, +d from the true clock.
	var strobe []string
	g := Reset()
	for i, d := range []time.Duration{250 * time.Millisecond, -250 * time.Millisecond, 250 * time.Millisecond} {
		g = g.Bump(d)
		strobe = append(strobe, Spec{Offset: g.Offset, Rate: g.Rate}.String())
		_ = i
	}
	assert.Equal(t, []string{"+0.25 x1", "+0 x1", "+0.25 x1"}, strobe)
	assert.Equal(t, "-0.000001 x1", Spec{Offset: -time.Microsecond, Rate: 1}.String())
	assert.Equal(t, "+0 x1", Spec{Offset: 400 * time.Nanosecond, Rate: 1}.String(), "rounded to the microsecond")
	// Format and Parse agree.
	s := File{Started: time.Unix(1700000000, 123456789), Offset: -2*time.Second - 5*time.Millisecond, Rate: 0.1}
	assert.Equal(t, "# started 1700000000.123456789\n-2.005 x0.1\n", string(s.Format()))
	back, err := Parse(s.Format())
	require.NoError(t, err)
	assert.True(t, s.Started.Equal(back.Started))
	assert.Equal(t, s.Offset, back.Offset)
	assert.Equal(t, s.Rate, back.Rate)
}

func trim(b []byte) []byte { return b[:len(b)-1] }

// libfaketime's clock at real time t for file f: S + offset + rate*(t-S).
func libfaketimeAt(f File, t time.Time) time.Time {
	return f.Started.Add(f.Offset + time.Duration(f.Rate*float64(t.Sub(f.Started))))
}

// A new rate for libfaketime goes on from the clock at the change: the
// offset absorbs what the rate would bend since S.
func TestWithRateAnchorsLibfaketimeAtTheChange(t *testing.T) {
	s := time.Unix(1700000000, 0)
	now := s.Add(10 * time.Second)
	f := File{Started: s, Offset: 300 * time.Millisecond, Rate: 1}
	g, err := f.WithRate(0.1, now, Libfaketime)
	require.NoError(t, err)
	assert.Equal(t, 0.1, g.Rate)
	assert.Equal(t, "+9.3 x0.1", Spec{Offset: g.Offset, Rate: g.Rate}.String())
	assert.True(t, libfaketimeAt(f, now).Equal(libfaketimeAt(g, now)), "no jump at the change")
	later := now.Add(2 * time.Second)
	assert.Equal(t, 200*time.Millisecond, libfaketimeAt(g, later).Sub(libfaketimeAt(g, now)), "then a tenth of true time")
	// And back to 1: no jump either; the clock stays as far behind as it got.
	h, err := g.WithRate(1, later, Libfaketime)
	require.NoError(t, err)
	assert.True(t, libfaketimeAt(g, later).Equal(libfaketimeAt(h, later)))
	assert.Equal(t, "-1.5 x1", Spec{Offset: h.Offset, Rate: h.Rate}.String())
}

// chaos-node anchors a rate itself: the offset stays.
func TestWithRateNative(t *testing.T) {
	f := Reset().Bump(time.Second)
	g, err := f.WithRate(0.5, time.Unix(1700000000, 0), Native)
	require.NoError(t, err)
	assert.Equal(t, "+1 x0.5", Spec{Offset: g.Offset, Rate: g.Rate}.String())
}

func TestWithRateRefuses(t *testing.T) {
	_, err := Reset().WithRate(0.5, time.Now(), Libfaketime)
	assert.ErrorContains(t, err, "records no start")
	_, err = Reset().WithRate(0, time.Now(), Native)
	assert.ErrorContains(t, err, "want a positive rate")
}
