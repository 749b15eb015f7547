#!/usr/bin/python3
"""counters_command for a roce-engine lab switch used as a real switch tier (the tests'
DUT in its own process): reads the switch's Prometheus /metrics with prometheus_client's parser
and prints fabric.external's counters JSON (docs/fabric.md), one link per switch port:

    lab_switch_counters.py HOST:PORT SWITCH_PORT=LINK ...

a_to_b is the switch toward the NIC (what the port sent, the CE marks it made, what its PFC
watchdog dropped from the egress queue and the storms it found there, per class), b_to_a the NIC
toward the switch (what the port received, what it dropped there, the XOFF frames the switch sent
to pause the NIC, per class)."""
import json
import sys
import urllib.request
from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families


def read(url):
    values = defaultdict(float)    # (metric, port, tc or reason) -> value
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            values[(s.name, s.labels.get("port"), s.labels.get("tc", s.labels.get("reason")))] += s.value
    return values


def main():
    values = read("http://%s/metrics" % sys.argv[1])

    def v(name, port, label=None):
        return int(values[(name, port, label)])

    def by_label(name, port):
        return {k[2]: int(x) for k, x in values.items() if k[0] == name and k[1] == port}

    links = []
    for arg in sys.argv[2:]:
        port, link = arg.split("=")
        xoff = by_label("roce_switch_tx_pfc_xoff_packets_total", port)
        storms = by_label("roce_switch_watchdog_storms_total", port)
        links.append({"name": link,
                      "a_to_b": {"frames": v("roce_port_tx_packets_total", port), "bytes": v("roce_port_tx_bytes_total", port),
                                 "ecn_marked": sum(by_label("roce_switch_tx_ecn_marked_packets_total", port).values()),
                                 "dropped": sum(by_label("roce_switch_watchdog_dropped_packets_total", port).values()),
                                 "watchdog_storms": [storms.get(str(tc), 0) for tc in range(8)]},
                      "b_to_a": {"frames": v("roce_port_rx_packets_total", port), "bytes": v("roce_port_rx_bytes_total", port),
                                 "dropped": sum(by_label("roce_switch_rx_dropped_packets_total", port).values()),
                                 "pfc_xoff_sent": [xoff.get(str(tc), 0) for tc in range(8)]}})
    print(json.dumps({"links": links}))


if __name__ == "__main__":
    main()
