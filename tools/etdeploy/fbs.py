"""A small FlatBuffers schema (.fbs) reader and a bounds-checked generic decoder.

The schemas come from the installed executorch wheel (never vendored). From them we derive the
field slots the C runtime uses (`c_header`) and decode .pte/.bpte files in Python (`decode`).
Every malformed offset raises FlatbufferError, never IndexError/struct.error.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

SCALARS = {
    "bool": ("<B", 1), "byte": ("<b", 1), "ubyte": ("<B", 1), "int8": ("<b", 1), "uint8": ("<B", 1),
    "short": ("<h", 2), "ushort": ("<H", 2), "int16": ("<h", 2), "uint16": ("<H", 2),
    "int": ("<i", 4), "uint": ("<I", 4), "int32": ("<i", 4), "uint32": ("<I", 4),
    "long": ("<q", 8), "ulong": ("<Q", 8), "int64": ("<q", 8), "uint64": ("<Q", 8),
    "float": ("<f", 4), "double": ("<d", 8),
}


class FlatbufferError(ValueError):
    """The bytes do not decode under the schema (bad offset, truncated, wrong type)."""


@dataclass
class Field:
    name: str
    type: str            # scalar name, table/enum/union name, "string", or "[T]"
    slot: int            # vtable index
    default: object = None


@dataclass
class Schema:
    tables: dict[str, list[Field]] = field(default_factory=dict)
    enums: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)  # name -> (base, values)
    unions: dict[str, list[str]] = field(default_factory=dict)                 # members, type id = idx+1
    structs: set = field(default_factory=set)
    root: str = ""
    ident: str = ""


def _strip(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _short(name: str) -> str:
    return name.split(".")[-1]


def parse(paths: list[Path]) -> Schema:
    s = Schema()
    seen: set[Path] = set()
    todo = list(paths)
    while todo:
        p = Path(todo.pop(0))
        if p in seen:
            continue
        seen.add(p)
        text = _strip(p.read_text())
        for inc in re.findall(r'include\s+"([^"]+)"\s*;', text):
            todo.append(p.parent / inc)
        m = re.search(r"root_type\s+(\w+)\s*;", text)
        if m:
            s.root = m.group(1)
        m = re.search(r'file_identifier\s+"(\w+)"\s*;', text)
        if m:
            s.ident = m.group(1)
        for kind, name, base, body in re.findall(
                r"\b(table|struct|enum|union)\s+(\w+)\s*(?::\s*(\w+))?\s*(?:\([^)]*\))?\s*\{(.*?)\}", text, re.S):
            if kind in ("table", "struct"):
                if kind == "struct":
                    s.structs.add(name)
                fields, slot = [], 0
                for decl in filter(None, (d.strip() for d in body.split(";"))):
                    fm = re.match(r"(\w+)\s*:\s*(\[?[\w.]+\]?)\s*(?:=\s*([^\s(]+))?\s*(\(.*\))?$", decl, re.S)
                    if not fm:
                        raise FlatbufferError(f"cannot parse field '{decl}' in {name}")
                    fname, ftype, default, attrs = fm.groups()
                    ftype = re.sub(r"[\w.]+", lambda mm: _short(mm.group(0)), ftype)
                    if attrs and "id:" in attrs:
                        slot = int(re.search(r"id:\s*(\d+)", attrs).group(1))
                    fields.append(Field(fname, ftype, slot, default))
                    slot += 1
                s.tables[name] = fields
            elif kind == "enum":
                vals, nxt = {}, 0
                for item in filter(None, (i.strip() for i in body.split(","))):
                    if "=" in item:
                        k, v = (x.strip() for x in item.split("="))
                        nxt = int(v, 0)
                    else:
                        k = item
                    vals[k] = nxt
                    nxt += 1
                s.enums[name] = (base or "int", vals)
            else:
                s.unions[name] = [_short(i.strip()) for i in body.split(",") if i.strip()]
    # A union field occupies two slots: <name>_type then <name>; fix slot numbering.
    for tname, fields in s.tables.items():
        slot = 0
        for f in fields:
            f.slot = slot
            slot += 2 if f.type in s.unions else 1
    return s


def c_header(schema: Schema, prefix: str) -> str:
    """#defines for vtable slots (`<P>_<Table>_<field>`; unions: `_type` slot and value slot)
    and union member type ids (`<P>_<Union>_<Member>`)."""
    out = [f"/* Generated from the executorch wheel's schema by etdeploy.fbs. Do not edit. */"]
    for t, fields in schema.tables.items():
        for f in fields:
            if f.type in schema.unions:
                out.append(f"#define {prefix}_{t}_{f.name}_type {f.slot}")
                out.append(f"#define {prefix}_{t}_{f.name} {f.slot + 1}")
            else:
                out.append(f"#define {prefix}_{t}_{f.name} {f.slot}")
    for u, members in schema.unions.items():
        for i, m in enumerate(members):
            out.append(f"#define {prefix}_{u}_{m} {i + 1}")
    for e, (_, vals) in schema.enums.items():
        for k, v in vals.items():
            out.append(f"#define {prefix}_{e}_{k} {v}")
    return "\n".join(out) + "\n"


class Reader:
    """Decodes a flatbuffer into plain dicts/lists under a schema, checking every offset.
    Vectors of ubyte come back as memoryview slices with their absolute offset in `.offsets`."""

    def __init__(self, schema: Schema, buf: bytes, limit: int | None = None):
        self.s = schema
        self.buf = memoryview(buf)
        self.n = len(buf) if limit is None else min(limit, len(buf))
        self.byte_vectors: dict[int, int] = {}   # id(obj) unused; see decode's ubyte handling

    def _u(self, fmt: str, pos: int):
        size = struct.calcsize(fmt)
        if pos < 0 or pos + size > self.n:
            raise FlatbufferError(f"read of {size} bytes at {pos} outside buffer of {self.n}")
        return struct.unpack_from(fmt, self.buf, pos)[0]

    def root(self) -> dict:
        return self.table(self.s.root, self._u("<I", 0))

    def _field_pos(self, tpos: int, slot: int) -> int:
        vt = tpos - self._u("<i", tpos)
        vtsize = self._u("<H", vt)
        if vtsize < 4 or vtsize % 2:
            raise FlatbufferError(f"bad vtable size {vtsize} at {vt}")
        if 4 + 2 * slot >= vtsize:
            return 0
        off = self._u("<H", vt + 4 + 2 * slot)
        return tpos + off if off else 0

    def _deref(self, pos: int) -> int:
        return pos + self._u("<I", pos)

    def table(self, name: str, tpos: int, depth: int = 0) -> dict:
        if depth > 32:
            raise FlatbufferError("nesting too deep")
        if name not in self.s.tables:
            raise FlatbufferError(f"unknown table {name}")
        out: dict = {"_pos": tpos}
        for f in self.s.tables[name]:
            if f.type in self.s.unions:
                tp = self._field_pos(tpos, f.slot)
                tid = self._u("<B", tp) if tp else 0
                members = self.s.unions[f.type]
                if tid == 0:
                    out[f.name] = None
                    out[f.name + "_type"] = None
                    continue
                if tid > len(members):
                    raise FlatbufferError(f"union {f.type} type id {tid} out of range")
                vp = self._field_pos(tpos, f.slot + 1)
                mname = members[tid - 1]
                out[f.name + "_type"] = mname
                out[f.name] = self.table(mname, self._deref(vp), depth + 1) if vp else None
                continue
            pos = self._field_pos(tpos, f.slot)
            out[f.name] = self._value(f, pos, depth)
        return out

    def _scalar_default(self, f: Field):
        t = f.type
        if t in self.s.enums:
            vals = self.s.enums[t][1]
            if f.default is not None and f.default in vals:
                return vals[f.default]
            return 0
        if t == "bool":
            return f.default == "true"
        if t in ("float", "double"):
            return float(f.default) if f.default else 0.0
        return int(f.default, 0) if f.default else 0

    def _value(self, f: Field, pos: int, depth: int):
        t = f.type
        if t in SCALARS or t in self.s.enums:
            if not pos:
                return self._scalar_default(f)
            fmt = SCALARS[self.s.enums[t][0] if t in self.s.enums else t][0]
            v = self._u(fmt, pos)
            return bool(v) if t == "bool" else v
        if not pos:
            return None
        target = self._deref(pos)
        if t == "string":
            n = self._u("<I", target)
            if target + 4 + n > self.n:
                raise FlatbufferError(f"string of {n} bytes at {target} overruns buffer")
            return bytes(self.buf[target + 4:target + 4 + n]).decode("utf-8", "replace")
        if t.startswith("["):
            et = t[1:-1]
            n = self._u("<I", target)
            start = target + 4
            if et in SCALARS or et in self.s.enums:
                fmt, size = SCALARS[self.s.enums[et][0] if et in self.s.enums else et]
                if start + n * size > self.n:
                    raise FlatbufferError(f"vector of {n} x {size} bytes at {start} overruns buffer")
                if et in ("ubyte", "uint8", "byte", "int8"):
                    return ByteSpan(start, n, self.buf)
                return list(struct.unpack_from("<" + fmt[1] * n, self.buf, start))
            if start + 4 * n > self.n:
                raise FlatbufferError(f"vector of {n} offsets at {start} overruns buffer")
            if et == "string":
                return [self._value(Field("", "string", 0), start + 4 * i, depth) for i in range(n)]
            return [self.table(et, self._deref(start + 4 * i), depth + 1) for i in range(n)]
        return self.table(t, target, depth + 1)


@dataclass(frozen=True)
class ByteSpan:
    """A [ubyte] vector: where it lies in the buffer, without copying it."""
    offset: int
    size: int
    buf: memoryview

    def tobytes(self) -> bytes:
        return bytes(self.buf[self.offset:self.offset + self.size])

    def __len__(self) -> int:
        return self.size


def wheel_dir() -> Path:
    """Where executorch's schemas live, found without importing executorch (which costs ~9 s)."""
    import importlib.util
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise FlatbufferError("the executorch package is not installed: run tools/bootstrap.sh")
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=None)
def program_schema() -> Schema:
    return parse([wheel_dir() / "schema" / "program.fbs"])


