// Package atomicfile replaces a file's content so that a reader, and the
// file system after a crash, sees the old content or the new one, never a
// part of it.
//
// A replacement of path takes four steps, all in path's directory:
//
//  1. create path+".tmp" (truncating a leftover one) and write the new
//     content into it;
//  2. set its permission bits to perm (the umask does not apply) and fsync
//     it;
//  3. rename it over path;
//  4. fsync the directory, so that the rename itself is durable.
//
// What a crash leaves behind:
//
//   - during steps 1 and 2: path as it was; path+".tmp" may remain, partly
//     written. Nothing reads it, and the next replacement of path truncates
//     and reuses it.
//   - between steps 3 and 4: path whole, with the old content or the new
//     one, depending on whether the rename reached the disk.
//   - after step 4: path with the new content.
//
// An error in steps 1 to 3 removes path+".tmp" and leaves path untouched.
// An error in step 4 comes after the rename: path already holds the new
// content, which may not survive a crash.
//
// The temporary name is fixed, so only one replacement of a given path may
// run at a time; callers that could race on a path must serialise. Errors
// are those of package os (they name the file); callers add their context.
package atomicfile
