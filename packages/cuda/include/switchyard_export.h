/*
 * switchyard_export.h: what the shared library libswitchyard_cuda.so exports, and its ABI version.
 *
 * SY_API marks the public C functions: the library is compiled with hidden visibility, so these
 * and nothing else of its own appear in its dynamic symbol table (scripts/check-exports.sh).
 * SY_ABI_VERSION is the soname's number (libswitchyard_cuda.so.SY_ABI_VERSION): it grows when a
 * public function or struct changes incompatibly. A program compares sy_abi_version() with the
 * SY_ABI_VERSION it was compiled against.
 */
#ifndef SWITCHYARD_EXPORT_H_
#define SWITCHYARD_EXPORT_H_

#define SY_ABI_VERSION 1

#if defined(_WIN32)
#define SY_API
#elif defined(__GNUC__) || defined(__clang__)
#define SY_API __attribute__((visibility("default")))
#else
#define SY_API
#endif

#endif /* SWITCHYARD_EXPORT_H_ */
