"""hvac (unchanged) against Hangar's secrets core: sys (status, keyring, mounts, auth methods, tune,
policies, leases, capabilities) and auth.token. Each test builds what it needs on its own paths.

Environment: VAULT_ADDR, VAULT_TOKEN (the root token of a fresh Hangar, which registers the core's
test engine `hangar-test`: `creds/:name` leases, `items/:name` CRUD).
"""
import os
from datetime import datetime
import uuid

import hvac
import hvac.exceptions
import pytest


@pytest.fixture(scope="module")
def client():
    return hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def as_token(token):
    return hvac.Client(url=os.environ["VAULT_ADDR"], token=token)


def test_status_and_keyring(client):
    assert client.sys.is_initialized()
    assert not client.sys.is_sealed()
    health = client.sys.read_health_status(method="GET")
    assert health["initialized"] and not health["sealed"] and health["version"]
    assert client.sys.read_seal_status()["sealed"] is False
    assert client.sys.read_leader_status()["ha_enabled"] is False
    term = client.sys.get_encryption_key_status()["data"]["term"]
    client.sys.rotate_encryption_key()
    assert client.sys.get_encryption_key_status()["data"]["term"] == term + 1
    assert client.is_authenticated()


def test_secrets_engines(client):
    path = name("hvac-kv")
    client.sys.enable_secrets_engine("hangar-test", path=path, description="from hvac", config={"default_lease_ttl": "1h", "max_lease_ttl": 157680000})
    mounts = client.sys.list_mounted_secrets_engines()["data"]
    assert mounts[f"{path}/"]["type"] == "hangar-test"
    assert mounts[f"{path}/"]["config"]["max_lease_ttl"] == 157680000
    client.sys.tune_mount_configuration(
        path,
        default_lease_ttl="2h",
        description="tuned",
        audit_non_hmac_request_keys=["name"],
        audit_non_hmac_response_keys=["id"],
        listing_visibility="unauth",
        passthrough_request_headers=["X-Team"],
        allowed_response_headers=["X-Served-By"],
    )
    tune = client.sys.read_mount_configuration(path)["data"]
    assert tune["default_lease_ttl"] == 7200 and tune["max_lease_ttl"] == 157680000
    assert tune["description"] == "tuned" and tune["listing_visibility"] == "unauth"
    assert tune["audit_non_hmac_request_keys"] == ["name"] and tune["audit_non_hmac_response_keys"] == ["id"]
    assert tune["passthrough_request_headers"] == ["X-Team"] and tune["allowed_response_headers"] == ["X-Served-By"]
    assert client.sys.retrieve_mount_option(path, "version", "none") == "none"
    with pytest.raises(hvac.exceptions.InvalidRequest, match="path already in use"):
        client.sys.move_backend(path, "pki")
    with pytest.raises(hvac.exceptions.InvalidRequest, match="plugin not found"):
        client.sys.enable_secrets_engine("no-such-engine", path=name("hvac-bad"))
    client.sys.disable_secrets_engine(path)
    assert f"{path}/" not in client.sys.list_mounted_secrets_engines()["data"]


def test_auth_methods(client):
    path = name("hvac-jwt")
    client.sys.enable_auth_method("jwt", path=path, description="from hvac", config={"default_lease_ttl": "20m", "listing_visibility": "unauth"})
    methods = client.sys.list_auth_methods()["data"]
    assert methods[f"{path}/"]["type"] == "jwt" and methods[f"{path}/"]["description"] == "from hvac"
    # hvac sends lists as comma-separated strings here.
    client.sys.tune_auth_method(path, max_lease_ttl="43800h", audit_non_hmac_request_keys=["role", "jwt"], passthrough_request_headers=["X-A"], token_type="default-batch")
    tune = client.sys.read_auth_method_tuning(path)["data"]
    assert tune["default_lease_ttl"] == 1200 and tune["max_lease_ttl"] == 157680000
    assert tune["audit_non_hmac_request_keys"] == ["role", "jwt"] and tune["passthrough_request_headers"] == ["X-A"]
    assert tune["listing_visibility"] == "unauth" and tune["token_type"] == "default-batch"
    # The mounts API reaches auth mounts as auth/<path> too.
    assert client.sys.read_mount_configuration(f"auth/{path}")["data"] == tune
    client.sys.disable_auth_method(path)
    assert f"{path}/" not in client.sys.list_auth_methods()["data"]


