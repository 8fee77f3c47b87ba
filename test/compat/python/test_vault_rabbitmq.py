"""hvac (unchanged) against Hangar's message broker engine and a real RabbitMQ.

Environment: VAULT_ADDR, VAULT_TOKEN, RABBITMQ_MGMT_URL, RABBITMQ_ADMIN_USER, RABBITMQ_ADMIN_PASSWORD.
"""
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import base64

import hvac
import pytest

MOUNT = "rabbitmq-hvac"


def management(path, user, password):
    """Status and JSON body of a management API GET with the given credentials."""
    req = urllib.request.Request(os.environ["RABBITMQ_MGMT_URL"] + "/api/" + path)
    req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, None


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("rabbitmq", path=MOUNT)
    return c


def test_configure_roles_creds_revoke(client):
    rmq = client.secrets.rabbitmq
    admin, admin_password = os.environ["RABBITMQ_ADMIN_USER"], os.environ["RABBITMQ_ADMIN_PASSWORD"]
    with pytest.raises(hvac.exceptions.InvalidRequest, match="failed to validate the connection"):
        rmq.configure(os.environ["RABBITMQ_MGMT_URL"], admin, "wrong", mount_point=MOUNT)
    rmq.configure(os.environ["RABBITMQ_MGMT_URL"], admin, admin_password, mount_point=MOUNT)
    rmq.configure_lease(1800, 3600, mount_point=MOUNT)

    with pytest.raises(hvac.exceptions.InvalidRequest, match="vhost_topics"):
        rmq.create_role("bad", tags="management", vhost_topics="[1,", mount_point=MOUNT)
    vhosts = json.dumps({"/": {"configure": "", "write": "^py-.*", "read": "^py-.*"}})
    rmq.create_role("py", tags="monitoring", vhosts=vhosts, mount_point=MOUNT)
    role = rmq.read_role("py", mount_point=MOUNT)["data"]
    assert role == {"tags": "monitoring", "vhosts": {"/": {"configure": "", "write": "^py-.*", "read": "^py-.*"}}, "vhost_topics": None}

    creds = rmq.generate_credentials("py", mount_point=MOUNT)
    assert creds["lease_duration"] == 1800 and creds["renewable"] is True
    user, password = creds["data"]["username"], creds["data"]["password"]
    status, me = management("whoami", user, password)
    assert status == 200 and me["name"] == user
    status, info = management("users/" + urllib.parse.quote(user, safe=""), admin, admin_password)
    assert info["tags"] == ["monitoring"]
    status, perms = management("users/" + urllib.parse.quote(user, safe="") + "/permissions", admin, admin_password)
    assert [(p["vhost"], p["configure"], p["write"]) for p in perms] == [("/", "", "^py-.*")]

    renewed = client.sys.renew_lease(creds["lease_id"], increment=7200)
    assert renewed["lease_duration"] <= 3600
    client.sys.revoke_lease(creds["lease_id"])
    assert management("whoami", user, password)[0] == 401

    rmq.delete_role("py", mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidPath):
        rmq.read_role("py", mount_point=MOUNT)
