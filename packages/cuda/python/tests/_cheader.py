"""The C headers (packages/cuda/include) as the compiler sees them, for the ctypes mirror checks:
structs (fields in order with their declared types), enums, #define constants and SY_API
prototypes are read from the text; sizes, offsets and values come from a probe program compiled
with the host C compiler against the headers and run."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

INCLUDE = Path(__file__).resolve().parents[2] / "include"
HEADERS = ("switchyard_export.h", "switchyard_contract.h", "switchyard_cuda.h", "switchyard_layout.h")


@dataclass(frozen=True)
class Field:
    name: str
    ctype: str  # declared type without const, e.g. "uint64_t", "char*", "sy_region"
    array: bool


@dataclass(frozen=True)
class Function:
    name: str
    restype: str
    params: tuple  # declared types without const and names, arrays as pointers, e.g. "sy_runtime**"


def code() -> str:
    """The headers' text without comments."""
    text = "\n".join((INCLUDE / h).read_text() for h in HEADERS)
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def _type(decl: str) -> tuple[str, str, bool]:
    """(type, name, array) of a declaration: `const char* axes[4]` is ("char*", "axes", True)."""
    decl = " ".join(decl.replace("const ", " ").replace("*", " * ").split())
    array = "[" in decl
    decl = decl.split("[")[0].strip()
    found = re.fullmatch(r"(.*?)\s*(\w+)", decl)
    base, name = found.group(1), found.group(2)
    return base.replace(" ", "").replace("struct", ""), name, array


def structs() -> dict[str, list[Field]]:
    """Every struct with a body: typedef name -> fields in order."""
    out = {}
    for body, name in re.findall(r"typedef struct \w+ \{(.*?)\} (\w+);", code(), flags=re.S):
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            first, *more = (d.strip() for d in decl.split(","))
            ctype, name0, array = _type(first)
            fields.append(Field(name0, ctype, array))
            # `uint32_t code, stage, ...`: the same type (no declarator with its own * or [] here)
            fields += [Field(d, ctype, False) for d in more]
        out[name] = fields
    return out


def enums() -> dict[str, list[str]]:
    """Every enum: typedef name -> enumerator names in order."""
    out = {}
    for body, name in re.findall(r"typedef enum \w+ \{(.*?)\} (\w+);", code(), flags=re.S):
        out[name] = [e.split("=")[0].strip() for e in body.split(",") if e.strip()]
    return out


def defines() -> list[str]:
    """The SY_ constants (#define NAME value), not the export macro, the X-macro lists or the
    string of parameter names (switchyard_contract.h's SY_CONTRACT_*: test_contract.py checks those)."""
    found = re.findall(r"^#define (SY_\w+)[ \t]+\S", code(), flags=re.M)
    return [n for n in found if n != "SY_API" and not n.startswith("SY_CONTRACT_")]


def functions() -> dict[str, Function]:
    """Every SY_API prototype."""
    out = {}
    for ret, name, params in re.findall(r"SY_API\s+([\w\s\*]+?)\s*\b(sy_\w+)\s*\(([^)]*)\)\s*;", code()):
        types = []
        for p in (p.strip() for p in params.split(",")):
            if p in ("void", ""):
                continue
            ctype, _, array = _type(p)
            types.append(ctype + ("*" if array else ""))
        restype = " ".join(ret.replace("const ", "").split()).replace(" *", "*")
        out[name] = Function(name, restype, tuple(types))
    return out


def probe(cc: str, tmp: Path) -> dict[str, int]:
    """Compiles and runs a program printing, for the headers as `cc` compiles them: `sizeof S`,
    `offsetof S.f`, `sizeof S.f`, `count S.f` (elements of an array field), every enumerator and
    every constant. Returns name -> value."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "switchyard_layout.h"', "int main(void) {"]

    def say(key: str, expr: str) -> None:
        lines.append(f'  printf("%s %llu\\n", "{key}", (unsigned long long)({expr}));')

    for s, fields in structs().items():
        say(f"sizeof {s}", f"sizeof({s})")
        for f in fields:
            member = f"(({s}*)0)->{f.name}"
            say(f"offsetof {s}.{f.name}", f"offsetof({s}, {f.name})")
            say(f"sizeof {s}.{f.name}", f"sizeof({member})")
            if f.array:
                say(f"count {s}.{f.name}", f"sizeof({member}) / sizeof({member}[0])")
    for names in enums().values():
        for e in names:
            lines.append(f'  printf("%s %lld\\n", "{e}", (long long)({e}));')
    for d in defines():
        say(d, d)
    lines += ["  return 0;", "}"]
    src, exe = tmp / "probe.c", tmp / "probe"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(INCLUDE), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.rsplit(" ", 1) for line in out.splitlines())}