def test_policies(client):
    policy = name("hvac-policy")
    rules = 'path "secret/*" { capabilities = ["read", "list"] }'
    client.sys.create_or_update_policy(policy, rules)
    assert client.sys.read_policy(policy)["data"]["rules"] == rules
    assert policy in client.sys.list_policies()["data"]["policies"]
    acl = name("hvac-acl")
    client.sys.create_or_update_acl_policy(acl, rules)
    assert client.sys.read_acl_policy(acl)["data"]["policy"] == rules
    assert acl in client.sys.list_acl_policies()["data"]["keys"]
    client.sys.delete_acl_policy(acl)
    client.sys.delete_policy(policy)
    with pytest.raises(hvac.exceptions.InvalidPath):
        client.sys.read_acl_policy(acl)
    with pytest.raises(hvac.exceptions.InvalidRequest):
        client.sys.create_or_update_acl_policy(name("hvac-bad"), 'path "x" { capabilities = ["fly"] }')


def test_capabilities(client):
    policy = name("hvac-caps")
    client.sys.create_or_update_acl_policy(policy, 'path "team/*" { capabilities = ["read", "update"] }')
    auth = client.auth.token.create(policies=[policy])["auth"]
    assert client.sys.get_capabilities(paths=["team/x"])["capabilities"] == ["root"]
    assert client.sys.get_capabilities(paths=["team/x"], token=auth["client_token"])["team/x"] == ["read", "update"]
    both = client.sys.get_capabilities(paths=["team/x", "other/x"], accessor=auth["accessor"])
    assert both["team/x"] == ["read", "update"] and both["other/x"] == ["deny"]
    assert as_token(auth["client_token"]).sys.get_capabilities(paths=["team/y"])["capabilities"] == ["read", "update"]


def test_leases(client):
    path = name("hvac-leases")
    client.sys.enable_secrets_engine("hangar-test", path=path)
    try:
        issue = lambda: client.read(f"{path}/creds/app")  # noqa: E731
        lease = issue()
        assert lease["lease_id"].startswith(f"{path}/creds/app/") and lease["lease_duration"] == 3600 and lease["renewable"]
        looked = client.sys.read_lease(lease["lease_id"])["data"]
        assert looked["id"] == lease["lease_id"] and looked["ttl"] == 3600
        # hvac sends `increment: null` when none is given.
        assert client.sys.renew_lease(lease["lease_id"])["lease_duration"] == 3600
        assert client.sys.renew_lease(lease["lease_id"], increment=7200)["lease_duration"] == 7200
        assert len(client.sys.list_leases(f"{path}/creds/app")["data"]["keys"]) == 1
        client.sys.revoke_lease(lease["lease_id"])
        with pytest.raises(hvac.exceptions.InvalidRequest):
            client.sys.read_lease(lease["lease_id"])
        issue()
        issue()
        client.sys.revoke_prefix(f"{path}/creds")
        with pytest.raises(hvac.exceptions.InvalidPath):
            client.sys.list_leases(f"{path}/creds/app")
        issue()
        client.sys.revoke_force(f"{path}/creds")
    finally:
        client.sys.disable_secrets_engine(path)


def test_logical(client):
    path = name("hvac-logical")
    client.sys.enable_secrets_engine("hangar-test", path=path)
    try:
        client.write(f"{path}/items/a", value="one")
        client.write_data(f"{path}/items/b", data={"value": "two"})
        assert client.read(f"{path}/items/a")["data"] == {"value": "one"}
        assert sorted(client.list(f"{path}/items")["data"]["keys"]) == ["a", "b"]
        client.delete(f"{path}/items/a")
        assert client.read(f"{path}/items/a") is None
        with pytest.raises(hvac.exceptions.InvalidRequest, match="value"):
            client.write_data(f"{path}/items/c", data={"value": 5})
    finally:
        client.sys.disable_secrets_engine(path)


