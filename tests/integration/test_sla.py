"""SLA verdicts (docs/report.md#sla): the config's `sla` checks are measured after the run, the
report gets an `sla` object, the summary a line per check, and the exit status says pass (0) or
fail (6) — the engine otherwise ran and wrote its report.

* Flow checks (goodput, loss, latency percentiles, retransmits) on a ring pair: passing and failing
  limits; "*" gives one result per flow group; a group's result names its worst QP.
* Port checks: a PFC generator pauses the peer's priority 3 — pause_percent and pfc_rx_per_s
  catch it (a "PFC storm" check), rx_gbps / tx_gbps against the traffic.
"""
from conftest import on_cpu_share
from test_engine import MAC_B, cfg, flow, pair_ports, role


def _flows(ip_b, extra_second=False):
    lat = '{ mode = "oneway"; }'
    fl = [flow("f", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1000, qpn=0x10,
               dest_qpn=0x110, rate_gbps=1.0, count=2, stop="{ seconds = 0.5; }", latency=lat)]
    if extra_second:
        fl.append(flow("g", "a", MAC_B, ip_b, transport='"uc"', ops="{ write = 1; }", message_size=1000, qpn=0x20,
                       dest_qpn=0x120, rate_gbps=0.2, stop="{ seconds = 0.5; }", latency=lat))
    return fl


def _run(engine, sla, extra_second=False, gen=""):
    ports, ip_b = pair_ports("sla")
    text = cfg(ports, [role(1, "a", "txrx"), role(1, "b", "txrx")], _flows(ip_b, extra_second),
               run=gen + "\nsla = (\n  %s\n);" % ",\n  ".join(sla))
    return engine.run(text)


def test_all_checks_pass_exit_0(engine):
    rc, rep, out = _run(engine, ['{ flow = "f"; metric = "goodput_gbps"; min = 0.5; }',
                                 '{ flow = "f"; metric = "loss"; max = 0.0; }',
                                 '{ flow = "f"; metric = "p99_latency_ns"; max = 1e9; }',
                                 '{ flow = "f"; metric = "retransmits"; max = 0; }',
                                 '{ port = "b"; metric = "rx_gbps"; min = 1.0; }'])
    assert rc == 0, out
    s = rep["sla"]
    assert s["verdict"] == "pass" and [c["verdict"] for c in s["checks"]] == ["pass"] * 5, s
    g = s["checks"][0]
    assert g["metric"] == "goodput_gbps" and g["min"] == 0.5 and g["max"] is None and 0.8 < g["measured"] < 1.1, g
    assert s["checks"][2]["measured"] > 0 and s["checks"][4]["measured"] > 1.6
    assert out.count("sla: PASS") == 5


def test_a_failed_check_exits_6_with_the_report(engine):
    rc, rep, out = _run(engine, ['{ flow = "f"; metric = "goodput_gbps"; min = 5.0; }',
                                 '{ flow = "f"; metric = "p50_latency_ns"; max = 1e9; }'])
    assert rc == 6, out
    s = rep["sla"]
    assert s["verdict"] == "fail" and [c["verdict"] for c in s["checks"]] == ["fail", "pass"], s
    # the worst of the group's two QPs stands for it, by name
    assert s["checks"][0]["subject"] in ("flow f[0]", "flow f[1]") and s["checks"][0]["measured"] < 5.0
    assert "sla: FAIL flow f[" in out and "goodput_gbps" in out


def test_star_checks_every_group(engine):
    rc, rep, out = _run(engine, ['{ flow = "*"; metric = "goodput_gbps"; min = 0.5; }'], extra_second=True)
    assert rc == 6, out
    checks = rep["sla"]["checks"]
    assert [(c["subject"].split("[")[0], c["verdict"]) for c in checks] == [("flow f", "pass"), ("flow g", "fail")]
    assert 0.15 < checks[1]["measured"] < 0.25


def test_pause_and_pfc_storm_checks(engine):
    gen = ('pfc_generators = ( { port = "b"; priorities = [3]; quanta = 65535; rate_pps = 2000.0; '
           'start_s = 0.05; } );')
    rc, rep, out = _run(engine, ['{ port = "a"; metric = "pause_percent"; priority = 3; max = 1.0; }',
                                 '{ port = "a"; metric = "pause_percent"; priority = 0; max = 1.0; }',
                                 '{ port = "*"; metric = "pfc_rx_per_s"; max = 100; }',
                                 '{ port = "b"; metric = "tx_gbps"; max = 0.5; }'], gen=gen)
    assert rc == 6, out
    c = rep["sla"]["checks"]
    # 2,000 pauses a second of 65,535 quanta (335 us at 100 Gb/s): 67 % of the time paused, less the
    # share of the run the generator's lcore was held up (it skips what it missed rather than burst)
    assert (c[0]["verdict"], c[1]["verdict"]) == ("fail", "pass") and c[0]["priority"] == 3, c
    assert c[0]["measured"] > 50 * on_cpu_share(rep), (c[0], rep["lcores"])
    storm = {x["subject"]: x for x in c[2:4]}
    assert storm["port a"]["verdict"] == "fail" and storm["port a"]["measured"] > 1000
    assert storm["port b"]["verdict"] == "pass" and storm["port b"]["measured"] == 0
    assert c[4]["verdict"] == "pass"
