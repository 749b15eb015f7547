"""Bad frames from the wire (issue 10): random, truncated, corrupted, oversize and jumbo frames
fed to the engine through net_pcap are counted by reason and dropped, and the engine neither
crashes nor stalls. CI runs this on the release build and on the ASan + UBSan build. Valid frames
are made by scapy (which computes the ICRC), not by the engine's own builder."""
import random
import struct
import subprocess
import time

from scapy.all import IP, IPv6, UDP, Ether, Raw, raw
from scapy.contrib.roce import BTH

import oracle_common as oc
from conftest import engine_path
from test_engine import MAC_A, MAC_B, cfg, port, role

QPN = 0x77


def roce(psn, payload=256, qpn=QPN, chksum=None):
    """An RC SEND ONLY (opcode 4) with a correct ICRC, by scapy (and its IPv4 checksum, unless given)."""
    return bytes(Ether(dst=MAC_B, src=MAC_A) / IP(src="192.168.1.1", dst="192.168.1.2", flags="DF", chksum=chksum)
                 / UDP(sport=49152, dport=4791) / BTH(opcode=4, dqpn=qpn, psn=psn) / Raw(bytes(payload)))


def roce_v6(psn, qpn, payload=64):
    """The same over IPv6, its ICRC from the plain-bytes reference (scapy 2.5 cannot)."""
    f = bytearray(raw(Ether(dst=MAC_B, src=MAC_A) / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=49152, dport=4791) /
                      BTH(opcode=4, dqpn=qpn, psn=psn) / Raw(bytes(payload)) / Raw(b"\0" * 4)))
    f[-4:] = oc.icrc_v2(bytes(f[14:-4])).to_bytes(4, "little")
    return bytes(f)


def write_pcap(path, frames):
    with open(path, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))  # Ethernet
        for f in frames:
            fh.write(struct.pack("<IIII", 1, 0, len(f), len(f)) + f)


def run(engine, tmp_path, frames, mtu=9000, extra=""):
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, frames)
    p = port("p", "net_pcap0", MAC_B, "192.168.1.2", 'vdev_args = "rx_pcap=%s"; mtu = %d; %s' % (pcap, mtu, extra))
    t0 = time.monotonic()
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "rx")], []), "-d", "1.5", timeout=60)
    assert rc == 0, out
    assert time.monotonic() - t0 < 30, "the engine stalled"
    return rep


def conservation(rep, n_frames, total_bytes):
    """Every frame is counted once: by reason when malformed, else as what it is."""
    p = rep["ports"][0]
    assert p["rx_packets"] == n_frames and p["rx_bytes"] == total_bytes
    assert p["pmd"]["ipackets"] == n_frames
    assert sum(rep["errors"].values()) - rep["errors"]["rx_qp_table_full"] == p["rx_malformed"]
    assert p["rx_dropped"] == p["rx_malformed"] + rep["errors"]["rx_qp_table_full"]
    return p


def test_truncated_at_every_length(engine, tmp_path):
    good = roce(0)
    frames = [good[:cut] for cut in range(1, len(good))] + [roce(1)]
    rep = run(engine, tmp_path, frames)
    p = conservation(rep, len(frames), sum(map(len, frames)))
    e = rep["errors"]
    # Ethernet 14, IPv4 20: below those the headers are cut; beyond, the IP length overruns
    assert e["truncated_l2"] == 13 and e["truncated_l3"] == 20 and e["ip_len"] == len(good) - 1 - 33
    assert p["rx_malformed"] == len(good) - 1
    assert [q["packets"] for q in rep["rx_qps"] if q["qpn"] == QPN] == [1]  # the whole one went through


