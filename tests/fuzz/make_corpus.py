#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Regenerates the seed corpus of the wire_parse fuzz target (tests/fuzz/corpus/parse/).

Valid frames come from the project's own builder (roce-pcap write); this script splits the
pcap into one file per frame and derives the malformed and "other" seeds by editing bytes.
Standard library only.

usage: tests/fuzz/make_corpus.py [--roce-pcap build/apps/roce-pcap] [--out tests/fuzz/corpus/parse]
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# One seed per opcode; the four L3/L2 variants rotate over the opcodes so each appears often.
OPCODES = [
    "rc_send_first", "rc_send_middle", "rc_send_last", "rc_send_last_imm", "rc_send_only",
    "rc_send_only_imm", "rc_write_first", "rc_write_middle", "rc_write_last",
    "rc_write_last_imm", "rc_write_only", "rc_write_only_imm", "rc_read_request",
    "rc_read_resp_first", "rc_read_resp_middle", "rc_read_resp_last", "rc_read_resp_only",
    "rc_ack", "rc_atomic_ack", "rc_compare_swap", "rc_fetch_add", "rc_send_last_inv",
    "rc_send_only_inv", "uc_send_first", "uc_send_middle", "uc_send_last", "uc_send_last_imm",
    "uc_send_only", "uc_send_only_imm", "uc_write_first", "uc_write_middle", "uc_write_last",
    "uc_write_last_imm", "uc_write_only", "uc_write_only_imm", "ud_send_only",
    "ud_send_only_imm",
]
NO_PAYLOAD = {"rc_read_request", "rc_ack", "rc_atomic_ack", "rc_compare_swap", "rc_fetch_add"}
# Packets that may not pad (first / middle): payload a multiple of 4.
NO_PAD = {n for n in OPCODES if n.endswith("_first") or n.endswith("_middle")}
VARIANTS = ["ip=4", "ip=6", "ip=4,vlan=7,pcp=3", "ip=6,vlan=100,pcp=5"]


def frame_specs():
    """(file name, roce-pcap FRAME description) of every valid seed."""
    specs = []
    for i, op in enumerate(OPCODES):
        var = VARIANTS[i % len(VARIANTS)]
        desc = f"{op}:{var},psn={0x10000 + i},dqpn={0x100 + i},ackreq=1"
        if op not in NO_PAYLOAD:
            plen = 16 + 8 * (i % 5) if op in NO_PAD else 1 + (i * 7) % 61
            desc += f",payload={plen}"
        tag = var.replace("ip=", "v").replace(",vlan=", "_vlan").split(",")[0]
        specs.append((f"{op}_{tag}", desc))
    specs += [
        ("cnp_v4", "cnp:ip=4"),
        ("cnp_v6_vlan", "cnp:ip=6,vlan=3,pcp=6"),
        ("pfc", "pfc:enable=0x28,q3=65535,q5=100"),
        ("pfc_all", "pfc:enable=0xff,quanta=7"),
        ("pause", "pause:quanta=65535"),
        # the ICRC's two paths: one copy below 192 bytes after the prefix, CRC + combine above
        ("rc_send_only_v4_p200", "rc_send_only:ip=4,payload=200"),
        ("rc_write_only_v6_p1500", "rc_write_only:ip=6,payload=1500,va=0x1000,rkey=0x1234,dmalen=1500"),
        ("uc_send_last_v4_p4093", "uc_send_last:ip=4,vlan=9,payload=4093"),
        ("ud_send_only_v6_p8900", "ud_send_only:ip=6,payload=8900,qkey=0x80010000,srcqp=5"),
        ("rc_ack_nak", "rc_ack:ip=4,syndrome=0x61,msn=77"),
        ("rc_send_only_v4_empty", "rc_send_only:ip=4"),
        ("rc_send_only_flags", "rc_send_only:ip=6,se=1,mig=1,fecn=1,becn=1,pkey=0x8001,ecn=3,flowlabel=0xabcde,payload=3"),
        ("bad_icrc_v4", "rc_send_only:ip=4,payload=9,badicrc=1"),
        ("bad_icrc_v6", "rc_write_only:ip=6,vlan=2,payload=33,badicrc=1"),
    ]
    return specs


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        endian = ">"
    else:
        sys.exit(f"{path}: not a pcap file")
    off, frames = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack_from(endian + "IIII", data, off)
        off += 16
        frames.append(data[off:off + incl])
        off += incl
    return frames


