"""The wire protocol on the host side: framing, checks, loss accounting, and that corrupted bytes
never come out as good data."""
import random
import struct
import zlib

import numpy as np
import pytest

from etdeploy import link

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("n", [0, 1, 2, 253, 254, 255, 256, 508, 509, 4096])
def test_cobs_roundtrip(n):
    rng = random.Random(n)
    for data in (bytes(rng.randrange(256) for _ in range(n)), bytes(n), b"\xff" * n):
        enc = link.cobs_encode(data)
        assert 0 not in enc
        assert link.cobs_decode(enc) == data


def frames(payloads):
    enc = link.Encoder()
    return b"".join(enc.frame(link.LOG, p) for p in payloads)


def test_decoder_reassembles_split_stream():
    payloads = [bytes([i]) * (i * 37 % 600) for i in range(40)]
    stream = frames(payloads)
    dec = link.Decoder()
    got = []
    rng = random.Random(1)
    i = 0
    while i < len(stream):
        k = rng.randrange(1, 50)
        got += dec.feed(stream[i:i + k])
        i += k
    assert [r.payload for r in got] == payloads
    assert dec.stats.bad_frames == 0 and dec.stats.lost_frames == 0


def test_dropped_frame_is_counted_as_lost():
    enc = link.Encoder()
    fs = [enc.frame(link.LOG, b"x%d" % i) for i in range(5)]
    dec = link.Decoder()
    got = dec.feed(fs[0] + fs[1] + fs[3] + fs[4])
    assert len(got) == 4 and dec.stats.lost_frames == 1


def test_crc_failure_drops_frame():
    body = struct.pack("<BH", link.LOG, 0) + b"hello"
    good = link.cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"
    bad = bytearray(good)
    bad[3] ^= 0x10
    dec = link.Decoder()
    assert dec.feed(bytes(bad)) == []
    assert dec.stats.bad_frames == 1


def test_random_corruption_never_yields_wrong_payload():
    """At a 1e-3 byte error rate, every frame that comes out is byte-exact."""
    rng = random.Random(7)
    payloads = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))) for _ in range(2000)]
    stream = bytearray(frames(payloads))
    flips = 0
    for i in range(len(stream)):
        if rng.random() < 1e-3:
            stream[i] ^= 1 << rng.randrange(8)
            flips += 1
    dec = link.Decoder()
    got = dec.feed(bytes(stream))
    dec.finish()
    assert flips > 100
    sent = {r: p for r, p in enumerate(payloads)}
    for rec in got:
        assert rec.payload == sent[rec.seq], "a corrupted frame was accepted"
    assert len(got) < len(payloads)
    assert dec.stats.bad_frames + dec.stats.lost_frames >= len(payloads) - len(got)


def test_output_record_decodes_tensor():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    p = struct.pack("<BBHHBBBB", 0, 0, 0xFFFF, 1, 5, 6, 2, 0) + struct.pack("<2i", 3, 4) + bytes([0, 1]) + arr.tobytes()
    out = link.parse_record(link.Record(link.OUTPUT, 0, p))["output"]
    assert out.case is None and out.index == 1
    np.testing.assert_array_equal(out.value, arr)


def test_output_record_with_wrong_size_is_malformed():
    p = struct.pack("<BBHHBBBB", 0, 0, 0, 0, 5, 6, 1, 0) + struct.pack("<i", 4) + bytes([0]) + b"\0" * 12
    assert link.parse_record(link.Record(link.OUTPUT, 0, p))["kind"] == "malformed"


def test_output_in_channels_last_comes_back_logical():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    p = struct.pack("<BBHHBBBB", 0, 0, 0, 0, 5, 6, 4, 0) + struct.pack("<4i", 2, 3, 4, 5) + bytes([0, 2, 3, 1]) \
        + nhwc.tobytes()
    np.testing.assert_array_equal(link.parse_record(link.Record(link.OUTPUT, 0, p))["output"].value, x)
