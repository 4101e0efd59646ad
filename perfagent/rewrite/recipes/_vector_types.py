"""vectorize-access: the 16-byte vector type each element type is loaded and stored through.

An array of ``float`` moves through ``float4`` (its lanes are the fields x, y, z, w), of ``double``
through ``double2``, of ``int`` through ``int4``, of ``long long`` through ``longlong2``. Types whose
16-byte vector has no field of their own type (``__half``, ``__nv_bfloat16``, 1- and 2-byte integers,
the ``<stdint.h>`` and platform names) move through ``uint4`` and are read and written through a typed
view of it, ``reinterpret_cast<T *>(&v)[k]``: nvcc keeps the view in registers (constant lane indices)
and emits one ``ld.global.v4.u32`` / ``st.global.v4.u32`` per vector, as the textbook fp16 and uint8
kernels do.
"""

from __future__ import annotations

from dataclasses import dataclass

VECTOR_BYTES = 16
"""Bytes per access: LDG.128 / STG.128."""
MAX_VECTORS = 4
"""Most 16-byte vectors one array may take per group (mixing 1-byte with 4-byte elements gives 4)."""


@dataclass(frozen=True)
class Element:
    """How one element type is vectorised."""

    spelling: str
    """The type as the kernel spells it (whitespace-normalised): used in the casts of the view."""
    size: int
    """Bytes per element."""
    vector: str
    """The 16-byte CUDA vector type its arrays are loaded and stored as."""
    fields: tuple[str, ...]
    """The vector's fields when their type is the element type (its lanes); empty: a typed view."""
    platform: bool = False
    """Its size depends on the platform (``long``, ``size_t``): the rewrite asserts it statically."""

    @property
    def per_vector(self) -> int:
        return VECTOR_BYTES // self.size


_NATIVE: dict[str, tuple[int, str, tuple[str, ...]]] = {
    "float": (4, "float4", ("x", "y", "z", "w")),
    "double": (8, "double2", ("x", "y")),
    "int": (4, "int4", ("x", "y", "z", "w")),
    "signed": (4, "int4", ("x", "y", "z", "w")),
    "signed int": (4, "int4", ("x", "y", "z", "w")),
    "unsigned": (4, "uint4", ("x", "y", "z", "w")),
    "unsigned int": (4, "uint4", ("x", "y", "z", "w")),
    "long long": (8, "longlong2", ("x", "y")),
    "long long int": (8, "longlong2", ("x", "y")),
    "signed long long": (8, "longlong2", ("x", "y")),
    "signed long long int": (8, "longlong2", ("x", "y")),
    "unsigned long long": (8, "ulonglong2", ("x", "y")),
    "unsigned long long int": (8, "ulonglong2", ("x", "y")),
}
"""Element types whose 16-byte vector has fields of exactly that type."""

_VIEWED: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "short int": 2, "signed short": 2, "signed short int": 2, "unsigned short": 2,
    "unsigned short int": 2, "int16_t": 2, "uint16_t": 2,
    "__half": 2, "half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2,
    "int32_t": 4, "uint32_t": 4, "__half2": 4, "half2": 4, "__nv_bfloat162": 4, "nv_bfloat162": 4,
    "int64_t": 8, "uint64_t": 8,
}  # fmt: skip
"""Element types read and written through a typed view of a ``uint4``, by size."""

_PLATFORM: dict[str, int] = {
    "long": 8, "long int": 8, "signed long": 8, "signed long int": 8, "unsigned long": 8,
    "unsigned long int": 8, "size_t": 8, "ptrdiff_t": 8,
}  # fmt: skip
"""64-bit on the LP64 hosts CUDA supports on Linux; the rewrite asserts the size statically."""


def element(spelling: str) -> Element | None:
    """How ``spelling`` (a pointee type, whitespace-normalised) is vectorised; None: no 16-byte form."""
    if spelling in _NATIVE:
        size, vector, fields = _NATIVE[spelling]
        return Element(spelling, size, vector, fields)
    if spelling in _VIEWED:
        return Element(spelling, _VIEWED[spelling], "uint4", ())
    if spelling in _PLATFORM:
        return Element(spelling, _PLATFORM[spelling], "uint4", (), platform=True)
    return None


def supported() -> str:
    """A short list of the element types, for refusals."""
    return "float, double, [unsigned] int/long long, 8/16/32/64-bit integers, __half, __nv_bfloat16, __half2"


VECTOR_TYPES = frozenset(
    {
        "float2", "float4", "double2", "int2", "int4", "uint2", "uint4", "longlong2", "ulonglong2",
        "char4", "uchar4", "short4", "ushort4", "short2", "ushort2", "char2", "uchar2",
    }
)  # fmt: skip
"""CUDA vector types: a kernel that already uses one (or ``reinterpret_cast``) is left alone."""


@dataclass(frozen=True)
class Layout:
    """One array's share of a group: how many vectors, and the lane expression of each element."""

    element: Element
    vectors: int
    """16-byte vectors per group (1 unless element sizes are mixed)."""

    def lane(self, var: str, view: str, k: int) -> str:
        """Lane ``k`` of the group: ``x_v.y``, ``x_v[1].y`` or ``x_e[k]`` (typed view)."""
        fields = self.element.fields
        if not fields:
            return f"{view}[{k}]"
        field = fields[k % len(fields)]
        return f"{var}.{field}" if self.vectors == 1 else f"{var}[{k // len(fields)}].{field}"


def group_width(elements: list[Element]) -> int:
    """Elements per group: one 16-byte vector of the smallest element type."""
    return VECTOR_BYTES // min(e.size for e in elements)
