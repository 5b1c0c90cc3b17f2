#!/usr/bin/env python3
"""Writes the small Chakra fixtures of tests/data/chakra/ (README.md there) from feeder.0.et.

Chakra ET files are varint-length-delimited protobuf messages; this splices bytes and needs no
protobuf module. Run from the repository root: python3 tools/chakra_fixtures.py
"""
import pathlib

DATA = pathlib.Path("tests/data/chakra")


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def messages(data):
    """(start, end) of each length-prefixed message, prefix included."""
    pos = 0
    while pos < len(data):
        start, shift, length = pos, 0, 0
        while True:
            b = data[pos]
            pos += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        pos += length
        yield start, pos


def main():
    feeder = (DATA / "feeder.0.et").read_bytes()
    spans = list(messages(feeder))
    head = feeder[: spans[6][1]]  # GlobalMetadata and the first six nodes
    (DATA / "head.0.et").write_bytes(head)
    (DATA / "truncated.0.et").write_bytes(head[:-10])
    metadata = b"\x0a\x05" + b"0.0.4"  # GlobalMetadata.version = "0.0.4"
    # Node: id 1 (field 1), name "load" (field 2), type MEM_LOAD_NODE = 2 (field 3),
    # duration_micros 5 (field 7).
    node = b"\x08\x01" + b"\x12\x04load" + b"\x18\x02" + b"\x38\x05"
    mem_load = varint(len(metadata)) + metadata + varint(len(node)) + node
    (DATA / "mem-load.0.et").write_bytes(mem_load)
    # Ranks 0 and 2 without rank 1 (the files' contents are never read: the gap is found first).
    (DATA / "gap.0.et").write_bytes(mem_load)
    (DATA / "gap.2.et").write_bytes(mem_load)


if __name__ == "__main__":
    main()
