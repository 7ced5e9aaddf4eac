package watch

import "strconv"

// fields checks the optional fields of every accepted event: PrevValue,
// CreateRevision and Version, where given.
//
// They depend on the key's event just before the event's revision R. The
// reference knows it only when some session watching the key covered every
// revision between its previous known event p and R (started at or below
// p+1 and reached R-1 or beyond): a correct session would have shown any
// event of the key in between. Otherwise an unknown write may sit between
// them, and only what holds whatever came before is checked: a create
// revision not above R, and version 1 exactly when the create revision is
// R. If the covering session itself lost an event of the key, the anomaly
// is real but is named after the field rather than the loss.
func (r *run) fields(ss []*session, ref *reference) {
	for _, s := range ss {
		for _, d := range s.accepted {
			if e := ref.events[revKey{d.Revision, d.Key}]; e.conflict {
				continue
			}
			p := ref.previous(d.Key, d.Revision)
			if !covered(ss, d.Key, p+1, d.Revision-1) {
				r.selfConsistent(s, d)
				continue
			}
			var prev *refEvent
			if p > 0 {
				prev = ref.events[revKey{p, d.Key}]
				if prev.conflict {
					continue
				}
			}
			r.prevValue(s, d, p, prev)
			if !d.Delete {
				r.meta(s, d, p, prev)
			}
		}
	}
}

// covered reports whether some session watching key is known to have
// delivered every event of it within [lo, hi].
func covered(ss []*session, key string, lo, hi int64) bool {
	if lo > hi {
		return true
	}
	for _, s := range ss {
		if s.lb > 0 && s.lb <= lo && s.reached >= hi && s.Watches(key) {
			return true
		}
	}
	return false
}

// prevValue checks d's previous value against the key's previous event
// prev at revision p (nil: the key had no event since revision 1).
func (r *run) prevValue(s *session, d delivery, p int64, prev *refEvent) {
	if d.PrevValue == nil {
		return
	}
	switch {
	case prev == nil || prev.delete:
		r.report(WrongPrevValue, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's event at revision %d with previous value %q, but the key did not exist before it (%s)",
			s.Watcher, s.ID, d.Key, d.Revision, *d.PrevValue, before(p, prev))
	case *d.PrevValue != prev.value:
		r.report(WrongPrevValue, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's event at revision %d with previous value %q, but the key's previous event, at revision %d, put %q",
			s.Watcher, s.ID, d.Key, d.Revision, *d.PrevValue, p, prev.value)
	}
}

// before describes the key's previous event for an explanation.
func before(p int64, prev *refEvent) string {
	if prev == nil {
		return "no event of it is known before, and its whole history was watched"
	}
	return "it was deleted at revision " + itoa(p)
}

// meta checks a put's create revision and version against the key's
// previous event prev at revision p (nil: none since revision 1). After no
// event or a delete, the put creates the key: create revision R, version
// 1. After a put, the create revision stays and the version grows by one.
func (r *run) meta(s *session, d delivery, p int64, prev *refEvent) {
	wantCreate, wantVersion := d.Revision, int64(1)
	if prev != nil && !prev.delete {
		wantCreate, wantVersion = prev.create, 0
		if prev.version > 0 {
			wantVersion = prev.version + 1
		}
	}
	existed := prev != nil && !prev.delete
	switch c := d.CreateRevision; {
	case c == 0:
	case wantCreate > 0 && c != wantCreate, existed && c >= d.Revision:
		r.report(WrongCreateRevision, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's put at revision %d with create revision %d, but %s",
			s.Watcher, s.ID, d.Key, d.Revision, c, expect(existed, p, wantCreate, "create revision"))
	}
	switch v := d.Version; {
	case v == 0:
	case wantVersion > 0 && v != wantVersion, existed && v == 1:
		r.report(WrongVersion, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's put at revision %d with version %d, but %s",
			s.Watcher, s.ID, d.Key, d.Revision, v, expect(existed, p, wantVersion, "version"))
	}
}

// expect says what a field should have been, for an explanation.
func expect(existed bool, p, want int64, field string) string {
	switch {
	case !existed:
		return "the put created the key, so its " + field + " must be " + itoa(want)
	case want > 0:
		return "after the key's put at revision " + itoa(p) + " its " + field + " must be " + itoa(want)
	default:
		return "the key existed since its put at revision " + itoa(p) + ", so this put did not create it"
	}
}

// selfConsistent checks what holds of a put whatever came before it: its
// create revision is not above its revision, and its version is 1 exactly
// when it created the key.
func (r *run) selfConsistent(s *session, d delivery) {
	c, v := d.CreateRevision, d.Version
	switch {
	case d.Delete || c == 0:
	case c > d.Revision:
		r.report(WrongCreateRevision, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's put at revision %d with create revision %d, after the put itself",
			s.Watcher, s.ID, d.Key, d.Revision, c)
	case v != 0 && (v == 1) != (c == d.Revision):
		r.report(WrongVersion, s.Watcher, s.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's put at revision %d with create revision %d and version %d: version 1 goes with a put that creates the key, and only with it",
			s.Watcher, s.ID, d.Key, d.Revision, c, v)
	}
}

// itoa formats a revision.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
