"""hvac and py-consul over TLS, trusting the server's CA by its file (verify=<path>), as their users
configure them; run by test/compat/tls-clients.test.ts against a Hangar serving https."""

import os

import consul
import hvac
import pytest
import requests


def test_hvac_verifies_with_the_ca_file():
    client = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"], verify=os.environ["VAULT_CACERT"])
    assert client.is_authenticated()
    client.secrets.kv.v2.create_or_update_secret(path="tls/hvac", secret={"over": "https"})
    read = client.secrets.kv.v2.read_secret_version(path="tls/hvac", raise_on_deleted_version=True)
    assert read["data"]["data"] == {"over": "https"}
    assert client.lookup_token()["data"]["id"] == os.environ["VAULT_TOKEN"]


def test_hvac_refuses_the_server_without_the_ca():
    client = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"], verify=True)
    with pytest.raises(requests.exceptions.SSLError):
        client.sys.read_health_status(method="GET")


def test_py_consul_verifies_with_the_ca_file():
    client = consul.Consul(token=os.environ["CONSUL_HTTP_TOKEN"], verify=os.environ["CONSUL_CACERT"])
    assert client.http.scheme == "https"
    assert client.kv.put("tls/py-consul", "over https")
    _, entry = client.kv.get("tls/py-consul")
    assert entry["Value"] == b"over https"
    assert client.agent.self()["Config"]["NodeName"]


def test_py_consul_refuses_the_server_without_the_ca():
    client = consul.Consul(token=os.environ["CONSUL_HTTP_TOKEN"], verify=True)
    with pytest.raises(requests.exceptions.SSLError):
        client.kv.get("tls/py-consul")
