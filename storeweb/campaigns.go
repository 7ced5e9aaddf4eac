package storeweb

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"time"

	"chaos/campaign"
)

// Campaign is one campaign directory store/campaigns/<Name>/<Time>/ that
// chaos test-all (or chaos run --test-count) wrote.
type Campaign struct {
	Name, Time string
	// Started is the start time <Time> names, else campaign.json's.
	Started time.Time
	// Broken says why campaign.json could not be read; "" when it was.
	Broken string
	Record campaign.Record
}

// Href is the campaign's page.
func (c Campaign) Href() string {
	return "/campaigns/" + url.PathEscape(c.Name) + "/" + url.PathEscape(c.Time) + "/"
}

// Campaigns lists every campaign of the store, newest first; none when
// store/campaigns does not exist. As with runs, symlinks (the latest
// links) are not followed.
func (s *Store) Campaigns() ([]Campaign, error) {
	names, err := s.subdirs(campaignsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", s.dir, err)
	}
	var out []Campaign
	for _, name := range names {
		times, err := s.subdirs(path.Join(campaignsDir, name))
		if err != nil {
			out = append(out, Campaign{Name: name, Broken: err.Error()})
			continue
		}
		for _, t := range times {
			out = append(out, s.readCampaign(name, t))
		}
	}
	slices.SortStableFunc(out, func(a, b Campaign) int { return b.Started.Compare(a.Started) })
	return out, nil
}

// Campaign reads store/campaigns/<name>/<t>/, with Run's errors.
func (s *Store) Campaign(name, t string) (Campaign, error) {
	if _, err := s.dirAt(campaignsDir, name, t); err != nil {
		return Campaign{}, err
	}
	return s.readCampaign(name, t), nil
}

// readCampaign reads campaign.json with its owner, campaign.ReadRecord,
// once the store has checked that it is a file in the store.
func (s *Store) readCampaign(name, t string) Campaign {
	c := Campaign{Name: name, Time: t}
	rel := path.Join(campaignsDir, name, t)
	st, err := s.stat(path.Join(rel, campaign.RecordFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Broken = "no campaign.json: the campaign is still going, or stopped before it was written"
	case err != nil:
		c.Broken = fmt.Sprintf("campaign.json: %v", err)
	case !st.Mode().IsRegular():
		c.Broken = "campaign.json is not a file"
	default:
		c.Record, err = campaign.ReadRecord(s.abs(rel))
		if err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			c.Broken = fmt.Sprintf("campaign.json is corrupt: %v", err)
		}
	}
	if when, err := time.Parse(stampLayout, t); err == nil {
		c.Started = when
	} else if when, err := time.Parse(time.RFC3339Nano, c.Record.Started); err == nil {
		c.Started = when
	}
	return c
}

// runOf names the run a campaign's run directory dir (as campaign.json has
// it: any path ending in <name>/<time>) is in this store, or false when
// no such run is.
func runOf(dir string, runs map[string]Run) (Run, bool) {
	if dir == "" {
		return Run{}, false
	}
	dir = filepath.Clean(dir)
	r, ok := runs[path.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir))]
	return r, ok
}
