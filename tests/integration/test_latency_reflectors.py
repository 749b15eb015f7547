"""Ping-pong latency through a reflector in another process, over net_memif.

The engine (memif server end: it makes the socket) runs one UC WRITE QP in ping-pong mode: a
64-byte message goes out, a reflector in a second process sends it back with its MACs swapped,
the engine records the round trip and sends the next one. The reflector is
* dpdk-testpmd in macswap forwarding mode (memif client end), or
* a second roce-engine whose only role is `reflect` (memif client end, no flows).

Both processes share the machine's two cores: the engine polls on lcore 1 (its main lcore 0
sleeps), the reflector polls on CPU 0 (its main lcore is 1 and sleeps), so the two busy loops do
not share a CPU.

Order: engine first (the memif server must exist before a client connects), then the reflector
as soon as the socket file is there. The engine's first message is built before the client has
connected: the PMD refuses it and the TX role holds it until the link is up; the time a role
cannot send does not count against a ping-pong timeout, so it is not lost. Against testpmd,
nothing may be lost but one message (MAX_LOST: a machine loaded beyond the 200 ms timeout while
testpmd starts). The reflect role accounts for every frame: each the pinger sent was reflected or
counted dropped (`reflect_dropped`: its PMD refused it, as memif's TX may for a moment after the
connect on a loaded machine), and a message may be lost only by such a drop or by a 200 ms
timeout's worth of the reflect role held up off its CPU (its report's `lcores[].held_up_ms`).

At the end the engine closes its memif end while the reflector still polls its own. DPDK 22.11's
memif PMD handles a peer's disconnect in the interrupt thread, unmapping the shared rings while
the polling lcore may be inside its RX burst (no synchronisation): testpmd can die there with
SIGSEGV (roughly 1 run in 4), which is reported as a warning, not a failure (the round trips were
all measured by then). The engine's reflect role no longer can: the engine gates memif's
connect/disconnect work against its bursts (pmd_glue/port.c, docs/reliability.md), so a reflect
role that dies is a failure. A reflector still running is stopped with SIGINT and must exit cleanly.

Bounds are loose on purpose (a shared two-core VM): no timing figure is asserted beyond sanity.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import time
import warnings

import pytest

from conftest import engine_path, held_up_s
from test_engine import cfg, port, role, flow, MAC_A, MAC_B

MSGS = 2000
TIMEOUT_US = 200000.0
MAX_LOST = 1          # room for a machine loaded beyond the timeout once
ENGINE_GUARD_S = 20   # -d for each engine: a run that hangs ends with stopped_by "duration"


def _pinger_cfg(sock):
    p = port("s", "net_memif0", MAC_A, "192.168.40.1",
             'vdev_args = "role=server,id=0,socket=%s,socket-abstract=no";' % sock)
    f = flow("pp", "s", MAC_B, "192.168.40.2", transport='"uc"', ops="{ write = 1; }", message_size=64,
             qpn="0x10", dest_qpn="0x20", latency='{ mode = "pingpong"; timeout_us = %.1f; }' % TIMEOUT_US,
             stop="{ messages = %d; }" % MSGS)
    return cfg([p], [role(1, "s", "txrx")], [f])


def _reflector_cfg(sock):
    p = port("r", "net_memif0", MAC_B, "192.168.40.2",
             'vdev_args = "role=client,id=0,socket=%s,socket-abstract=no";' % sock)
    # main lcore 1 (sleeps), the reflect loop on lcore 0: not on the pinger's polling CPU
    return cfg([p], [role(0, "r", "reflect")], [], eal='lcores = "0-1"; main_lcore = 1; memory_mb = 256;')


def _no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _start_engine(tmp_path, name, text):
    (tmp_path / (name + ".cfg")).write_text(text)
    return subprocess.Popen([str(engine_path()), "-f", str(tmp_path / (name + ".cfg")), "-q", "-d", str(ENGINE_GUARD_S),
                             "-r", str(tmp_path / (name + ".json"))],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path),
                            preexec_fn=_no_core)


def _wait_for_socket(sock, proc, timeout=15.0):
    end = time.monotonic() + timeout
    while not sock.exists():
        if proc.poll() is not None:
            out, _ = proc.communicate()
            pytest.fail("the engine exited (%s) before making %s:\n%s" % (proc.returncode, sock, out))
        if time.monotonic() > end:
            pytest.fail("no memif socket %s after %.0f s" % (sock, timeout))
        time.sleep(0.02)


def _stop(proc, sig=signal.SIGINT, timeout=15):
    """SIGINT (if still running), then wait; SIGKILL as a last resort. Returns (returncode, output)."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return proc.returncode, out


