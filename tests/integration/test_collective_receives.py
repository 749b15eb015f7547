"""Collectives whose phases wait for messages received (`receives`), not only for their own sends:
a ring collective's step k+1 starts when a rank has sent its chunk of step k AND received its
predecessor's.

What it proves:
* a two-party ring in one process (ports a and b joined by a ring pair, each side a collective
  that receives the other's QPs), UC and RC: both complete every phase, and the fast side's
  phases last as long as the slow side's chunks take to arrive (data-driven, not its own pace);
* the same ring across two engine processes over net_memif, started together
  (run.start_at_unix_s): both complete every phase and stop as flows_done;
* a peer that sends nothing, or fewer phases than wanted: the collective stops at the phase it
  lacks receipts for, the engine ends at its duration with a whole report (no hang).
"""
import json
import subprocess
import time

import pytest

from conftest import engine_path
from test_engine import MAC_A, MAC_B, cfg, flow, pair_ports, port, role

MSG = 65536          # one chunk: 64 packets of 1,024 bytes
SLOW_GBPS = 1.0      # b's rate: a chunk takes >= 524 us
FAST_GBPS = 5.0      # a's rate: alone, a chunk would take ~105 us
PHASES = 6
COUNT = 2            # QPs per side


def ring_flow(name, src, dst_mac, dst_ip, qpn, dest_qpn, gbps, transport="uc"):
    return flow(name, src, dst_mac, dst_ip, transport='"%s"' % transport, ops="{ write = 1; }", message_size=MSG,
                mtu=1024, qpn=hex(qpn), dest_qpn=hex(dest_qpn), count=COUNT, rate_gbps=gbps)


def collective(name, flow_name, phases, rx_port, rx_qpn):
    return ('{ name = "%s"; type = "ring"; flows = ["%s"]; phases = %d;\n'
            '  receives = ( { port = "%s"; qpn = %s; count = %d; } ); }' % (name, flow_name, phases, rx_port,
                                                                          hex(rx_qpn), COUNT))


def chunk_us(gbps):
    """The least time a chunk takes at a rate: its payload alone."""
    return MSG * 8 / (gbps * 1e3)


def check_barrier(c):
    starts, ends = c["phase_start_us"], c["phase_end_us"]
    for k in range(1, len(starts)):
        # the next phase starts at the previous one's end, whichever event (a send or a receipt) ended it
        assert starts[k] == pytest.approx(ends[k - 1], abs=1e-3)
        assert ends[k] > starts[k]


def one_process_ring(transport, a_phases=PHASES, b_phases=PHASES, b_sends=True):
    """a sends on 0x100.. to b's 0x300.., b on 0x200.. to a's 0x400..; collective ra (on a) receives
    a's 0x400.., rb (on b) receives b's 0x300.."""
    ports, ip_b = pair_ports("cr%s" % transport)
    flows = [ring_flow("ab", "a", MAC_B, ip_b, 0x100, 0x300, FAST_GBPS, transport)]
    colls = [collective("ra", "ab", a_phases, "a", 0x400)]
    if b_sends:
        flows.append(ring_flow("ba", "b", MAC_A, "192.168.7.1", 0x200, 0x400, SLOW_GBPS, transport))
        colls.append(collective("rb", "ba", b_phases, "b", 0x300))
    run = "collectives = (\n%s\n);\n" % ",\n".join(colls)
    return cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], flows, run=run)


@pytest.mark.parametrize("transport", ["uc", "rc"])
def test_two_party_ring_in_one_process(engine, transport):
    rc, rep, out = engine.run(one_process_ring(transport), "-d", "20")
    assert rc == 0, out
    assert rep["stopped_by"] == "flows_done"
    colls = {c["name"]: c for c in rep["collectives"]}
    for c in colls.values():
        assert c["phases_completed"] == PHASES and c["qps"] == COUNT and c["receives_per_phase"] == COUNT
        check_barrier(c)
    # a's own chunks take ~105 us, but each of its phases waits for b's slower chunk: a's phase k
    # cannot end before b's chunks of phases 0..k have arrived
    ra = colls["ra"]
    for k, end in enumerate(ra["phase_end_us"]):
        assert end >= (k + 1) * chunk_us(SLOW_GBPS) * 0.99, (k, ra["phase_end_us"])
    assert min(ra["phase_completion_us"]) >= chunk_us(SLOW_GBPS) * 0.5
    rx = {(q["port"], q["qpn"]): q for q in rep["rx_qps"]}
    for i in range(COUNT):
        assert rx[("a", 0x400 + i)]["messages"] == PHASES and rx[("b", 0x300 + i)]["messages"] == PHASES


def test_collective_without_receives_keeps_its_own_pace(engine):
    """The control: the same fast side without `receives` does not wait for b (the test above
    would pass without the feature only if it did)."""
    text = one_process_ring("uc").replace('\n  receives = ( { port = "a"; qpn = 0x400; count = 2; } ); }', " }")
    rc, rep, out = engine.run(text, "-d", "20")
    assert rc == 0, out
    ra = next(c for c in rep["collectives"] if c["name"] == "ra")
    rb = next(c for c in rep["collectives"] if c["name"] == "rb")
    assert ra["receives_per_phase"] == 0 and ra["phases_completed"] == PHASES
    # a's own pace (~105 us a chunk) ends it long before b's chunks (>= 524 us each) have come;
    # judged against b's collective in the same run, which a hold of the shared lcore lengthens
    # alike (against a fixed time, a few ms of a busy machine made a look gated)
    assert ra["total_us"] < rb["total_us"] * 0.9, (ra, rb)
    assert rb["total_us"] >= PHASES * chunk_us(SLOW_GBPS) * 0.99