def test_corrupted_payload_bits_fail_the_icrc(engine, tmp_path):
    rng = random.Random(11)
    frames, flipped = [], 0
    for psn in range(300):
        f = bytearray(roce(psn))
        if psn % 3:  # two in three get 1..4 bits flipped in the payload (covered by the ICRC, not masked)
            for bit in rng.sample(range(54 * 8, (len(f) - 4) * 8), rng.randint(1, 4)):  # distinct bits
                f[bit // 8] ^= 1 << (bit % 8)
            flipped += 1
        frames.append(bytes(f))
    rep = run(engine, tmp_path, frames)
    p = conservation(rep, len(frames), sum(map(len, frames)))
    assert rep["errors"]["icrc"] == flipped == p["rx_malformed"]
    q = [q for q in rep["rx_qps"] if q["qpn"] == QPN][0]
    assert q["icrc_errors"] == flipped and q["messages"] == len(frames) - flipped


def test_wrong_ipv4_header_checksum_is_counted_and_not_delivered(engine, tmp_path):
    """Scapy's frames, a third of them given a wrong IPv4 header checksum (which the ICRC leaves
    out: their ICRCs are right) for a QPN of their own: counted as ip_checksum, none reaches a
    receiver QP, not even when rx_inject's CE mark (which writes a new checksum) is on; IPv6
    frames, which have no header checksum, and the good IPv4 ones are all received."""
    good, bad, v6 = [], [], []
    for psn in range(60):
        good.append(roce(psn))
        right = Ether(roce(psn, qpn=QPN + 1))[IP].chksum
        bad.append(roce(psn, qpn=QPN + 1, chksum=right ^ (1 << (psn % 16))))
        v6.append(roce_v6(psn, QPN + 2))
    for f in good + bad:  # every ICRC right (it masks the checksum); only the bad ones' checksums wrong
        assert oc.icrc_v2(f[14:-4]) == int.from_bytes(f[-4:], "little")
        assert (oc.inet_csum(f[14:34]) == 0) == (f in good)
    frames = [x for trio in zip(good, bad, v6) for x in trio]
    for extra in ("", 'rx_inject = ( { action = "ce"; every = 1; } );'):
        rep = run(engine, tmp_path, frames, extra=extra)
        p = conservation(rep, len(frames), sum(map(len, frames)))
        assert rep["errors"]["ip_checksum"] == len(bad) == p["rx_malformed"], extra
        qps = {q["qpn"]: q for q in rep["rx_qps"]}
        assert QPN + 1 not in qps, extra
        assert qps[QPN]["packets"] == qps[QPN]["messages"] == len(good), extra
        assert qps[QPN + 2]["packets"] == qps[QPN + 2]["messages"] == len(v6), extra
        assert qps[QPN]["icrc_errors"] == qps[QPN + 2]["icrc_errors"] == 0, extra
        if extra:  # the good ones were marked, the bad ones left as they came
            assert p["rx_inject"]["ce_marked"] == len(good) + len(v6), p["rx_inject"]
            assert qps[QPN]["ecn_ce"] == len(good), extra


def test_random_oversize_and_jumbo(engine, tmp_path):
    rng = random.Random(5)
    frames = [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 1600))) for _ in range(400)]
    # random bytes behind real headers: the parser must look deeper than the EtherType
    hdr = roce(0)[:54]
    frames += [hdr + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))) for _ in range(200)]
    jumbo = roce(1, payload=8900)   # 8,958 bytes: a valid frame in several mbufs
    frames += [jumbo, bytes(9100), bytes(12000), roce(2, payload=9000)]  # the last three: > 9,022 bytes
    rep = run(engine, tmp_path, frames)
    p = conservation(rep, len(frames), sum(map(len, frames)))
    assert rep["errors"]["oversize"] == 3
    q = [q for q in rep["rx_qps"] if q["qpn"] == QPN][0]
    assert q["payload_bytes"] >= 8900 and q["icrc_errors"] <= 200
    assert p["rx_malformed"] + p["rx_other"] + sum(x["packets"] for x in rep["rx_qps"]) - \
        sum(x["icrc_errors"] for x in rep["rx_qps"]) >= len(frames) - 1


def test_a_flood_of_garbage_does_not_stall(engine, tmp_path):
    """100,000 random frames, then one good one: counted to the last, in bounded time."""
    rng = random.Random(3)
    blob = bytes(rng.getrandbits(8) for _ in range(1 << 16))
    frames = []
    for i in range(100000):
        n = 60 + (i * 7919) % 1400
        start = (i * 104729) % (len(blob) - n)
        frames.append(blob[start:start + n])
    frames.append(roce(0))
    rep = run(engine, tmp_path, frames)
    conservation(rep, len(frames), sum(map(len, frames)))
    assert [q["messages"] for q in rep["rx_qps"] if q["qpn"] == QPN] == [1]


def test_capture_of_bad_frames_replays_the_same_counts(engine, tmp_path):
    """The engine's own capture of what it received (pcapng) reads back in tshark frame for frame."""
    rng = random.Random(9)
    frames = [roce(i) for i in range(20)] + [bytes(rng.getrandbits(8) for _ in range(rng.randint(14, 200)))
                                             for _ in range(50)]
    pcap = tmp_path / "in.pcap"
    write_pcap(pcap, frames)
    p = port("p", "net_pcap0", MAC_B, "192.168.1.2", 'vdev_args = "rx_pcap=%s";' % pcap)
    cap = tmp_path / "rx.pcapng"
    rc, rep, out = engine.run(cfg([p], [role(1, "p", "rx")], []), "-d", "1", "--capture", str(cap))
    assert rc == 0, out
    r = subprocess.run(["tshark", "-r", str(cap), "-T", "fields", "-e", "frame.len"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert sorted(int(x) for x in r.stdout.split()) == sorted(len(f) for f in frames)
    assert engine_path().exists()
