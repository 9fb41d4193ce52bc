"""switchyard_contract.h's X-macro lists, as the host C compiler expands them, against the Python
module generated from the same contract (_contract.py): both come from core, so they must agree."""

import subprocess

import _cheader
import pytest

from switchyard_cuda import _contract

LISTS = {
    # list: (X-macro parameters, the printed value of each entry)
    "SY_CONTRACT_STATUSES": ("v, NAME, meaning", 'v, #NAME'),
    "SY_CONTRACT_REGIONS": ("i, ID, name", "i, name"),
    "SY_CONTRACT_SCALAR_PARAMS": ("i, ID, name", "i, name"),
    "SY_CONTRACT_REGION_DTYPES": ("v, ID, name", "v, name"),
    "SY_CONTRACT_STAGES": ("v, ID, label, meaning", "v, label"),
    "SY_CONTRACT_ERROR_CODES": ("v, ID, label, meaning", "v, label"),
    "SY_CONTRACT_RECORD_FAULTS": ("v, ID, label, meaning", "v, label"),
}


@pytest.fixture(scope="module")
def expanded(cc, tmp_path_factory):
    """list name -> {value: string} as C sees them, plus the parameter names string."""
    tmp = tmp_path_factory.mktemp("contract")
    lines = ["#include <stdio.h>", '#include "switchyard_contract.h"', "int main(void) {"]
    for name, (params, printed) in LISTS.items():
        lines.append(f'#define PRINT({params}) printf("{name} %d %s\\n", (int)({printed.split(", ")[0]}), '
                     f'{printed.split(", ")[1]});')
        lines.append(f"  {name}(PRINT)")
        lines.append("#undef PRINT")
    lines += ['  printf("SY_CONTRACT_PARAM_NAMES 0 %s\\n", SY_CONTRACT_PARAM_NAMES);', "  return 0;", "}"]
    src, exe = tmp / "contract.c", tmp / "contract"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", str(_cheader.INCLUDE), str(src), "-o", str(exe)],
                   check=True)
    out: dict = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        name, value, text = line.split(" ", 2)
        out.setdefault(name, {})[int(value)] = text
    return out


def test_the_c_lists_equal_the_python_tables(expanded):
    assert expanded["SY_CONTRACT_STATUSES"] == _contract.STATUS_NAMES
    assert tuple(expanded["SY_CONTRACT_REGIONS"].values()) == _contract.REGION_NAMES
    assert tuple(expanded["SY_CONTRACT_SCALAR_PARAMS"].values()) == _contract.SCALAR_PARAMS
    assert tuple(expanded["SY_CONTRACT_REGION_DTYPES"].values()) == _contract.REGION_DTYPES
    assert expanded["SY_CONTRACT_STAGES"] == _contract.STAGES
    assert expanded["SY_CONTRACT_ERROR_CODES"] == _contract.CODES
    assert expanded["SY_CONTRACT_RECORD_FAULTS"] == _contract.RECORD_FAULTS
    assert expanded["SY_CONTRACT_PARAM_NAMES"][0] == ",".join(_contract.PARAM_NAMES)


def test_the_param_names_are_the_layout_librarys(layout_lib):
    names = tuple(layout_lib.sy_layout_param_name(i).decode() for i in range(layout_lib.sy_layout_param_count()))
    assert names == _contract.PARAM_NAMES
