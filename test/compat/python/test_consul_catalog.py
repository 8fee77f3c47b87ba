"""py-consul (pinned) against Hangar's catalog API: agent, catalog, health, sessions, KV and
transactions. The client comes from CONSUL_HTTP_ADDR and CONSUL_HTTP_TOKEN."""

import base64
import http.server
import os
import threading
import time
import uuid

import consul


def client():
    return consul.Consul(token=os.environ["CONSUL_HTTP_TOKEN"])


ANONYMOUS = "00000000-0000-0000-0000-000000000002"


def setup_module():
    """py-consul sends no token with agent.self() and txn.put(): like a Consul operator, give the
    anonymous token what those calls need."""
    c = client()
    policy = c.acl.policy.create(
        unique("py-anonymous"), rules={"agent_prefix": {"": {"policy": "read"}}, "key_prefix": {"py-txn": {"policy": "write"}}}
    )
    c.acl.token.update(ANONYMOUS, policies_id=[policy["ID"]], description="Anonymous Token")


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_agent_and_status():
    c = client()
    assert c.agent.self()["Config"]["Datacenter"] == "dc1"
    assert c.status.leader()


def test_catalog_and_health():
    c = client()
    node, service = unique("py-node"), unique("py-svc")
    assert c.catalog.register(
        node,
        "10.2.0.1",
        service={"Service": service, "ID": service + "-1", "Port": 80, "Tags": ["blue"]},
        check={"CheckID": "alive", "Name": "alive", "Status": "passing", "ServiceID": service + "-1"},
    )
    _, nodes = c.catalog.nodes(filter_expr=f'Node == "{node}"')
    assert [n["Node"] for n in nodes] == [node]
    _, nodes = c.catalog.nodes(node_meta={"owner": "nobody"})
    assert nodes == []
    _, services = c.catalog.services()
    assert services[service] == ["blue"]
    _, instances = c.catalog.service(service)
    assert instances[0]["ServicePort"] == 80
    _, entries = c.health.service(service, passing=True)
    assert [e["Service"]["ID"] for e in entries] == [service + "-1"]
    _, checks = c.health.node(node)
    assert {ch["CheckID"] for ch in checks} == {"alive", "serfHealth"}
    _, passing = c.health.state("passing")
    assert any(ch["Node"] == node for ch in passing)
    assert c.catalog.deregister(node)
    _, gone = c.catalog.node(node)
    assert gone is None


def test_sessions_kv_and_locks():
    c = client()
    prefix = unique("py-kv") + "/"
    flags = 0x2DDCCBC058A50C18
    assert c.kv.put(prefix + "a", "1", flags=flags)
    index, entry = c.kv.get(prefix + "a")
    assert entry["Flags"] == flags and entry["Value"] == b"1"
    assert not c.kv.put(prefix + "a", "2", cas=entry["ModifyIndex"] - 1)
    assert c.kv.put(prefix + "a", "2", cas=entry["ModifyIndex"])

    session = c.session.create(name="py", ttl=30, lock_delay=1, behavior="release")
    assert c.session.info(session)[1]["Name"] == "py"
    assert c.kv.put(prefix + "lock", "me", acquire=session)
    other = c.session.create(name="py other", lock_delay=1)
    assert not c.kv.put(prefix + "lock", "them", acquire=other)
    assert c.session.renew(session)["ID"] == session
    assert c.kv.put(prefix + "lock", "me", release=session)
    for s in (session, other):
        assert c.session.destroy(s)

    # A blocking read returns at once for an older index.
    _, entries = c.kv.get(prefix, recurse=True, index=int(index) - 1, wait="1s")
    assert len(entries) == 2
    assert c.kv.delete(prefix, recurse=True)


def test_txn():
    c = client()
    prefix = unique("py-txn") + "/"
    b64 = lambda text: base64.b64encode(text.encode()).decode()
    result = c.txn.put(
        [
            {"KV": {"Verb": "set", "Key": prefix + "a", "Value": b64("1"), "Flags": 18446744073709551615}},
            {"KV": {"Verb": "get", "Key": prefix + "a"}},
        ]
    )
    assert result["Errors"] is None
    assert result["Results"][1]["KV"]["Flags"] == 18446744073709551615
    failed = None
    try:
        c.txn.put([{"KV": {"Verb": "delete", "Key": prefix + "a"}}, {"KV": {"Verb": "get", "Key": prefix + "missing"}}])
    except consul.ConsulException as err:
        failed = err
    assert failed is not None
    assert c.kv.get(prefix + "a")[1] is not None


def test_agent_service_register_and_health():
    c = client()
    name = unique("py-agent")
    assert c.agent.service.register(
        name,
        service_id=name + "-1",
        address="127.0.0.1",
        port=8080,
        tags=["green"],
        meta={"team": "py"},
        weights={"Passing": 4, "Warning": 1},
        enable_tag_override=True,
        check=consul.Check.ttl("30s"),
        extra_checks=[consul.Check.http("http://127.0.0.1:8080/health", "10s", timeout="2s", deregister="5m")],
    )
    services = c.agent.services()
    assert services[name + "-1"]["Weights"] == {"Passing": 4, "Warning": 1}
    assert services[name + "-1"]["EnableTagOverride"] is True
    checks = c.agent.checks()
    http = checks[f"service:{name}-1:2"]
    assert http["Type"] == "http"
    assert http["Definition"]["HTTP"] == "http://127.0.0.1:8080/health"
    assert http["Definition"]["DeregisterCriticalServiceAfter"] == "5m0s"

    # Not passing until the TTL check passes and the HTTP check (nothing listens on its port) goes away.
    _, entries = c.health.service(name, passing=True)
    assert entries == []
    assert c.agent.check.ttl_pass(f"service:{name}-1:1", "ok")
    assert c.agent.check.deregister(f"service:{name}-1:2")
    _, entries = c.health.service(name, passing=True)
    assert [e["Service"]["ID"] for e in entries] == [name + "-1"]
    assert entries[0]["Checks"][-1]["Output"] == "ok" or any(ch["Output"] == "ok" for ch in entries[0]["Checks"])

    assert c.agent.service.deregister(name + "-1")
    assert name + "-1" not in c.agent.services()


def test_http_check_runs():
    """The server runs an HTTP check against a backend this test starts: the instance is in
    health.service(passing=True) while the backend answers, and leaves it once the backend stops."""

    class Ok(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    backend = http.server.HTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{backend.server_address[1]}/health"
    c = client()
    name = unique("py-http")

    def passing():
        return c.health.service(name, passing=True)[1]

    def wait_for(what, done):
        deadline = time.time() + 30
        while not done():
            assert time.time() < deadline, f"timed out waiting for {what}"
            time.sleep(0.1)

    try:
        assert c.agent.service.register(name, service_id=name + "-1", port=8080, check=consul.Check.http(url, "1s", timeout="1s"))
        wait_for("the instance to pass", lambda: len(passing()) == 1)
        assert passing()[0]["Checks"][-1]["Output"] == f"HTTP GET {url}: 200 OK Output: ok"
    finally:
        backend.shutdown()
        backend.server_close()
    wait_for("the instance to leave the passing ones", lambda: passing() == [])
    assert c.agent.service.deregister(name + "-1")
