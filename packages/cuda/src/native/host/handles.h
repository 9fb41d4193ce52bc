// Which handles this library holds. Every C ABI entry point that takes a handle checks it here
// before reading it, so a destroyed handle (or a pointer this library never returned) is refused
// with SY_ERR_STATE instead of being dereferenced, and a handle of another kind with
// SY_ERR_INVALID_ARGUMENT. Creation registers a handle, destruction forgets it.
#pragma once
#include <cstdint>

namespace sy {

void trackHandle(const void* h);
void untrackHandle(const void* h);
/// Whether `h` is a handle this library created and has not destroyed.
bool liveHandle(const void* h);
/// Throws SY_ERR_INVALID_ARGUMENT for NULL or a live handle of another kind (`magic` tells kinds
/// apart), SY_ERR_STATE for a handle that is not live.
void requireHandle(const void* h, uint32_t magic, const char* what);

}  // namespace sy

#define SY_LIVE(h, magic, what) sy::requireHandle((h), (magic), (what))