def test_tokens(client):
    tokens = client.auth.token
    created = tokens.create(policies=["default"], ttl="1h", meta={"team": "hvac"})["auth"]
    assert created["client_token"].startswith("hvs.") and created["lease_duration"] == 3600
    assert created["orphan"] is False and created["renewable"] is True
    looked = tokens.lookup(created["client_token"])["data"]
    assert looked["id"] == created["client_token"] and looked["meta"] == {"team": "hvac"} and looked["ttl"] == 3600
    assert tokens.lookup_accessor(created["accessor"])["data"]["id"] == ""
    assert as_token(created["client_token"]).auth.token.lookup_self()["data"]["path"] == "auth/token/create"
    assert created["accessor"] in tokens.list_accessors()["data"]["keys"]
    assert tokens.create_orphan(policies=["default"])["auth"]["orphan"] is True
    assert tokens.create(no_parent=True)["auth"]["orphan"] is True
    batch = tokens.create(type="batch", ttl="10m", policies=["default"])["auth"]
    assert batch["client_token"].startswith("hvb.") and batch["token_type"] == "batch"
    # Renewals: by token, self, accessor.
    assert tokens.renew(created["client_token"], increment="2h")["auth"]["lease_duration"] == 7200
    assert as_token(created["client_token"]).auth.token.renew_self(increment=1800)["auth"]["lease_duration"] == 1800
    assert tokens.renew_accessor(created["accessor"], increment=900)["auth"]["lease_duration"] == 900
    # A tree: revoke_and_orphan_children keeps the child, revoke takes the rest.
    creator = name("hvac-creator")
    client.sys.create_or_update_acl_policy(creator, 'path "auth/token/create" { capabilities = ["update"] }')
    parent = tokens.create(policies=["default", creator], ttl="1h")["auth"]["client_token"]
    child = as_token(parent).auth.token.create(policies=["default", creator], ttl="30m")["auth"]["client_token"]
    grandchild = as_token(child).auth.token.create(policies=["default"], ttl="10m")["auth"]["client_token"]
    tokens.revoke_and_orphan_children(parent)
    assert tokens.lookup(child)["data"]["orphan"] is True
    tokens.revoke(child)
    for gone in (parent, child, grandchild):
        assert not as_token(gone).is_authenticated()
    other = tokens.create(policies=["default"])["auth"]
    tokens.revoke_accessor(other["accessor"])
    assert not as_token(other["client_token"]).is_authenticated()
    last = tokens.create(policies=["default"])["auth"]["client_token"]
    as_token(last).auth.token.revoke_self()
    assert not as_token(last).is_authenticated()


def test_token_roles(client):
    tokens = client.auth.token
    name = f"hvac-role-{uuid.uuid4().hex[:8]}"
    tokens.create_or_update_role(name, allowed_policies=["default", "hvac-app"], orphan=True, path_suffix="ci", token_explicit_max_ttl=7200)
    role = tokens.read_role(name)["data"]
    assert role["allowed_policies"] == ["default", "hvac-app"] and role["orphan"] is True and role["token_explicit_max_ttl"] == 7200
    assert name in tokens.list_roles()["data"]["keys"]
    auth = tokens.create(role_name=name, policies=["hvac-app"])["auth"]
    assert auth["orphan"] is True and auth["policies"] == ["default", "hvac-app"]
    assert tokens.lookup(auth["client_token"])["data"]["path"] == f"auth/token/create/{name}/ci"
    with pytest.raises(hvac.exceptions.InvalidRequest, match="subset"):
        tokens.create(role_name=name, policies=["other"])
    tokens.delete_role(name)
    with pytest.raises(hvac.exceptions.InvalidPath):
        tokens.read_role(name)
    with pytest.raises(hvac.exceptions.InvalidRequest, match="unknown role"):
        tokens.create(role_name=name)


def test_response_wrapping(client):
    created = client.auth.token.create(policies=["default"], wrap_ttl="5m")
    info = created["wrap_info"]
    assert created["auth"] is None and info["ttl"] == 300 and info["creation_path"] == "auth/token/create"
    unwrapped = client.sys.unwrap(info["token"])
    assert unwrapped["auth"]["accessor"] == info["wrapped_accessor"]
    with pytest.raises(hvac.exceptions.InvalidRequest, match="wrapping token is not valid"):
        client.sys.unwrap(info["token"])
    # sys.wrap, then the wrapping token as the client's own token.
    wrapped = client.sys.wrap(payload={"k": "v"}, ttl=60)["wrap_info"]
    holder = hvac.Client(url=os.environ["VAULT_ADDR"], token=wrapped["token"])
    assert holder.sys.unwrap()["data"] == {"k": "v"}
    with pytest.raises(hvac.exceptions.InvalidRequest, match="wrapping token is not valid"):
        client.sys.unwrap("hvs.nothing")


