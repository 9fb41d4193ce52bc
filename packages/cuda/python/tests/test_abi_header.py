"""The ctypes mirrors against the C headers as the host compiler sees them: every struct (field
names, order, types, offsets, sizes), every enum, every constant and the signature of every
function this package declares. No GPU and no library needed: only a C compiler."""

import ctypes
import re

import _cheader
import pytest

from switchyard_cuda import _abi, _contract, errors, layout, runtime

C = ctypes
SCALARS = {
    "int": C.c_int,
    "int32_t": C.c_int32,
    "int64_t": C.c_int64,
    "uint8_t": C.c_uint8,
    "uint32_t": C.c_uint32,
    "uint64_t": C.c_uint64,
    "size_t": C.c_size_t,
    "float": C.c_float,
    "double": C.c_double,
    "char": C.c_char,
    "char*": C.c_char_p,
}
STRUCTS = _cheader.structs()
# Constants the package has no copy of, and why.
NOT_MIRRORED = {
    "SY_PARAM_COUNT": "the library reports it (sy_layout_param_count, checked below)",
    "SY_LAYOUT_MAX_BYTES": "the library enforces it",
}


def mirror(c_name: str):
    """sy_runtime_info -> _abi.SyRuntimeInfo."""
    return getattr(_abi, "".join(part.capitalize() for part in c_name.split("_")), None)


def field_type(ctype: str):
    return mirror(ctype) if ctype in STRUCTS else SCALARS[ctype]


@pytest.fixture(scope="module")
def probe(cc, tmp_path_factory):
    return _cheader.probe(cc, tmp_path_factory.mktemp("probe"))


def test_the_header_reader_sees_everything():
    code = _cheader.code()
    # The product's headers alone (the bench library's functions are another library's): 49 today.
    assert len(_cheader.functions()) == len(re.findall(r"^SY_API\b", code, flags=re.M)) > 40
    assert len(STRUCTS) == len(re.findall(r"\bstruct\s+\w*\s*\{", code)) >= 6
    assert len(_cheader.enums()) == len(re.findall(r"\benum\s+\w*\s*\{", code))
    assert {"sy_runtime_info", "sy_error_info", "sy_layout"} <= set(STRUCTS)


@pytest.mark.parametrize("c_name", sorted(STRUCTS))
def test_struct_mirrors_the_header(probe, c_name):
    py = mirror(c_name)
    assert py is not None, f"{c_name} has no ctypes mirror in _abi"
    fields = STRUCTS[c_name]
    assert [n for n, _ in py._fields_] == [f.name for f in fields], f"{c_name}: fields or their order differ"
    for (name, t), f in zip(py._fields_, fields):
        where = f"{c_name}.{name}"
        want = field_type(f.ctype)
        if f.array:
            assert issubclass(t, C.Array) and t._type_ is want, f"{where}: {t} is not an array of {want}"
            count = probe[f"count {where}"]
            assert t._length_ == count, f"{where}: {t._length_} elements, C has {count}"
        else:
            assert t is want, f"{where}: {t.__name__}, C declares {f.ctype}"
        assert getattr(py, name).offset == probe[f"offsetof {where}"], f"{where}: offset differs"
        assert C.sizeof(t) == probe[f"sizeof {where}"], f"{where}: size differs"
    size = probe[f"sizeof {c_name}"]
    assert C.sizeof(py) == size, f"sizeof({c_name}): C {size}, ctypes {C.sizeof(py)}"


def _suffixes(probe, enum: str, prefix: str) -> dict:
    return {e[len(prefix):]: probe[e] for e in _cheader.enums()[enum]}


