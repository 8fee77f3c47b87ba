"""hvac (unchanged) against Hangar's transform engine: every hvac transform call the engine serves.

Environment: VAULT_ADDR, VAULT_TOKEN.
"""
import base64
import os
import re

import hvac
import hvac.exceptions
import pytest

MOUNT = "transform-hvac"


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    c.sys.enable_secrets_engine("transform", path=MOUNT)
    yield c
    c.sys.disable_secrets_engine(MOUNT)


def test_objects_and_reads(client):
    t = client.secrets.transform
    t.create_or_update_alphabet("hexlower", "0123456789abcdef", mount_point=MOUNT)
    assert t.read_alphabet("hexlower", mount_point=MOUNT)["data"] == {"alphabet": "0123456789abcdef"}
    t.create_or_update_template("hexid", "regex", r"id-([0-9a-f]+)", "hexlower", mount_point=MOUNT)
    assert t.read_template("hexid", mount_point=MOUNT)["data"]["pattern"] == r"id-([0-9a-f]+)"
    assert t.list_templates(mount_point=MOUNT)["data"]["keys"] == ["hexid"]
    assert t.list_alphabets(mount_point=MOUNT)["data"]["keys"] == ["hexlower"]
    # The deprecated generic endpoint (hvac sends masking_character null for FPE).
    t.create_or_update_transformation("hex-fpe", "fpe", "hexid", tweak_source="generated", allowed_roles=["app"], mount_point=MOUNT)
    t.create_or_update_fpe_transformation("ssn-fpe", "builtin/socialsecuritynumber", tweak_source="internal", allowed_roles=["app"], mount_point=MOUNT)
    t.create_or_update_masking_transformation("ssn-mask", "builtin/socialsecuritynumber", masking_character="X", allowed_roles=["app"], mount_point=MOUNT)
    t.create_or_update_tokenization_transformation("tok", max_ttl=3600, allowed_roles=["app"], mount_point=MOUNT)
    read = t.read_transformation("hex-fpe", mount_point=MOUNT)["data"]
    assert read == {"type": "fpe", "templates": ["hexid"], "tweak_source": "generated", "allowed_roles": ["app"], "deletion_allowed": False}
    assert sorted(t.list_transformations(mount_point=MOUNT)["data"]["keys"]) == ["hex-fpe", "ssn-fpe", "ssn-mask", "tok"]
    t.create_or_update_role("app", ["hex-fpe", "ssn-fpe", "ssn-mask", "tok"], mount_point=MOUNT)
    assert t.read_role("app", mount_point=MOUNT)["data"] == {"transformations": ["hex-fpe", "ssn-fpe", "ssn-mask", "tok"]}
    assert t.list_roles(mount_point=MOUNT)["data"]["keys"] == ["app"]


def test_encode_decode_validate(client):
    t = client.secrets.transform
    enc = t.encode("app", value="id-00ff00ff", transformation="hex-fpe", mount_point=MOUNT)["data"]
    assert re.fullmatch(r"id-[0-9a-f]{8}", enc["encoded_value"])
    assert len(base64.b64decode(enc["tweak"])) == 7
    dec = t.decode("app", value=enc["encoded_value"], transformation="hex-fpe", tweak=enc["tweak"], mount_point=MOUNT)
    assert dec["data"]["decoded_value"] == "id-00ff00ff"
    batch = t.encode(
        "app",
        batch_input=[
            {"value": "123-45-6789", "transformation": "ssn-fpe"},
            {"value": "123-45-6789", "transformation": "ssn-mask"},
            {"value": "123-45-6789", "transformation": "tok"},
        ],
        mount_point=MOUNT,
    )["data"]["batch_results"]
    assert re.fullmatch(r"\d{3}-\d{2}-\d{4}", batch[0]["encoded_value"])
    assert batch[1]["encoded_value"] == "XXX-XX-XXXX"
    token = batch[2]["encoded_value"]
    assert t.validate_token("app", value=token, transformation="tok", mount_point=MOUNT)["data"]["valid"] is True
    assert t.validate_token("app", value="not-a-token", transformation="tok", mount_point=MOUNT)["data"]["valid"] is False
    back = t.decode("app", batch_input=[{"value": batch[0]["encoded_value"], "transformation": "ssn-fpe"}, {"value": token, "transformation": "tok"}], mount_point=MOUNT)
    assert [r["decoded_value"] for r in back["data"]["batch_results"]] == ["123-45-6789", "123-45-6789"]
    with pytest.raises(hvac.exceptions.InvalidRequest, match="masked values cannot be decoded"):
        t.decode("app", value="XXX-XX-XXXX", transformation="ssn-mask", mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidRequest, match="transformation is required"):
        t.encode("app", value="123-45-6789", mount_point=MOUNT)


