"""Slow, obviously-right references for the DWP domain (SDA bits, map builder, fitness).

Written from the definitions in the module docstrings of ``epcg.games.dwp.domain.sda``
and ``epcg.games.dwp.domain.maps``, with plain lists, a queue and a set of cells.
"""

from __future__ import annotations

from collections import deque


def sda_bits(genome, n: int) -> list[int]:
    """First ``n`` output bits: emitted bits are queued and consumed one at a time as input."""
    rows = [[int(v) for v in row] for row in genome]

    def emitted(state):
        length, b0, b1 = rows[state][0], rows[state][1], rows[state][2]
        return [b0, b1][:length]

    out = emitted(0)
    queue = deque(out)
    state = 0
    while len(out) < n:
        bit = queue.popleft()
        state = rows[state][3 + bit]
        new = emitted(state)
        out += new
        queue.extend(new)
    return out[:n]


def build_map(bits, grid, starts, obstacles=(), max_rooms=256, hack=False, proposals=1024):
    """Rooms ``[(row, col, h, w, kind)]``, occupied cells ``{(row, col): kind}`` and fitness of a bit stream."""
    rows, cols = grid
    room_bits = max(1, (max_rooms - 1).bit_length())
    widest = max([19] + [max(h, w) + 3 for _, _, h, w in starts])  # most positions along any side
    offset_bits = max(5, (widest - 1).bit_length())
    cells = {}
    for r0, c0, h, w in obstacles:
        for r in range(r0, r0 + h):
            for c in range(c0, c0 + w):
                cells[r, c] = 4
    rooms = []
    for r0, c0, h, w in starts:
        rooms.append((r0, c0, h, w, 3))
        for r in range(r0, r0 + h):
            for c in range(c0, c0 + w):
                cells[r, c] = 3
    stream = list(bits)
    per = (4 if hack else room_bits) + 9 + offset_bits
    pos = 0

    def take(k):
        nonlocal pos
        value = int("".join(str(b) for b in stream[pos:pos + k]), 2)
        pos += k
        return value

    read = 0
    while read < proposals and len(rooms) < max_rooms and pos + per <= len(stream):
        read += 1
        if hack:
            recent = rooms[-10:][::-1]  # newest first
            focal = recent[take(4) % len(recent)]
        else:
            focal = rooms[take(room_bits) % len(rooms)]
        side = take(2)
        corridor = take(3) == 0
        if corridor:
            length = take(4) + 1
            h, w = (length, 1) if side in (0, 1) else (1, length)
        else:
            h = {0: 2, 1: 2, 2: 3, 3: 4}[take(2)]
            w = {0: 2, 1: 2, 2: 3, 3: 4}[take(2)]
        offset = take(offset_bits)
        fr, fc, fh, fw, _ = focal
        # every placement touching the side with at least one shared wall cell, lowest first
        if side in (0, 1):
            r0 = fr - h if side == 0 else fr + fh
            choices = [(r0, c0) for c0 in range(fc - w + 1, fc + fw)]
        else:
            c0 = fc - w if side == 2 else fc + fw
            choices = [(r0, c0) for r0 in range(fr - h + 1, fr + fh)]
        r0, c0 = choices[offset % len(choices)]
        rect = [(r, c) for r in range(r0, r0 + h) for c in range(c0, c0 + w)]
        if all(0 <= r < rows and 0 <= c < cols and (r, c) not in cells for r, c in rect):
            kind = 2 if corridor else 1
            rooms.append((r0, c0, h, w, kind))
            for cell in rect:
                cells[cell] = kind
    return rooms, cells, fitness(cells), read


def fitness(cells) -> float:
    """``A² / B`` over the cells of kind 1, 2, 3."""
    built = [cell for cell, kind in cells.items() if kind in (1, 2, 3)]
    rows = [r for r, _ in built]
    cols = [c for _, c in built]
    box = (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)
    return len(built) ** 2 / box