def _stop_reflector(proc, what, may_crash=False):
    """After the pinger has exited: a reflector that may crash on the memif disconnect (testpmd, see
    the module docstring) gives a warning and returns None; one still running gets SIGINT and must
    exit 0. Returns its output, or None."""
    end = time.monotonic() + 0.5  # the peer's disconnect is handled within this
    while proc.poll() is None and time.monotonic() < end:
        time.sleep(0.02)
    if proc.poll() is not None:
        rc, out = _stop(proc)
        if rc == -signal.SIGSEGV and may_crash:
            warnings.warn("%s crashed (SIGSEGV) when the engine closed its memif end, before it was "
                          "signalled (DPDK 22.11 memif disconnect race)" % what)
            return None
        pytest.fail("%s exited by itself with %s before it was signalled:\n%s" % (what, rc, out))
    rc, out = _stop(proc)
    assert rc == 0, "%s after SIGINT: exit %s\n%s" % (what, rc, out)
    return out


def _runtime_dirs(prefix):
    bases = ["/var/run/dpdk"] if os.geteuid() == 0 else [os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")]
    return [os.path.join(b, prefix) for b in bases]


def _losses_accounted(reflector_report):
    """Messages the reflector lost us and said so: frames it counted dropped, and a timeout's
    length of its time held up off its CPU each."""
    timeouts_held_up = int(held_up_s(reflector_report) // (TIMEOUT_US / 1e6))
    return reflector_report["ports"][0]["reflect_dropped"] + timeouts_held_up


def _check_pingpong(rep, out, max_lost=MAX_LOST):
    assert rep["stopped_by"] == "flows_done", out
    (fl,) = rep["flows"]
    lat = fl["latency_ns"]
    assert lat["mode"] == "pingpong"
    sent, lost = lat["pingpong"]["sent"], lat["pingpong"]["lost"]
    rtt = lat["rtt"]
    assert sent == MSGS and fl["messages"] == MSGS and lat["probes_sent"] == MSGS, lat
    assert lost <= max_lost, lat
    assert rtt["count"] == sent - lost, lat
    assert 0 < rtt["min"] <= rtt["p50"] <= rtt["p99"] <= rtt["max"], rtt
    assert rtt["p50"] < 1e9, rtt
    assert rtt["clock_disagreements"] == 0 and rtt["overflow"] == 0, rtt
    p = rep["ports"][0]
    assert p["tx_packets"] == MSGS
    assert rtt["count"] <= p["rx_packets"] <= MSGS  # every round trip counted came back on this port
    assert p["latency_ns"]["rtt"]["count"] == rtt["count"]
    assert p["mbufs_in_use_at_exit"] == 0
    return fl


def _run_pinger_with(tmp_path, start_reflector):
    """Engine (server, ping-pong) first, the reflector once the socket exists. Returns the
    engine's report and output and the still-running reflector process."""
    sock = tmp_path / "memif.sock"
    pinger = _start_engine(tmp_path, "pinger", _pinger_cfg(sock))
    reflector = None
    try:
        _wait_for_socket(sock, pinger)
        reflector = start_reflector(sock)
        out, _ = pinger.communicate(timeout=ENGINE_GUARD_S + 30)
    except BaseException:
        for p in (pinger, reflector):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
        raise
    finally:
        if pinger.returncode != 0:  # killed or crashed: EAL left its runtime directory
            for d in _runtime_dirs("roce-engine-%d" % pinger.pid):
                shutil.rmtree(d, ignore_errors=True)
    assert pinger.returncode == 0, out
    rep = json.loads((tmp_path / "pinger.json").read_text())
    return rep, out, reflector


def test_pingpong_through_testpmd_macswap(tmp_path):
    testpmd = shutil.which("dpdk-testpmd")
    if not testpmd:
        pytest.skip("dpdk-testpmd not installed (Debian package dpdk)")
    prefix = "roce-lat-tpm-%d" % os.getpid()
    log = open(tmp_path / "testpmd.log", "w+")
    state = {}

    def start_testpmd(sock):
        # forwarding lcore 0, main lcore 1 (sleeps in the stats loop); --no-flush-rx: testpmd would
        # otherwise drop what arrived between the link coming up and its forwarding start;
        # --stats-period keeps the non-interactive mode running until SIGINT
        state["p"] = subprocess.Popen(
            [testpmd, "--no-huge", "-m", "512", "--file-prefix", prefix, "--no-pci", "-l", "0-1", "--main-lcore", "1",
             "--log-level=error",
             "--vdev", "net_memif0,role=client,id=0,socket=%s,socket-abstract=no" % sock,
             "--", "--forward-mode=macswap", "--auto-start", "--stats-period", "1", "--nb-cores=1",
             "--total-num-mbufs=8192", "--no-flush-rx"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=str(tmp_path), preexec_fn=_no_core)
        return state["p"]

    try:
        rep, out, tpm = _run_pinger_with(tmp_path, start_testpmd)
        log.flush()
        log.seek(0)
        _check_pingpong(rep, out + "\n--- testpmd ---\n" + log.read()[-3000:])
        _stop_reflector(tpm, "dpdk-testpmd", may_crash=True)
    finally:
        p = state.get("p")
        if p is not None and p.poll() is None:
            _stop(p)
        log.close()
        for d in _runtime_dirs(prefix):
            shutil.rmtree(d, ignore_errors=True)
    for d in _runtime_dirs(prefix):
        assert not os.path.exists(d)


def _run_with_reflect_role(tmp_path):
    """The ping-pong against a reflect-role engine, which must not crash at the pinger's disconnect.
    Returns the pinger's report and output and the reflector's report."""
    state = {}

    def start_reflector(sock):
        state["p"] = _start_engine(tmp_path, "reflector", _reflector_cfg(sock))
        return state["p"]

    try:
        rep, out, refl = _run_pinger_with(tmp_path, start_reflector)
        _stop_reflector(refl, "the reflect-role engine")
    finally:
        p = state.get("p")
        if p is not None:
            if p.poll() is None:
                _stop(p)
            # a crashed engine leaves its EAL runtime directory (default prefix roce-engine-<pid>)
            for d in _runtime_dirs("roce-engine-%d" % p.pid):
                shutil.rmtree(d, ignore_errors=True)
    r = json.loads((tmp_path / "reflector.json").read_text())
    assert r["stopped_by"] == "signal"
    rp = r["ports"][0]
    assert rp["reflected"] + rp["reflect_dropped"] == rep["ports"][0]["tx_packets"], rp
    assert rp["rx_malformed"] == 0 and rp["mbufs_in_use_at_exit"] == 0
    return rep, out, r


def test_pingpong_through_engine_reflect_role(tmp_path):
    rep, out, r = _run_with_reflect_role(tmp_path)
    fl = _check_pingpong(rep, out, max_lost=_losses_accounted(r))
    # the pinger received every frame but those of messages it counted lost (whose answers may
    # also come after its RX stopped)
    assert rep["ports"][0]["rx_packets"] >= MSGS - fl["latency_ns"]["pingpong"]["lost"]
