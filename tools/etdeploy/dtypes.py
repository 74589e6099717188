"""executorch's ScalarType codes, written once: each code's name, element bytes and numpy dtype.
pte.py (sizes of planned tensors), link.py (output decoding), oracle.py and the CLI read this table."""
from __future__ import annotations

# code: (name, bytes per element, numpy dtype name or None when numpy has none)
SCALAR_TYPES = {
    0: ("uint8", 1, "uint8"), 1: ("int8", 1, "int8"), 2: ("int16", 2, "int16"), 3: ("int32", 4, "int32"),
    4: ("int64", 8, "int64"), 5: ("float16", 2, "float16"), 6: ("float32", 4, "float32"),
    7: ("float64", 8, "float64"), 11: ("bool", 1, "bool"), 12: ("qint8", 1, "int8"),
    13: ("quint8", 1, "uint8"), 14: ("qint32", 4, "int32"), 15: ("bfloat16", 2, None),
    27: ("uint16", 2, "uint16"), 28: ("uint32", 4, "uint32"), 29: ("uint64", 8, "uint64"),
}
QUANTIZED = (12, 13, 14)   # numpy arrays never map back to these

# code -> (name, bytes): what the program reader needs, without numpy
DTYPES = {c: (n, b) for c, (n, b, _np) in SCALAR_TYPES.items()}


def numpy_dtypes() -> dict:
    """code -> numpy scalar type, for every code numpy can hold."""
    import numpy as np
    return {c: np.dtype(t).type for c, (_n, _b, t) in SCALAR_TYPES.items() if t is not None}


def code_of(np_dtype) -> int | None:
    """The ScalarType code of a numpy dtype (plain types only), or None."""
    import numpy as np
    if np_dtype is None:
        return None
    try:
        dt = np.dtype(np_dtype)
    except TypeError:
        return None
    for c, (_n, _b, t) in SCALAR_TYPES.items():
        if t is not None and c not in QUANTIZED and np.dtype(t) == dt:
            return c
    return None
