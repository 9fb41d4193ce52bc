#!/usr/bin/env bash
# Checks that a built library exports exactly its C API: the SY_API declarations of its headers,
# nothing else defined by us (no C++ internals, no NVSHMEM, no CUDA registration code), and that its
# soname carries SY_ABI_VERSION.
#   scripts/check-exports.sh build/libswitchyard_cuda.so        the product: include/switchyard_cuda.h and
#                                                               switchyard_layout.h (no bench function)
#   scripts/check-exports.sh build/libswitchyard_cuda_bench.so  the bench library: bench/native/include/switchyard_bench.h
#   scripts/check-exports.sh build/libswitchyard_layout.so      layout only: sy_layout_*, sy_config_init
# Exit status 0 when it matches, 1 with the differences listed otherwise.
set -euo pipefail
pkg=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:?usage: check-exports.sh path/to/libswitchyard_cuda.so}
[ -f "$lib" ] || { echo "check-exports: $lib not found (build it first: npm run build:native)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Declared: every `SY_API <type> name(` of the public headers.
case $(basename "$lib") in
  libswitchyard_layout*) headers=("$pkg"/include/switchyard_layout.h) ;;
  libswitchyard_cuda_bench*) headers=("$pkg"/bench/native/include/switchyard_bench.h) ;;
  *) headers=("$pkg"/include/switchyard_layout.h "$pkg"/include/switchyard_cuda.h) ;;
esac
sed -n 's/^SY_API [^(]*[ *]\(sy_[a-z0-9_]*\)(.*/\1/p' "${headers[@]}" | sort -u >"$tmp/declared"
# Exported: defined dynamic symbols (text, data, weak), versions stripped.
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/exported"
status=0
if ! diff -u "$tmp/declared" "$tmp/exported" >"$tmp/diff"; then
  echo "check-exports: $(basename "$lib") does not export exactly the SY_API functions (- declared only, + exported only):"
  grep '^[-+][^-+]' "$tmp/diff" || true
  status=1
fi
abi=$(sed -n 's/^#define SY_ABI_VERSION \([0-9]*\).*/\1/p' "$pkg/include/switchyard_export.h")
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
want=""
case $(basename "$lib") in
  libswitchyard_cuda_bench*) want=libswitchyard_cuda_bench.so.$abi ;;
  libswitchyard_cuda*) want=libswitchyard_cuda.so.$abi ;;
esac
if [ -n "$want" ] && [ "$soname" != "$want" ]; then
  echo "check-exports: soname '$soname', expected $want (SY_ABI_VERSION)"
  status=1
fi
[ "$status" = 0 ] && echo "check-exports: $(basename "$lib") exports the $(wc -l <"$tmp/declared") SY_API functions and nothing else${soname:+ (soname $soname)}"
exit "$status"
