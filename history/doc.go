// Package history holds the record of a test: the operations clients and the
// nemesis performed, in the order they happened, as docs/FORMATS.md fixes them
// for history.jsonl.
//
// A history is a sequence of [Op]. Every client operation is an invoke
// followed, on the same process, by exactly one completion: ok (it
// happened), fail (it certainly did not happen) or info (its outcome is
// unknown). A process never has two operations open, and a process whose
// operation ended in info is retired: its worker goes on under a new process
// number. Nemesis operations are single info lines on the "nemesis" process.
// Indexes run consecutively from 0 and times (nanoseconds on the
// controller's monotonic clock) never decrease.
//
// [Recorder] writes a history while a test runs, streaming it to disk so a
// controller killed mid-run leaves a usable prefix. [Parse] reads one back;
// it tolerates a torn final line and names the line of anything else that is
// wrong. Both enforce the rules above through [Validator].
package history
