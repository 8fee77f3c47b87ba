"""hvac (unchanged) against Hangar's directory accounts engine and a private OpenLDAP.

Environment: VAULT_ADDR, VAULT_TOKEN, LDAP_URL, LDAP_BINDDN, LDAP_BINDPASS, LDAP_USERDN,
ACCOUNT_PREFIX (accounts <prefix>-role, <prefix>-lib1, <prefix>-lib2 exist under LDAP_USERDN).
`ldapwhoami` judges every password the engine hands out.
"""
import os
import subprocess

import hvac
import pytest

MOUNT = "ad-hvac"


def can_bind(dn, password):
    return subprocess.run(
        ["ldapwhoami", "-x", "-H", os.environ["LDAP_URL"], "-D", dn, "-w", password], capture_output=True
    ).returncode == 0


def dn_of(uid):
    return f"uid={uid},{os.environ['LDAP_USERDN']}"


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("ad", path=MOUNT)
    c.secrets.activedirectory.configure(
        binddn=os.environ["LDAP_BINDDN"],
        bindpass=os.environ["LDAP_BINDPASS"],
        url=os.environ["LDAP_URL"],
        userdn=os.environ["LDAP_USERDN"],
        ttl="1h",
        max_ttl="2h",
        mount_point=MOUNT,
        schema="openldap",
        length=24,
    )
    return c


def test_config_roles_creds(client):
    ad = client.secrets.activedirectory
    config = ad.read_config(mount_point=MOUNT)["data"]
    assert config["binddn"] == os.environ["LDAP_BINDDN"]
    assert config["ttl"] == 3600 and config["max_ttl"] == 7200 and config["length"] == 24
    assert "bindpass" not in config

    account = os.environ["ACCOUNT_PREFIX"] + "-role"
    with pytest.raises(hvac.exceptions.InvalidRequest, match="was not found"):
        ad.create_or_update_role("app", service_account_name="nobody", mount_point=MOUNT)
    ad.create_or_update_role("app", service_account_name=account, ttl="30m", mount_point=MOUNT)
    assert ad.list_roles(mount_point=MOUNT)["data"]["keys"] == ["app"]
    role = ad.read_role("app", mount_point=MOUNT)["data"]
    assert role["service_account_name"] == account and role["ttl"] == 1800

    creds = ad.generate_credentials("app", mount_point=MOUNT)["data"]
    assert creds["username"] == account and len(creds["current_password"]) == 24
    assert can_bind(dn_of(account), creds["current_password"])
    assert not can_bind(dn_of(account), "initial-" + account)
    assert ad.generate_credentials("app", mount_point=MOUNT)["data"]["current_password"] == creds["current_password"]
    assert ad.read_role("app", mount_point=MOUNT)["data"]["last_vault_rotation"]

    ad.delete_role("app", mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidPath):
        ad.read_role("app", mount_point=MOUNT)


def test_library_check_out_and_in(client):
    prefix = os.environ["ACCOUNT_PREFIX"]
    names = [prefix + "-lib1", prefix + "-lib2"]
    client.write(f"{MOUNT}/library/team", service_account_names=names, ttl="1h", max_ttl="2h")
    assert client.read(f"{MOUNT}/library/team")["data"] == {
        "service_account_names": names,
        "ttl": 3600,
        "max_ttl": 7200,
        "disable_check_in_enforcement": False,
    }
    assert client.list(f"{MOUNT}/library")["data"]["keys"] == ["team"]

    out = client.write(f"{MOUNT}/library/team/check-out", ttl="10m")
    assert out["lease_duration"] == 600 and out["renewable"] and out["lease_id"]
    name, password = out["data"]["service_account_name"], out["data"]["password"]
    assert can_bind(dn_of(name), password)
    status = client.read(f"{MOUNT}/library/team/status")["data"]
    assert status[name]["available"] is False and "borrower_client_token" in status[name]

    renewed = client.sys.renew_lease(out["lease_id"], increment=1200)
    assert renewed["lease_duration"] == 1200

    second = client.write(f"{MOUNT}/library/team/check-out")
    with pytest.raises(hvac.exceptions.InvalidRequest, match="No service accounts available"):
        client.write(f"{MOUNT}/library/team/check-out")

    checked_in = client.write(f"{MOUNT}/library/team/check-in", service_account_names=[name])
    assert checked_in["data"]["check_ins"] == [name]
    assert not can_bind(dn_of(name), password)
    assert client.write(f"{MOUNT}/library/team/check-in", service_account_names=[name])["data"]["check_ins"] == []

    client.sys.revoke_lease(second["lease_id"])
    assert not can_bind(dn_of(second["data"]["service_account_name"]), second["data"]["password"])
    status = client.read(f"{MOUNT}/library/team/status")["data"]
    assert all(status[n] == {"available": True} for n in names)

    third = client.write(f"{MOUNT}/library/team/check-out")
    forced = client.write(f"{MOUNT}/library/manage/team/check-in", service_account_names=third["data"]["service_account_name"])
    assert forced["data"]["check_ins"] == [third["data"]["service_account_name"]]


def test_rotate_root(client):
    client.read(f"{MOUNT}/rotate-root")
    assert not can_bind(os.environ["LDAP_BINDDN"], os.environ["LDAP_BINDPASS"])
    # The engine binds with the password only it knows now.
    out = client.write(f"{MOUNT}/library/team/check-out")
    assert can_bind(dn_of(out["data"]["service_account_name"]), out["data"]["password"])
    # A set with a checked-out account cannot be deleted; checked in, it can.
    with pytest.raises(hvac.exceptions.InvalidRequest, match="currently checked out"):
        client.delete(f"{MOUNT}/library/team")
    assert client.write(f"{MOUNT}/library/team/check-in")["data"]["check_ins"] == [out["data"]["service_account_name"]]
    client.delete(f"{MOUNT}/library/team")
    client.delete(f"{MOUNT}/config")
    assert client.read(f"{MOUNT}/config") is None