def test_namespaces_are_refused_clearly(client):
    namespaced = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"], namespace="team-a")
    with pytest.raises(hvac.exceptions.InvalidRequest, match="namespace"):
        namespaced.auth.token.lookup_self()


def test_audit_devices(client, tmp_path):
    path = name("py-audit")
    log = tmp_path / "audit.log"
    client.sys.enable_audit_device("file", description="from hvac", options={"file_path": str(log)}, path=path)
    try:
        devices = client.sys.list_enabled_audit_devices()["data"]
        assert devices[f"{path}/"]["type"] == "file"
        assert devices[f"{path}/"]["options"] == {"file_path": str(log)}
        value = name("py-audit-secret")
        hashed = client.sys.calculate_hash(path, value)["data"]["hash"]
        assert hashed.startswith("hmac-sha256:") and len(hashed) == len("hmac-sha256:") + 64
    finally:
        client.sys.disable_audit_device(path)
    assert f"{path}/" not in client.sys.list_enabled_audit_devices()["data"]
    text = log.read_text()
    # The hash request is audited too: its input is in the file as its HMAC, never in plaintext.
    assert value not in text and client.token not in text
    assert hashed in text


def test_version_and_operator(client):
    health = client.sys.read_health_status(method="GET")
    assert health["version"] == "1.21.1" and health["hangar_version"]
    assert client.sys.read_seal_status()["version"] == "1.21.1"
    client.sys.step_down()
    with pytest.raises(hvac.exceptions.InvalidRequest, match="raft storage is not in use"):
        client.sys.read_raft_config()
    with pytest.raises(hvac.exceptions.InvalidRequest, match="Hangar has no seal"):
        client.sys.read_root_generation_progress()


def test_internal_ui_mounts_and_remount(client):
    source, target = name("hvac-move"), name("hvac-moved")
    client.sys.enable_secrets_engine("kv", path=source, options={"version": "2"})
    client.secrets.kv.v2.create_or_update_secret(path="app", secret={"k": "v"}, mount_point=source)
    # What the `vault kv` CLI reads to tell KV version 2 from version 1.
    mount = client.read(f"sys/internal/ui/mounts/{source}/data/app")["data"]
    assert mount["type"] == "kv" and mount["options"] == {"version": "2"} and mount["path"] == f"{source}/"
    with pytest.raises(hvac.exceptions.Forbidden, match="preflight capability check returned 403"):
        client.read(f"sys/internal/ui/mounts/{name('nowhere')}")
    moved = client.sys.move_backend(source, target)
    status = client.read(f"sys/remount/status/{moved['data']['migration_id']}")["data"]["migration_info"]
    assert status == {"source_mount": f"{source}/", "target_mount": f"{target}/", "status": "success"}
    assert client.secrets.kv.v2.read_secret_version(path="app", mount_point=target, raise_on_deleted_version=True)["data"]["data"] == {"k": "v"}
    assert f"{source}/" not in client.sys.list_mounted_secrets_engines()["data"]
    with pytest.raises(hvac.exceptions.InvalidRequest, match="cannot remount"):
        client.sys.move_backend("sys", name("system"))


def test_token_display_name_and_issue_time(client):
    token = client.auth.token.create(display_name="My-Token---Name", ttl="1h")["auth"]["client_token"]
    data = client.auth.token.lookup(token)["data"]
    assert data["display_name"] == "token-My-Token---Name"
    issued = datetime.fromisoformat(data["issue_time"].replace("Z", "+00:00"))
    expires = datetime.fromisoformat(data["expire_time"].replace("Z", "+00:00"))
    assert (expires - issued).total_seconds() == 3600


def test_error_messages_reach_the_exception(client):
    # hvac parses an error body only when its Content-Type is exactly application/json (as Vault sends it).
    with pytest.raises(hvac.exceptions.InvalidRequest) as raised:
        client.sys.enable_secrets_engine("no-such-engine", path="hvac-errors")
    assert raised.value.errors and raised.value.errors[0].startswith("plugin not found in the catalog: no-such-engine")
