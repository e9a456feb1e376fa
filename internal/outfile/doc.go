// Package outfile creates clrspy's output files (reports, traces, trigger
// windows) so that a hostile directory cannot redirect them and a failure
// cannot leave a damaged file under the name the user asked for.
//
// Create never opens the final name. It writes to a new file beside it,
// NAME.partial-XXXXXXXX, created with O_CREAT|O_EXCL|O_NOFOLLOW (so a
// symbolic link or any file planted under that name makes the create fail
// instead of being followed or truncated), mode 0600 while it is written.
// Close flushes it to disk (fsync), gives it its final permissions and
// renames it over the final name: the final name holds either its old
// content or the complete new file, never a partial or empty one (a full
// disk fails a write or the fsync, and Close then removes the partial file
// and reports the error). Abort removes the partial file.
//
// The final name itself is refused when it is a symbolic link (whoever
// made it: a planted /tmp/out.nettrace -> /etc/passwd must not let root
// overwrite /etc/passwd; rename would replace the link, but a user who made
// the link meant its target, so neither is done silently), a directory, or
// a named pipe or device of another user. Directory components of the path
// are checked as the kernel's fs.protected_symlinks=1 would (off on some
// systems): a symbolic link in a sticky world-writable directory (/tmp) is
// followed only when it belongs to clrspy's user or to the directory's
// owner.
//
// clrspy's own descriptors (/dev/stdout, /dev/stderr, /dev/fd/3,
// /proc/self/fd/3) and character devices owned by root or clrspy's user
// (/dev/null, /dev/full, a terminal) are the user's explicit choice of an
// existing stream: they are opened as they are, without a partial file.
// Everything else under /dev/ is an ordinary path: /dev/shm is
// world-writable and sticky like /tmp, and what another user planted there
// (a file, a link, a FIFO) gets the same refusals as in /tmp. A name
// directly in /dev that does not exist is refused (no new files among the
// devices).
//
// Check applies the same refusals without creating anything that stays
// (the directory's writability is tried with a file created and removed at
// once), so commands can refuse a bad output path before they attach to a
// process or start one.
//
// A long stream written to a File (record -o) is in the partial file until
// Close: a clrspy killed outright (SIGKILL) leaves everything it received
// in NAME.partial-XXXXXXXX, and the final name untouched. A partial file
// is locked (flock) while written; Create removes the empty, unlocked
// partial files of the same name that are this user's (a run killed
// before its first write) and leaves the non-empty ones to the user.
package outfile
