// Package atomicfile replaces a file's content so that a reader, and the
// file system after a crash, sees the old content or the new one, never a
// part of it.
//
// A replacement of path takes four steps, all in path's directory:
//
//  1. create a new temporary file, ".BASE.RANDOM.tmp" beside path, and
//     write the new content into it. It is opened with O_CREATE|O_EXCL|
//     O_NOFOLLOW: a name that exists (a crash's leftover, or a symlink
//     someone planted to make chaos, perhaps root, write elsewhere) is
//     never opened, another name is tried;
//  2. set its permission bits to perm on the open file (the umask does not
//     apply; until then it is 0600) and fsync it;
//  3. rename it over path;
//  4. fsync the directory, so that the rename itself is durable.
//
// What a crash leaves behind:
//
//   - during steps 1 and 2: path as it was; the temporary file may remain,
//     partly written. Nothing reads it or reuses its name.
//   - between steps 3 and 4: path whole, with the old content or the new
//     one, depending on whether the rename reached the disk.
//   - after step 4: path with the new content.
//
// An error in steps 1 to 3 removes the temporary file and leaves path
// untouched.
// An error in step 4 comes after the rename: path already holds the new
// content, which may not survive a crash.
//
// Each replacement has a temporary file of its own, so replacements of one
// path may race: the last rename wins, whole. Errors are those of package
// os (they name the file); callers add their context.
package atomicfile
