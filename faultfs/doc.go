// Package faultfs is the fault file system: a FUSE file system (go-fuse
// v2's loopback node) that passes every read and write through to a
// backing directory and remembers what is not durable yet, so that a
// simulated power loss (PowerLoss) can put the backing directory back to
// what a machine that lost power would find on its disk. It also injects
// errors: writes, fsyncs or both fail with ENOSPC or EIO until cleared or
// for a while (SetErrors).
//
// # The durability model
//
// What is durable is what the Linux man pages promise survives a crash,
// and no more:
//
//   - A file's data and size become durable when the file is fsynced or
//     fdatasynced. fsync(2) promises that the file's modified data (and
//     its metadata) reach the storage device before the call returns;
//     fdatasync(2) promises the same for the data and for the metadata
//     needed to read it back, the size among them. Both therefore count
//     for the whole content and size here; neither makes the file's name
//     durable. msync(2) with MS_SYNC reaches the file system as an
//     fdatasync and counts as one (for the whole file, which is more than
//     Linux promises for a range).
//   - A name becomes durable when its directory is fsynced (NamesPOSIX,
//     the default; under NamesOrdered, at the next fsync or fdatasync of
//     any file or directory, as a journaling file system commits it: see
//     Names). fsync(2)
//     warns that syncing a file does not make its directory entry
//     durable: that takes an fsync of a descriptor of the directory. So
//     a created name (creat, mkdir, link, symlink, mknod), a removed one
//     (unlink, rmdir) and both ends of a rename are each undone by a
//     power loss until their own directory is fsynced. A rename across
//     directories changes two names, each made durable by its own
//     directory's fsync; a power loss in between can leave the file
//     under both names (rename(2) itself allows a moment where both
//     names refer to the file) or under neither. rename(2)
//     replacing an existing name is atomic for the running system only:
//     until the directory is fsynced, a power loss brings the replaced
//     file back under that name, as it was when last made durable.
//   - A file's data written before it was ever fsynced is lost, even if
//     its name became durable: a file created and named durably comes
//     back empty (as on a file system that journals metadata and not
//     data), and so does one whose durable size was 0.
//   - Truncation (truncate, ftruncate, O_TRUNC), fallocate's hole
//     punching and zeroing, and O_APPEND writes are data changes like any
//     write: a power loss gives back the bytes and size of the last
//     fsync. Allocation (fallocate with or without FALLOC_FL_KEEP_SIZE)
//     changes no bytes and needs nothing saved; fallocate modes that move
//     data (collapse, insert range) are refused with EOPNOTSUPP.
//   - Shared writable mmap is allowed. FUSE writes a mapping's dirty pages
//     back to the file system as ordinary writes (at msync, fsync, munmap,
//     and when the process that mapped the file exits, at the latest), so
//     its stores are data changes that are durable at msync(MS_SYNC) or
//     fsync only. A power loss must come after the process that mapped
//     the file is gone, as it must for every file (see below).
//   - What the backing directory holds when the file system is mounted is
//     durable. Metadata other than names and sizes (modes, owners, times,
//     extended attributes) is passed through and never undone.
//   - An operation refused by an injected error changes nothing; an fsync
//     refused with EIO makes nothing durable (the data stays not durable,
//     and a later successful fsync makes it durable, which is kinder than
//     Linux, where the page cache may have dropped it).
//
// O_TMPFILE and copy_file_range are refused (the kernel then copies by
// reads and writes); a file the trash holds cannot be reached through the
// mount.
//
// # What it keeps
//
// Undo state is kept small, so that fsync-heavy programs (a write-ahead
// log with preallocated segments, records appended and fdatasynced one by
// one) stay cheap:
//
//   - per file changed since its last fsync: its durable size, the old
//     bytes of the durable ranges overwritten or cut off since (each byte
//     saved once, touching ranges merged; bytes known to be zeros, such
//     as the space past what was written that a write-ahead log
//     preallocates with fallocate(2), are kept as a length, unread), and
//     a descriptor of its own (so that the file can be put back whatever
//     its names became). An fsync drops the saved bytes; the descriptor
//     stays for the file's next change until a handle of the file is
//     released. A file written only past its durable size (an append)
//     saves nothing.
//   - a bound on the old bytes kept in memory, over all files
//     (Options.UndoMemory, `chaos faultfs serve --undo-memory-mib`,
//     64 MiB by default): the old bytes of a range that would take them
//     past it go, whole, to a spill file of the file's own, made in the
//     trash and unlinked at once (so that it holds space only while the
//     file system holds its descriptor: until the change is durable or
//     undone). A truncation of a large file thus costs disk, as much as
//     it freed, not memory. A change whose old bytes cannot be spilled
//     (the backing store full, or failing) is refused with ENOSPC (else
//     EIO) and changes nothing; the status counts it (undo_refused), as
//     it counts the old bytes in memory and spilled. The bound counts
//     saved bytes: the buffers holding them may be somewhat larger, as
//     touching runs in memory merge by appending (up to 1 MiB a run), and
//     each run's bookkeeping (some tens of bytes) is not counted. `chaos
//     faultfs serve` also sets the Go runtime's soft memory limit to the
//     bound plus 64 MiB, so that the garbage of merged runs is collected
//     early: a truncation of a 256 MiB file, 64 MiB of whose old bytes
//     were already in memory, peaks at about 140 MB of RSS.
//   - per name changed since its directory's last fsync: what the name
//     referred to then (a file or directory, by inode number).
//   - a trash directory inside the backing store (TrashName, hidden from
//     the mount): a hard link to each file whose durable name was removed
//     or replaced, and each removed directory, kept until the change is
//     durable or undone. (A file renamed since its directory's fsync
//     thus shows one more link in its st_nlink.)
//
// # Power loss
//
// PowerLoss puts every changed file back to its durable size and bytes,
// then every changed name back to what it referred to (files by a link
// from the trash, directories moved back), and empties the trash. The
// programs that wrote the files must be dead first (kill -9 them: their
// open files must not be written after the power loss); the control API
// refuses a power loss while files of the mount are open. The kernel
// caches no names of the mount, and a power loss makes it drop the
// attributes and pages it cached, so a restarted program sees the durable
// state.
//
// The file system is run by `chaos faultfs serve` on each host, steered
// over a unix socket (Handler, Client) by `chaos faultfs power-loss`,
// `errors`, `clear` and `status` (docs/FORMATS.md, "Fault file system").
package faultfs