@pytest.mark.parametrize("b_phases,b_sends,expect", [(PHASES, False, 0), (2, True, 2)])
def test_peer_short_of_phases_stalls_until_the_duration(engine, b_phases, b_sends, expect):
    """b sends nothing (its port only receives), or sends 2 phases of the 6 a waits for: a's
    collective completes what it got receipts for and waits; the run ends at its duration."""
    rc, rep, out = engine.run(one_process_ring("uc", b_phases=b_phases, b_sends=b_sends), "-d", "1")
    assert rc == 0, out
    assert rep["stopped_by"] == "duration"
    assert rep["duration_s"] == pytest.approx(1.0, abs=0.2)
    ra = next(c for c in rep["collectives"] if c["name"] == "ra")
    assert ra["phases_completed"] == expect and ra["receives_per_phase"] == COUNT
    assert len(ra["phase_end_us"]) == expect
    # a sent the phase it could start, and no further: phases completed + 1
    ab = [f for f in rep["flows"] if f["group"] == "ab"]
    assert all(f["messages"] == expect + 1 for f in ab), ab
    if b_sends:
        rb = next(c for c in rep["collectives"] if c["name"] == "rb")
        assert rb["phases_completed"] == b_phases


# ---- two processes over net_memif ----------------------------------------------------------------

def memif_rank(tmp_path, name, role_name, mac, ip, peer_mac, peer_ip, qpn, dest_qpn, rx_qpn, gbps, start_at,
               phases=PHASES, sends=True):
    sock = tmp_path / "ring.sock"
    p = port("m", "net_memif0", mac, ip,
             'vdev_args = "role=%s,id=0,socket=%s,socket-abstract=no";' % (role_name, sock))
    flows = [ring_flow("f", "m", peer_mac, peer_ip, qpn, dest_qpn, gbps)] if sends else []
    run = ("collectives = (\n%s\n);\n" % collective("r", "f", phases, "m", rx_qpn) if sends else "")
    run += "run = { start_at_unix_s = %.6f; };\n" % start_at
    text = cfg([p], [role(1, "m", "txrx")], flows, run=run)
    (tmp_path / (name + ".cfg")).write_text(text)
    return [str(engine_path()), "-f", str(tmp_path / (name + ".cfg")), "-q", "-d", "20", "-r",
            str(tmp_path / (name + ".json"))]


def run_ranks(tmp_path, cmds):
    """The memif server first (it makes the socket), then the client; both start their traffic at
    the same wall-clock time, once connected."""
    procs = []
    for i, cmd in enumerate(cmds):
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      cwd=str(tmp_path)))
        if i == 0:
            time.sleep(0.5)
    outs = [p.communicate(timeout=90)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    return [json.loads((tmp_path / (n + ".json")).read_text()) for n in ("a", "b")], outs


def test_two_party_ring_across_two_processes(tmp_path):
    """Rank a (memif server) sends to rank b's 0x300.. and waits for b's chunks at its 0x400..;
    rank b the other way round, at a fifth of a's rate."""
    at = time.time() + 4.0
    a = memif_rank(tmp_path, "a", "server", MAC_A, "192.168.22.1", MAC_B, "192.168.22.2", 0x100, 0x300, 0x400,
                   FAST_GBPS, at)
    b = memif_rank(tmp_path, "b", "client", MAC_B, "192.168.22.2", MAC_A, "192.168.22.1", 0x200, 0x400, 0x300,
                   SLOW_GBPS, at)
    (ra_rep, rb_rep), outs = run_ranks(tmp_path, [a, b])
    for rep, out in ((ra_rep, outs[0]), (rb_rep, outs[1])):
        assert rep["stopped_by"] == "flows_done", out
        (c,) = rep["collectives"]
        assert c["phases_completed"] == PHASES and c["receives_per_phase"] == COUNT, c
        check_barrier(c)
    # a's phases are paced by b's chunks, which take at least chunk_us(SLOW_GBPS) each
    assert ra_rep["collectives"][0]["phase_end_us"][-1] >= PHASES * chunk_us(SLOW_GBPS) * 0.99


def test_ring_across_processes_with_a_silent_peer(tmp_path):
    """Rank b is up (the memif link connects) but sends nothing: rank a's collective completes no
    phase, and a ends at its duration with its report."""
    at = time.time() + 4.0
    a = memif_rank(tmp_path, "a", "server", MAC_A, "192.168.23.1", MAC_B, "192.168.23.2", 0x100, 0x300, 0x400,
                   FAST_GBPS, at)
    b = memif_rank(tmp_path, "b", "client", MAC_B, "192.168.23.2", MAC_A, "192.168.23.1", 0x200, 0x400, 0x300,
                   SLOW_GBPS, at, sends=False)
    a[a.index("-d") + 1] = "1"
    b[b.index("-d") + 1] = "2"
    (ra_rep, rb_rep), outs = run_ranks(tmp_path, [a, b])
    assert ra_rep["stopped_by"] == "duration", outs[0]
    (c,) = ra_rep["collectives"]
    assert c["phases_completed"] == 0 and c["phase_end_us"] == [] and c["total_us"] == 0
    assert all(f["messages"] == 1 for f in ra_rep["flows"])  # phase 0 went out, phase 1 waits
    rx = {q["qpn"]: q for q in rb_rep["rx_qps"]}
    assert all(rx[0x300 + i]["messages"] == 1 for i in range(COUNT))
