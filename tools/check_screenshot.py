#!/usr/bin/env python3
"""Checks that a screenshot of a topsim report shows its charts: counts the pixels drawn in the
charts' palette (src/report/chart.cpp) and fails unless at least COLOURS of those colours each
cover MIN_PIXELS pixels. Standard library only (a PNG decoder for 8-bit RGB/RGBA, as Chromium
writes them).

    python3 tools/check_screenshot.py SHOT.png COLOURS MIN_PIXELS
"""
import struct
import sys
import zlib

PALETTE = {"blue": (0x00, 0x72, 0xB2), "orange": (0xE6, 0x9F, 0x00), "green": (0x00, 0x9E, 0x73),
           "vermillion": (0xD5, 0x5E, 0x00), "purple": (0xCC, 0x79, 0xA7), "sky": (0x56, 0xB4, 0xE9),
           "viridis-top": (0xFD, 0xE7, 0x25)}  # a heat-map cell at 100% utilisation


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        sys.exit(f"{path}: unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous, i = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def main():
    path, colours, minimum = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    width, height, channels, rows = decode(path)
    counts = {name: 0 for name in PALETTE}
    for line in rows:
        for x in range(0, width * channels, channels):
            pixel = (line[x], line[x + 1], line[x + 2])
            for name, rgb in PALETTE.items():
                if all(abs(p - q) <= 12 for p, q in zip(pixel, rgb)):
                    counts[name] += 1
    shown = [name for name, n in counts.items() if n >= minimum]
    print(f"{path}: {width}x{height}; chart colours: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if len(shown) < colours:
        sys.exit(f"{path}: only {len(shown)} chart colours cover {minimum} pixels (need {colours}): the charts are missing")


main()
