"""Bit primitives on 64-bit words, callable from numba kernels and from plain Python.

Inside ``@njit`` code each compiles to one LLVM instruction (ctpop, cttz, ctlz,
bitreverse); called from Python, or under ``NUMBA_DISABLE_JIT=1``, the
pure-Python bodies below run instead. Results are int64 counts/indices;
words are uint64 (any integer argument is read as its low 64 bits).

>>> popcount(0b1011), ctz(0b1000), msb(0b1000), ctz(0)
(3, 3, 3, 64)
>>> int(reverse_bits(0b0011, 4)), bin(low_mask(5))
(12, '0b11111')
>>> popcount_words(np.array([0b1011, 2**63], dtype=np.uint64))
4
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types

from epcg.combinatorics.jit import KERNEL
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = ["WORD_BITS", "check_board", "ctz", "low_mask", "msb", "popcount", "popcount_words", "prefetch", "reverse_bits"]

_WORD = (1 << 64) - 1
WORD_BITS = 64
"""Cells a bitboard holds: one uint64 word."""


def check_board(width: int, height: int) -> int:
    """The cells of a ``width × height`` board held in one word; ValueError if it has more than 64.

    >>> check_board(7, 8)
    56
    """
    if width * height > WORD_BITS:
        raise ValueError(f"a board has at most {WORD_BITS} cells, got {width} x {height}")
    return width * height


def popcount(x) -> int:
    """Number of set bits."""
    return (int(x) & _WORD).bit_count()


def popcount_words(words: np.ndarray) -> int:
    """Set bits of a whole array of uint64 words (plain Python; NumPy does the work)."""
    return int(np.bitwise_count(np.asarray(words, dtype=np.uint64)).sum(dtype=np.int64))


def ctz(x) -> int:
    """Index of the lowest set bit (count of trailing zeros); 64 for 0."""
    x = int(x) & _WORD
    return (x & -x).bit_length() - 1 if x else 64


def msb(x) -> int:
    """Index of the highest set bit; -1 for 0."""
    return (int(x) & _WORD).bit_length() - 1


def _unary_intrinsic(emit):
    """An intrinsic applying ``emit(builder, i64 value)`` to an integer cast to uint64."""

    @intrinsic
    def _impl(typingctx, x):
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return emit(builder, context.cast(builder, args[0], x, types.uint64))

        return types.int64(x), codegen

    return _impl


_FALSE = ir.Constant(ir.IntType(1), 0)
_llvm_ctpop = _unary_intrinsic(lambda b, v: b.ctpop(v))
_llvm_cttz = _unary_intrinsic(lambda b, v: b.cttz(v, _FALSE))
_llvm_ctlz = _unary_intrinsic(lambda b, v: b.ctlz(v, _FALSE))
_llvm_bitreverse = _unary_intrinsic(lambda b, v: b.bitreverse(v))


@overload(popcount)
def _popcount_jit(x):
    if isinstance(x, types.Integer):
        return lambda x: _llvm_ctpop(x)


@overload(ctz)
def _ctz_jit(x):
    if isinstance(x, types.Integer):
        return lambda x: _llvm_cttz(x)


@overload(msb)
def _msb_jit(x):
    if isinstance(x, types.Integer):
        return lambda x: 63 - _llvm_ctlz(x)


def _bitreverse64(x) -> int:
    """The 64 bits of ``x`` in reverse order (pure Python)."""
    return int(f"{int(x) & _WORD:064b}"[::-1], 2)


@overload(_bitreverse64)
def _bitreverse64_jit(x):
    if isinstance(x, types.Integer):
        return lambda x: np.uint64(_llvm_bitreverse(x))


@njit(**KERNEL)
def low_mask(m):
    """uint64 with the ``m`` lowest bits set, ``0 <= m <= 64``."""
    if m >= 64:
        return ~np.uint64(0)
    return (np.uint64(1) << np.uint64(m)) - np.uint64(1)


@njit(**KERNEL)
def reverse_bits(x, n):
    """The low ``n`` bits of ``x`` in reverse order: bit ``i`` moves to bit ``n-1-i`` (``1 <= n <= 64``)."""
    return np.uint64(_bitreverse64(x)) >> np.uint64(64 - n)


def prefetch(words, index) -> None:
    """Hint that ``words[index]`` will be read soon (a no-op in plain Python).

    In ``@njit`` code it is LLVM's ``prefetch`` (read, keep in all cache
    levels): a kernel that knows the scattered indices it will read a few
    hundred steps ahead issues them early, so the reads find their cache lines
    instead of each waiting for memory. The index is not checked.
    """


@intrinsic
def _llvm_prefetch(typingctx, words, index):
    if not isinstance(words, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        pointer = builder.gep(array.data, [args[1]])
        i32 = ir.IntType(32)
        kind = ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, kind, "llvm.prefetch.p0")
        builder.call(function, [pointer, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(words, index), codegen


@overload(prefetch)
def _prefetch_jit(words, index):
    if isinstance(words, types.Array) and isinstance(index, types.Integer):
        return lambda words, index: _llvm_prefetch(words, index)