def test_enums_and_their_python_tables(probe):
    status = {probe[e]: e for e in _cheader.enums()["sy_status"]}
    assert status == errors.STATUS_NAMES
    assert {k.lower(): v for k, v in _suffixes(probe, "sy_transport", "SY_TRANSPORT_").items()} == runtime.TRANSPORTS
    dtypes = {k.lower().replace("_", "-"): v for k, v in _suffixes(probe, "sy_dtype", "SY_DTYPE_").items()}
    assert dtypes == layout.DTYPES
    assert {k.lower(): v for k, v in _suffixes(probe, "sy_layout_kind", "SY_LAYOUT_").items()} == layout.LAYOUTS
    region_dtypes = _suffixes(probe, "sy_region_dtype", "SY_REGION_")
    by_value = sorted(region_dtypes, key=region_dtypes.get)
    assert tuple(k.lower().replace("_", "-") for k in by_value) == layout.REGION_DTYPES
    assert sorted(region_dtypes.values()) == list(range(len(region_dtypes)))
    regions = _suffixes(probe, "sy_region_index", "SY_REGION_")
    assert regions.pop("COUNT") == _abi.SY_REGION_COUNT == len(regions)
    camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), k.lower()): v for k, v in regions.items()}
    assert tuple(sorted(camel, key=camel.get)) == errors.REGION_NAMES
    assert sorted(camel.values()) == list(range(len(camel)))
    for enum, prefix, table in (
        ("sy_stage", "SY_STAGE_", "STAGE"),
        ("sy_error_code", "SY_CODE_", "CODE"),
        ("sy_record_fault", "SY_FAULT_", "FAULT"),
    ):
        values = _suffixes(probe, enum, prefix)
        values.pop("NONE", None)
        assert values == {k: getattr(_contract, f"{table}_{k}") for k in values}, enum
        assert len(values) == len({"STAGE": errors.STAGES, "CODE": errors.CODES, "FAULT": _contract.RECORD_FAULTS}[table])
    scales = {k.lower(): v for k, v in _suffixes(probe, "sy_scale_format", "SY_SCALE_").items()}
    assert scales == layout.SCALE_FORMATS
    weights = {k.lower(): v for k, v in _suffixes(probe, "sy_combine_weights", "SY_COMBINE_WEIGHTS_").items()}
    assert weights == layout.COMBINE_WEIGHTS
    checked = {"sy_status", "sy_transport", "sy_dtype", "sy_layout_kind", "sy_region_dtype", "sy_region_index"}
    checked |= {"sy_scale_format", "sy_combine_weights"}
    checked |= {"sy_stage", "sy_error_code", "sy_record_fault"}
    assert set(_cheader.enums()) == checked, "a new enum in the headers: give it a Python table and check it here"


def test_constants(probe, layout_lib):
    for name in _cheader.defines():
        if name in NOT_MIRRORED:
            continue
        assert hasattr(_abi, name), f"{name} has no copy in _abi (or list it in NOT_MIRRORED, saying why)"
        assert getattr(_abi, name) == probe[name], name
    assert layout_lib.sy_layout_param_count() == probe["SY_PARAM_COUNT"]


def _accepted(ctype: str) -> set:
    """The ctypes types that pass a C parameter of this declared type faithfully."""
    stars, base = ctype.count("*"), ctype.rstrip("*")
    if stars == 0:
        return {SCALARS[base]}
    if stars >= 2:  # an out-parameter for a pointer
        return {C.c_void_p, C.POINTER(C.c_void_p)}
    if base in STRUCTS:
        return {C.POINTER(mirror(base))}
    if base in ("char", "uint8_t"):
        return {C.c_char_p, C.POINTER(C.c_uint8)}
    if base in SCALARS:  # device data (passed as an address) or an out-value
        return {C.c_void_p, C.POINTER(SCALARS[base])}
    return {C.c_void_p}  # void* and opaque handles


@pytest.mark.parametrize("name", sorted({**_abi.LAYOUT_FUNCTIONS, **_abi.CUDA_FUNCTIONS}))
def test_function_signature_matches_the_prototype(name):
    declared = _cheader.functions()
    assert name in declared, f"{name} is not an SY_API function of the headers"
    restype, argtypes = {**_abi.LAYOUT_FUNCTIONS, **_abi.CUDA_FUNCTIONS}[name]
    c = declared[name]
    want_res = None if c.restype == "void" else SCALARS[c.restype]
    assert restype is want_res, f"{name} returns {c.restype}"
    assert len(argtypes) == len(c.params), f"{name} takes {len(c.params)} arguments: {c.params}"
    for i, (t, p) in enumerate(zip(argtypes, c.params)):
        assert t in _accepted(p), f"{name} argument {i}: {getattr(t, '__name__', t)} for C {p}"