def test_store_and_deletes(client):
    t = client.secrets.transform
    t.create_or_update_tokenization_store(
        "pg", driver="postgres", connection_string="postgresql://{{username}}:{{password}}@127.0.0.1:1/tokens",
        username="runtime", password="s3cret", mount_point=MOUNT,
    )
    store = client.adapter.get(f"/v1/{MOUNT}/store/pg")["data"]
    assert store["type"] == "sql" and store["supported_transformations"] == ["tokenization"]
    assert "password" not in store
    with pytest.raises(hvac.exceptions.InvalidRequest, match="used by role"):
        t.delete_transformation("tok", mount_point=MOUNT)
    t.delete_role("app", mount_point=MOUNT)
    for name in ["hex-fpe", "ssn-fpe", "ssn-mask", "tok"]:
        t.delete_transformation(name, mount_point=MOUNT)
    t.delete_template("hexid", mount_point=MOUNT)
    t.delete_alphabet("hexlower", mount_point=MOUNT)
    # An empty list is the public service's 404, which hvac raises as InvalidPath.
    with pytest.raises(hvac.exceptions.InvalidPath):
        t.list_transformations(mount_point=MOUNT)


def test_tokenization_keys_and_late_templates(client):
    t = client.secrets.transform
    t.create_or_update_tokenization_transformation("tok-keys", allowed_roles=["tok-keys"], mount_point=MOUNT)
    t.create_or_update_role("tok-keys", ["tok-keys"], mount_point=MOUNT)
    assert "tok-keys" in t.list_tokenization_key_configuration(mount_point=MOUNT)["data"]["keys"]
    first = t.encode("tok-keys", value="first", mount_point=MOUNT)["data"]["encoded_value"]
    t.rotate_tokenization_key("tok-keys", mount_point=MOUNT)
    key = t.read_tokenization_key_configuration("tok-keys", mount_point=MOUNT)["data"]
    assert key["latest_version"] == 2 and key["min_decryption_version"] == 1
    assert t.decode("tok-keys", value=first, mount_point=MOUNT)["data"]["decoded_value"] == "first"
    t.update_tokenization_key_config("tok-keys", min_decryption_version=2, mount_point=MOUNT)
    with pytest.raises(hvac.exceptions.InvalidRequest):
        t.decode("tok-keys", value=first, mount_point=MOUNT)
    t.trim_tokenization_key_version("tok-keys", min_available_version=2, mount_point=MOUNT)
    assert t.read_tokenization_key_configuration("tok-keys", mount_point=MOUNT)["data"]["min_available_version"] == 2
    # A transformation may name a template made later.
    t.create_or_update_masking_transformation("late", "late-template", allowed_roles=["tok-keys"], mount_point=MOUNT)
    t.create_or_update_template("late-template", "regex", r"(\d+)", "builtin/numeric", mount_point=MOUNT)
    template = t.read_template("late-template", mount_point=MOUNT)["data"]
    assert template["encode_format"] == "" and template["decode_formats"] == {}