# ---- helpers to derive seeds -------------------------------------------------------------
def l3_off(f):
    return 18 if f[12:14] == b"\x81\x00" else 14


def icrc(l3, covered, v6, rocev1=False):
    """ICRC of a RoCE packet whose IP header (or GRH) is l3[0:] (IBA A17.8.4)."""
    m = bytearray(l3[:covered])
    if v6:
        m[0] |= 0x0F
        m[1] = m[2] = m[3] = 0xFF
        m[7] = 0xFF
        hl = 40 if rocev1 else 48
    else:
        m[1] = m[8] = m[10] = m[11] = 0xFF
        hl = 28
    if not rocev1:
        m[hl - 2] = m[hl - 1] = 0xFF
    m[hl + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF


def roce_end(f):
    """Offset just past the ICRC of a RoCEv2 frame (from the IP length)."""
    o = l3_off(f)
    if f[o] >> 4 == 4:
        return o + struct.unpack_from(">H", f, o + 2)[0]
    return o + 40 + struct.unpack_from(">H", f, o + 4)[0]


def reseal(f):
    f = bytearray(f)
    o, end = l3_off(f), roce_end(f)
    v6 = f[o] >> 4 == 6
    f[end - 4:end] = struct.pack("<I", icrc(f[o:], end - 4 - o, v6))
    return bytes(f)


def set_lengths(f, delta):
    """Changes IP and UDP lengths by delta (keeps the frame bytes)."""
    f = bytearray(f)
    o = l3_off(f)
    if f[o] >> 4 == 4:
        struct.pack_into(">H", f, o + 2, struct.unpack_from(">H", f, o + 2)[0] + delta)
        u = o + 20
    else:
        struct.pack_into(">H", f, o + 4, struct.unpack_from(">H", f, o + 4)[0] + delta)
        u = o + 40
    struct.pack_into(">H", f, u + 4, struct.unpack_from(">H", f, u + 4)[0] + delta)
    return bytes(f)


def bth_off(f):
    o = l3_off(f)
    return o + (28 if f[o] >> 4 == 4 else 48)


def patch(f, off, val):
    f = bytearray(f)
    f[off:off + len(val)] = val
    return bytes(f)


def to_rocev1(f):
    """RoCEv2-over-IPv6 frame -> RoCEv1 (EtherType 0x8915, GRH next header 0x1B, no UDP)."""
    o = l3_off(f)
    end = roce_end(f)
    grh = bytearray(f[o:o + 40])
    transport = f[o + 48:end]  # BTH .. ICRC
    struct.pack_into(">H", grh, 4, len(transport))
    grh[6] = 0x1B
    body = bytearray(grh + transport)
    body[-4:] = struct.pack("<I", icrc(body, len(body) - 4, True, rocev1=True))
    eth = bytearray(f[:o])
    eth[o - 2:o] = b"\x89\x15"
    out = bytes(eth + body)
    return out + b"\x00" * max(0, 60 - len(out))


def derived(seeds):
    s4 = seeds["rc_send_only_v4_p200"]
    s6 = seeds["rc_write_only_v6_p1500"]
    first = next(v for k, v in seeds.items() if k.startswith("rc_send_first"))
    rreq = next(v for k, v in seeds.items() if k.startswith("rc_read_request"))
    cnp = seeds["cnp_v4"]
    pfc = seeds["pfc"]
    v6small = next(v for k, v in seeds.items() if k.startswith("rc_send_only_imm"))
    assert v6small[12:14] == b"\x86\xdd", "rc_send_only_imm seed expected over untagged IPv6"
    o4 = l3_off(s4)
    b4 = bth_off(s4)
    d = {}
    # truncations at every layer
    d["trunc_l2"] = s4[:10]
    tagged = next(v for k, v in seeds.items() if "_vlan" in k)
    d["trunc_vlan"] = tagged[:16]
    d["trunc_l3_v4"] = s4[:o4 + 12]
    d["trunc_l3_v6"] = s6[:14 + 30]
    d["trunc_frame_v4"] = s4[:120]  # IP total length beyond the frame
    d["trunc_bth"] = reseal(set_lengths(rreq, -16)[:roce_end(set_lengths(rreq, -16))])
    # IP layer
    d["bad_ip_version"] = patch(s4, o4, b"\x65")
    d["bad_ip_hlen"] = patch(s4, o4, b"\x44")
    opt = bytearray(s4[:o4 + 20] + b"\x01\x01\x01\x00" + s4[o4 + 20:])  # 4 bytes of NOP/EOL
    opt[o4] = 0x46
    struct.pack_into(">H", opt, o4 + 2, struct.unpack_from(">H", opt, o4 + 2)[0] + 4)
    d["ip_options"] = bytes(opt)
    d["ip_len_short"] = patch(s4, o4 + 2, b"\x00\x10")
    d["ip_fragment"] = patch(s4, o4 + 6, b"\x20\x00")
    d["ip_later_fragment"] = patch(s4, o4 + 6, b"\x00\x10")  # kind other
    d["udp_len"] = patch(s4, o4 + 24, b"\x00\x09")
    d["udp_other_port"] = patch(s4, o4 + 22, b"\x00\x35")  # DNS: other
    d["tcp"] = patch(s4, o4 + 9, b"\x06")
    d["ipv6_ext_hdr"] = patch(s6, 14 + 6, b"\x00")
    d["arp"] = patch(s4[:42], 12, b"\x08\x06")
    # transport
    d["bad_tver"] = reseal(patch(s4, b4 + 1, bytes([s4[b4 + 1] | 0x01])))
    d["unknown_opcode"] = reseal(patch(s4, b4, b"\x15"))
    d["bad_length"] = set_lengths(s4, -1)
    d["pad_on_first"] = reseal(patch(first, bth_off(first) + 1, bytes([first[bth_off(first) + 1] | 0x30])))
    empty = seeds["rc_send_only_v4_empty"]  # no payload: a pad count of 2 exceeds it
    d["pad_too_big"] = reseal(patch(empty, bth_off(empty) + 1, bytes([empty[bth_off(empty) + 1] | 0x20])))
    d["cnp_long"] = reseal(set_lengths(cnp + b"\x00" * 4, 4))
    d["no_payload_extra"] = reseal(set_lengths(rreq + b"\x00" * 4, 4))
    d["ecn_ce_ttl_changed"] = patch(patch(s4, o4 + 1, bytes([s4[o4 + 1] | 3])), o4 + 8, b"\x01")  # masked: ICRC still ok
    d["rocev1"] = to_rocev1(v6small)
    # MAC control
    d["mac_ctrl_trunc"] = pfc[:15]
    d["pfc_trunc"] = pfc[:20]
    d["pfc_bad_reserved"] = patch(pfc, 16, b"\x01")
    d["mac_ctrl_other"] = patch(pfc, 14, b"\x00\x03")
    return d


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roce-pcap", default=os.path.join(root, "build", "apps", "roce-pcap"))
    ap.add_argument("--out", default=os.path.join(here, "corpus", "parse"))
    args = ap.parse_args()

    specs = frame_specs()
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "seeds.pcap")
        subprocess.run([args.roce_pcap, "write", pcap] + [d for _, d in specs], check=True)
        frames = read_pcap(pcap)
    if len(frames) != len(specs):
        sys.exit(f"expected {len(specs)} frames, got {len(frames)}")
    seeds = {name: f for (name, _), f in zip(specs, frames)}
    seeds.update(derived(seeds))

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    total = 0
    for name, f in sorted(seeds.items()):
        with open(os.path.join(args.out, name), "wb") as out:
            out.write(f)
        total += len(f)
    print(f"{len(seeds)} seeds, {total} bytes in {args.out}")


if __name__ == "__main__":
    main()
