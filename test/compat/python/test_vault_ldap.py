"""hvac (unchanged) against Hangar's ldap secrets engine and a private OpenLDAP.

Environment: VAULT_ADDR, VAULT_TOKEN, LDAP_URL, LDAP_BINDDN, LDAP_BINDPASS, LDAP_USERDN,
ACCOUNT_PREFIX (accounts <prefix>-role, <prefix>-lib1, <prefix>-lib2 exist under LDAP_USERDN).
`ldapwhoami` judges every password the engine hands out. hvac has calls for the configuration and
static roles (`secrets.ldap`); dynamic roles and library sets go through its generic read and write.
"""
import os
import subprocess

import hvac
import pytest

MOUNT = "ldap-hvac"


def can_bind(dn, password):
    return subprocess.run(
        ["ldapwhoami", "-x", "-H", os.environ["LDAP_URL"], "-D", dn, "-w", password], capture_output=True
    ).returncode == 0


def dn_of(uid):
    return f"uid={uid},{os.environ['LDAP_USERDN']}"


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("ldap", path=MOUNT)
    c.secrets.ldap.configure(
        binddn=os.environ["LDAP_BINDDN"],
        bindpass=os.environ["LDAP_BINDPASS"],
        url=os.environ["LDAP_URL"],
        userdn=os.environ["LDAP_USERDN"],
        userattr="uid",
        schema="openldap",
        mount_point=MOUNT,
    )
    return c


def test_config_and_static_roles(client):
    ldap = client.secrets.ldap
    config = ldap.read_config(mount_point=MOUNT)["data"]
    assert config["binddn"] == os.environ["LDAP_BINDDN"] and config["userattr"] == "uid"
    assert config["schema"] == "openldap" and config["connection_timeout"] == 30 and config["request_timeout"] == 90
    assert "bindpass" not in config

    account = os.environ["ACCOUNT_PREFIX"] + "-role"
    ldap.create_or_update_static_role("app", username=account, rotation_period="1h", mount_point=MOUNT)
    assert ldap.list_static_roles(mount_point=MOUNT)["data"]["keys"] == ["app"]
    role = ldap.read_static_role("app", mount_point=MOUNT)["data"]
    assert role["username"] == account and role["rotation_period"] == 3600 and role["last_vault_rotation"]

    creds = ldap.generate_static_credentials("app", mount_point=MOUNT)["data"]
    assert creds["username"] == account and len(creds["password"]) == 64 and 3590 <= creds["ttl"] <= 3600
    assert can_bind(dn_of(account), creds["password"])
    assert not can_bind(dn_of(account), "initial-" + account)

    ldap.rotate_static_credentials("app", mount_point=MOUNT)
    rotated = ldap.generate_static_credentials("app", mount_point=MOUNT)["data"]
    assert rotated["last_password"] == creds["password"] and can_bind(dn_of(account), rotated["password"])
    assert not can_bind(dn_of(account), creds["password"])

    ldap.delete_static_role("app", mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidPath):
        ldap.read_static_role("app", mount_point=MOUNT)


def test_dynamic_role(client):
    people = os.environ["LDAP_USERDN"]
    client.write(
        f"{MOUNT}/role/dyn",
        creation_ldif=f"dn: uid={{{{.Username}}}},{people}\nobjectClass: inetOrgPerson\nuid: {{{{.Username}}}}\n"
        "cn: {{.Username}}\nsn: dyn\nuserPassword: {{.Password}}\n",
        deletion_ldif=f"dn: uid={{{{.Username}}}},{people}\nchangetype: delete\n",
        username_template="hvac_{{random 8 | lowercase}}",
        default_ttl="1h",
        max_ttl="2h",
    )
    role = client.read(f"{MOUNT}/role/dyn")["data"]
    assert role["default_ttl"] == 3600 and role["max_ttl"] == 7200 and role["rollback_ldif"] == ""

    creds = client.read(f"{MOUNT}/creds/dyn")
    assert creds["lease_duration"] == 3600 and creds["renewable"] and creds["lease_id"]
    username, password = creds["data"]["username"], creds["data"]["password"]
    assert creds["data"]["distinguished_names"] == [dn_of(username)]
    assert can_bind(dn_of(username), password)
    client.sys.revoke_lease(creds["lease_id"])
    assert not can_bind(dn_of(username), password)


def test_library_and_rotate_root(client):
    prefix = os.environ["ACCOUNT_PREFIX"]
    names = [prefix + "-lib1", prefix + "-lib2"]
    client.write(f"{MOUNT}/library/team", service_account_names=names, ttl="1h", max_ttl="2h")
    assert client.read(f"{MOUNT}/library/team")["data"] == {
        "service_account_names": names,
        "ttl": 3600,
        "max_ttl": 7200,
        "disable_check_in_enforcement": False,
    }
    out = client.write(f"{MOUNT}/library/team/check-out", ttl="10m")
    assert out["lease_duration"] == 600 and out["renewable"]
    name, password = out["data"]["service_account_name"], out["data"]["password"]
    assert can_bind(dn_of(name), password)
    assert client.read(f"{MOUNT}/library/team/status")["data"][name]["available"] is False
    assert client.write(f"{MOUNT}/library/team/check-in")["data"]["check_ins"] == [name]
    assert not can_bind(dn_of(name), password)

    client.secrets.ldap.rotate_root(mount_point=MOUNT)
    assert not can_bind(os.environ["LDAP_BINDDN"], os.environ["LDAP_BINDPASS"])
    # The engine binds with the password only it knows now.
    again = client.write(f"{MOUNT}/library/team/check-out")
    assert can_bind(dn_of(again["data"]["service_account_name"]), again["data"]["password"])
    client.sys.revoke_lease(again["lease_id"])
    client.delete(f"{MOUNT}/library/team")
