// Package storeweb serves the store that chaos run and chaos test-all write
// (docs/FORMATS.md, "The store") as web pages, for chaos serve:
//
//	GET /                                the runs, newest first; ?verdict=valid|invalid|unknown|broken&name=SUBSTRING
//	GET /runs/{name}/{time}/             one run: its facts, its files, its report
//	GET /runs/{name}/{time}/{file...}    a file of the run, as it is (report.html's relative links land here)
//	GET /zip/{name}/{time}               the run directory as a .zip
//	GET /campaigns/{campaign}/{time}/    one campaign of chaos test-all: its table, linking to its runs
//	GET /campaigns/{campaign}/{time}/{file...}   campaign.json, junit.xml
//
// Every page reads the store afresh, so a run that finishes appears on the
// next request. A run directory whose results.json is missing or does not
// parse is listed as broken, with the reason. The index shows each run's
// summary.json (docs/FORMATS.md), a few hundred bytes, or for a run from
// before summaries its whole results.json; either is read once and
// remembered while results.json stays the same file with the same size and
// modification time, so the index of an unchanged store of thousands of
// runs stats each run's results.json and report.html and reads nothing.
// chaos serve writes nothing into the store. Nothing outside the store is
// ever served: paths are checked element by element (no "..", no empty
// element), and every file is opened through an os.Root, which refuses
// symlinks that leave the store.
//
// Values of a history are hostile markup until escaped, and a node may
// leave files of any name in a run directory: every response says nosniff
// and carries a Content-Security-Policy that loads nothing and runs no
// script but a page's own, by hash (policy); only the pages chaos writes,
// at the places it writes them, are sent as HTML, and a file that is not
// known text or JSON is a download (fileKind).
package storeweb
