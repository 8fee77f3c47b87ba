"""hvac (unchanged) against Hangar's key/value engine: secrets.kv.v1 and secrets.kv.v2.

Environment: VAULT_ADDR, VAULT_TOKEN.
"""
import os
import uuid

import hvac
import pytest


@pytest.fixture(scope="module")
def client():
    return hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])


@pytest.fixture
def mount(client, request):
    path = f"kv-hvac-{uuid.uuid4().hex[:8]}"
    client.sys.enable_secrets_engine("kv", path=path, options={"version": request.param})
    yield path
    client.sys.disable_secrets_engine(path)


@pytest.mark.parametrize("mount", ["1"], indirect=True)
def test_kv_v1(client, mount):
    kv = client.secrets.kv.v1
    kv.create_or_update_secret("app/db", {"password": "p1"}, mount_point=mount)
    assert kv.read_secret("app/db", mount_point=mount)["data"] == {"password": "p1"}
    assert kv.list_secrets("app", mount_point=mount)["data"]["keys"] == ["db"]
    kv.delete_secret("app/db", mount_point=mount)
    with pytest.raises(hvac.exceptions.InvalidPath):
        kv.read_secret("app/db", mount_point=mount)


@pytest.mark.parametrize("mount", ["2"], indirect=True)
def test_kv_v2(client, mount):
    kv = client.secrets.kv.v2
    kv.configure(max_versions=3, cas_required=False, mount_point=mount)
    assert kv.read_configuration(mount_point=mount)["data"]["max_versions"] == 3
    written = kv.create_or_update_secret("app/cfg", {"pw": "p1"}, mount_point=mount)
    assert written["data"]["version"] == 1
    kv.create_or_update_secret("app/cfg", {"pw": "p2"}, cas=1, mount_point=mount)
    with pytest.raises(hvac.exceptions.InvalidRequest):
        kv.create_or_update_secret("app/cfg", {"pw": "x"}, cas=1, mount_point=mount)
    latest = kv.read_secret_version("app/cfg", mount_point=mount, raise_on_deleted_version=True)
    assert latest["data"]["data"] == {"pw": "p2"} and latest["data"]["metadata"]["version"] == 2
    assert kv.read_secret_version("app/cfg", version=1, mount_point=mount, raise_on_deleted_version=True)["data"]["data"] == {"pw": "p1"}
    assert kv.patch("app/cfg", {"extra": "e"}, mount_point=mount)["data"]["version"] == 3

    kv.update_metadata("app/cfg", custom_metadata={"owner": "ops"}, mount_point=mount)
    meta = kv.read_secret_metadata("app/cfg", mount_point=mount)["data"]
    assert meta["current_version"] == 3 and meta["custom_metadata"] == {"owner": "ops"} and set(meta["versions"]) == {"1", "2", "3"}
    assert kv.list_secrets("app", mount_point=mount)["data"]["keys"] == ["cfg"]

    kv.delete_latest_version_of_secret("app/cfg", mount_point=mount)
    with pytest.raises(hvac.exceptions.InvalidPath):
        kv.read_secret_version("app/cfg", mount_point=mount, raise_on_deleted_version=True)
    kv.undelete_secret_versions("app/cfg", versions=[3], mount_point=mount)
    kv.delete_secret_versions("app/cfg", versions=[1], mount_point=mount)
    kv.destroy_secret_versions("app/cfg", versions=[1], mount_point=mount)
    versions = kv.read_secret_metadata("app/cfg", mount_point=mount)["data"]["versions"]
    assert versions["1"]["destroyed"] is True and versions["3"]["deletion_time"] == ""
    kv.delete_metadata_and_all_versions("app/cfg", mount_point=mount)
    with pytest.raises(hvac.exceptions.InvalidPath):
        kv.read_secret_metadata("app/cfg", mount_point=mount)


def test_cubbyhole(client):
    token = client.auth.token.create(policies=["default"])["auth"]["client_token"]
    mine = hvac.Client(url=os.environ["VAULT_ADDR"], token=token)
    mine.write_data("cubbyhole/app", data={"pw": "p"})
    assert mine.read("cubbyhole/app")["data"] == {"pw": "p"}
    assert client.read("cubbyhole/app") is None
    client.auth.token.revoke(token)