@lru_cache(maxsize=None)
def bundled_schema() -> Schema:
    return parse([wheel_dir() / "devtools" / "bundled_program" / "schema" / "bundled_program_schema.fbs"])


@lru_cache(maxsize=None)
def etdump_schema() -> Schema:
    return parse([wheel_dir() / "devtools" / "etdump" / "etdump_schema_flatcc.fbs"])


def build(schema: Schema, obj: dict, table: str | None = None, size_prefixed: bool = False) -> bytes:
    """Serialise a dict under the schema (the inverse of Reader): nested dicts are tables, lists
    are vectors, unions take `<field>_type` (member name) beside `<field>`."""
    import flatbuffers

    b = flatbuffers.Builder(1024)
    table = table or schema.root

    def scalar_prepend(t: str):
        base = schema.enums[t][0] if t in schema.enums else t
        return {"bool": b.PrependBool, "byte": b.PrependInt8, "ubyte": b.PrependUint8, "int8": b.PrependInt8,
                "uint8": b.PrependUint8, "short": b.PrependInt16, "ushort": b.PrependUint16,
                "int16": b.PrependInt16, "uint16": b.PrependUint16, "int": b.PrependInt32,
                "uint": b.PrependUint32, "int32": b.PrependInt32, "uint32": b.PrependUint32,
                "long": b.PrependInt64, "ulong": b.PrependUint64, "int64": b.PrependInt64,
                "uint64": b.PrependUint64, "float": b.PrependFloat32, "double": b.PrependFloat64}[base]

    def is_scalar(t: str) -> bool:
        return t in SCALARS or t in schema.enums

    def enum_value(t: str, v):
        if t in schema.enums and isinstance(v, str):
            return schema.enums[t][1][v]
        return v

    def make(tname: str, d: dict) -> int:
        fields = schema.tables[tname]
        offs = {}
        for f in fields:
            v = d.get(f.name)
            if v is None:
                continue
            if f.type in schema.unions:
                mname = d.get(f.name + "_type")
                offs[f.name] = make(mname, v)
            elif f.type == "string":
                offs[f.name] = b.CreateString(v)
            elif f.type.startswith("["):
                et = f.type[1:-1]
                if is_scalar(et):
                    size = SCALARS[schema.enums[et][0] if et in schema.enums else et][1]
                    if isinstance(v, (bytes, bytearray, memoryview)):
                        offs[f.name] = b.CreateByteVector(bytes(v))
                        continue
                    b.StartVector(size, len(v), size)
                    pre = scalar_prepend(et)
                    for x in reversed(v):
                        pre(enum_value(et, x))
                    offs[f.name] = b.EndVector()
                else:
                    elems = [b.CreateString(x) if et == "string" else make(et, x) for x in v]
                    b.StartVector(4, len(elems), 4)
                    for e in reversed(elems):
                        b.PrependUOffsetTRelative(e)
                    offs[f.name] = b.EndVector()
            elif not is_scalar(f.type):
                offs[f.name] = make(f.type, v)
        nslots = max((f.slot + (2 if f.type in schema.unions else 1) for f in fields), default=0)
        b.StartObject(nslots)
        for f in fields:
            v = d.get(f.name)
            if f.type in schema.unions:
                if v is not None:
                    mname = d.get(f.name + "_type")
                    b.PrependUint8Slot(f.slot, schema.unions[f.type].index(mname) + 1, 0)
                    b.PrependUOffsetTRelativeSlot(f.slot + 1, offs[f.name], 0)
            elif f.name in offs:
                b.PrependUOffsetTRelativeSlot(f.slot, offs[f.name], 0)
            elif v is not None and is_scalar(f.type):
                # Written even when equal to the default: readers see what we meant.
                scalar_prepend(f.type)(enum_value(f.type, v))
                b.Slot(f.slot)
        return b.EndObject()

    root = make(table, obj)
    ident = schema.ident.encode() if schema.ident else None
    if size_prefixed:
        b.FinishSizePrefixed(root, file_identifier=ident)
    else:
        b.Finish(root, file_identifier=ident)
    return bytes(b.Output())
