// Durable file writes: every file trainsim writes for a user (plans, launch
// bundles, profiles, sweep results, traces, checkpoints, GUI saves) goes
// through WriteFileDurably.
//
// The steps: a new temporary file is created in the destination's folder,
// named ".NAME.XXXXXX" (NAME the destination's file name, XXXXXX six random
// letters or digits; created exclusively, so two writers never share one),
// the bytes are written in full, the file is flushed to the disk (fsync),
// renamed over the destination, and the folder is flushed (fsync) so that the
// rename itself survives a power loss.
//
// What a crash (kill, power loss) at any point leaves at the destination: the
// old file (or none, if there was none) or the whole new one, never a mix or
// a cut file. A crash before the rename can leave the temporary behind; that
// is the only stray file a crash leaves, it is named as above, and it is safe
// to delete when no writer runs. After an error the temporary is removed and
// the destination is untouched, with one exception: when only the folder's
// fsync fails, the new file is in place but may not survive a power loss.
//
// Permissions: a destination that exists keeps its permission bits (not its
// owner or group); a new one gets 0644 less the umask. A `mode` other than
// kKeepMode is used instead in both cases (less the umask). A symbolic link
// at the destination is followed: the file it names is replaced, the link
// stays.
//
// Two writers of one destination each write their own temporary; the last
// rename wins and readers see one whole file. Thread-safe.
//
// Errors name the destination and the system's reason:
// "out/p.json: cannot write: No such file or directory".
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trainsim {

// `mode` for "the existing file's permission bits, or 0644 for a new file".
inline constexpr int kKeepMode = -1;

// Replaces `path` with `bytes`, durably (see above).
Status WriteFileDurably(const std::string& path, std::string_view bytes, int mode = kKeepMode);

// The same with the bytes in pieces, written one after the other.
Status WriteFileDurably(const std::string& path, std::span<const std::string_view> pieces,
                        int mode = kKeepMode);

// Flushes the folder `dir`'s entries (files created, renamed or removed in
// it, folders made in it) to the disk, as WriteFileDurably does after its
// rename: for a writer that makes a folder and then names it in a file.
// A file system that cannot sync folders is no error.
Status SyncFolder(const std::string& dir);

// Creates and removes the temporary that WriteFileDurably(path, ...) would,
// so that a long computation fails early, with the same message, when its
// output cannot be written (a missing or read-only folder). It reserves no
// space: the write itself can still fail.
Status CheckWritable(const std::string& path);

}  // namespace trainsim
