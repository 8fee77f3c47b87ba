"""hvac (unchanged) against Hangar's PKI engine: root, intermediate, roles, issuing, revocation, CRL, issuers.

Environment: VAULT_ADDR, VAULT_TOKEN. openssl judges the certificates and the CRL.
"""
import os
import subprocess
import tempfile

import hvac
import pytest

ROOT = "pki-hvac"
INT = "pki-hvac-int"


@pytest.fixture(scope="module")
def client():
    c = hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])
    for mount in (ROOT, INT):
        c.sys.enable_secrets_engine("pki", path=mount, config={"max_lease_ttl": "87600h"})
    yield c
    for mount in (ROOT, INT):
        c.sys.disable_secrets_engine(mount)


def openssl(*args, files=()):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, text in enumerate(files):
            path = os.path.join(d, f"f{i}.pem")
            with open(path, "w") as f:
                f.write(text + "\n")
            paths.append(path)
        argv = [a.format(*paths) for a in args]
        return subprocess.run(["openssl", *argv], capture_output=True, text=True)


def test_root_intermediate_and_issue(client):
    pki = client.secrets.pki
    # Shorter than the mount's 87600h maximum, so that a later intermediate capped at that maximum
    # always ends past the root (within one second of the root's making, it would end with it).
    root = pki.generate_root("internal", "hvac Root", extra_params={"ttl": "87000h"}, mount_point=ROOT)["data"]
    assert "private_key" not in root
    assert pki.read_ca_certificate(mount_point=ROOT) == root["certificate"]

    csr = pki.generate_intermediate("internal", "hvac Intermediate", mount_point=INT)["data"]["csr"]
    signed = pki.sign_intermediate(csr, "hvac Intermediate", extra_params={"ttl": "43800h"}, mount_point=ROOT)["data"]
    pki.set_signed_intermediate(signed["certificate"], mount_point=INT)
    assert pki.read_ca_certificate_chain(mount_point=INT).startswith(signed["certificate"])

    pki.create_or_update_role("web", {"allowed_domains": ["hvac.test"], "allow_subdomains": True, "max_ttl": "24h"}, mount_point=INT)
    assert pki.read_role("web", mount_point=INT)["data"]["allowed_domains"] == ["hvac.test"]
    assert "web" in pki.list_roles(mount_point=INT)["data"]["keys"]
    cert = pki.generate_certificate("web", "www.hvac.test", extra_params={"ttl": "1h", "alt_names": "api.hvac.test"}, mount_point=INT)["data"]
    verify = openssl("verify", "-CAfile", "{0}", "-untrusted", "{1}", "{2}", files=(root["certificate"], signed["certificate"], cert["certificate"]))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    text = openssl("x509", "-noout", "-text", "-in", "{0}", files=(cert["certificate"],)).stdout
    assert "DNS:www.hvac.test, DNS:api.hvac.test" in text

    with pytest.raises(hvac.exceptions.InvalidRequest, match="not allowed by this role"):
        pki.generate_certificate("web", "www.example.org", mount_point=INT)


def test_sign_revoke_crl_and_tidy(client):
    pki = client.secrets.pki
    key = openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048").stdout
    csr = openssl("req", "-new", "-key", "{0}", "-subj", "/CN=csr.hvac.test", files=(key,)).stdout
    signed = pki.sign_certificate("web", csr, "csr.hvac.test", mount_point=INT)["data"]
    serial = signed["serial_number"]
    assert serial in pki.list_certificates(mount_point=INT)["data"]["keys"]

    revoked = pki.revoke_certificate(serial, mount_point=INT)["data"]
    assert revoked["revocation_time"] > 0
    crl = pki.read_crl(mount_point=INT)
    chain = pki.read_ca_certificate_chain(mount_point=INT)
    listed = openssl("crl", "-noout", "-text", "-in", "{0}", "-CAfile", "{1}", files=(crl, chain))
    assert "verify OK" in listed.stdout + listed.stderr
    assert serial.replace(":", "").upper() in listed.stdout.upper()
    assert pki.read_certificate(serial, mount_point=INT)["data"]["revocation_time"] == revoked["revocation_time"]
    assert pki.rotate_crl(mount_point=INT)["data"]["success"] is True

    pki.set_crl_configuration(expiry="48h", mount_point=INT)
    assert pki.read_crl_configuration(mount_point=INT)["data"]["expiry"] == "48h"
    pki.set_urls({"issuing_certificates": ["http://127.0.0.1:8200/v1/pki-hvac-int/ca"]}, mount_point=INT)
    assert pki.read_urls(mount_point=INT)["data"]["issuing_certificates"] == ["http://127.0.0.1:8200/v1/pki-hvac-int/ca"]
    pki.tidy(extra_params={"tidy_cert_store": True, "safety_buffer": "1h"}, mount_point=INT)


def test_issuers_role_fields_and_sign_intermediate(client):
    pki = client.secrets.pki
    # Another root is another issuer (Vault 1.11+); the first stays the default.
    first = pki.read_issuer("default", mount_point=ROOT)["data"]
    second = pki.generate_root("internal", "hvac Root B", extra_params={"issuer_name": "hvac-b", "key_type": "ec", "ttl": "48h"}, mount_point=ROOT)["data"]
    listed = pki.list_issuers(mount_point=ROOT)["data"]
    assert sorted(listed["keys"]) == sorted([first["issuer_id"], second["issuer_id"]])
    assert listed["key_info"][first["issuer_id"]]["is_default"] is True
    issuer = pki.read_issuer("hvac-b", mount_point=ROOT)["data"]
    assert issuer["certificate"] == second["certificate"] and issuer["leaf_not_after_behavior"] == "err"
    assert issuer["usage"] == "crl-signing,issuing-certificates,ocsp-signing,read-only"
    updated = pki.update_issuer("hvac-b", extra_params={"issuer_name": "hvac-b", "leaf_not_after_behavior": "truncate"}, mount_point=ROOT)["data"]
    assert updated["leaf_not_after_behavior"] == "truncate"

    # A role on that issuer: every field read back, the certificate signed by it and cut to its expiry.
    pki.create_or_update_role("on-b", {"allow_any_name": True, "key_type": "ec", "issuer_ref": "hvac-b", "signature_bits": 384}, mount_point=ROOT)
    role = pki.read_role("on-b", mount_point=ROOT)["data"]
    assert role["issuer_ref"] == "hvac-b" and role["signature_bits"] == 384 and role["use_pss"] is False
    assert role["cn_validations"] == ["email", "hostname"] and role["not_after"] == "" and role["allowed_domains_template"] is False
    cert = pki.generate_certificate("on-b", "b.hvac.test", extra_params={"ttl": "72h"}, mount_point=ROOT)["data"]
    assert cert["issuing_ca"] == second["certificate"]
    assert openssl("verify", "-CAfile", "{0}", "{1}", files=(second["certificate"], cert["certificate"])).returncode == 0
    assert "notAfter=" + openssl("x509", "-noout", "-enddate", "-in", "{0}", files=(second["certificate"],)).stdout.split("=", 1)[1] == \
        "notAfter=" + openssl("x509", "-noout", "-enddate", "-in", "{0}", files=(cert["certificate"],)).stdout.split("=", 1)[1]

    # sign-intermediate as the tutorial: no common name (the CSR's), a TTL past the root truncated with a warning.
    csr = pki.generate_intermediate("internal", "hvac Tutorial Intermediate", mount_point=INT)["data"]["csr"]
    signed = pki.sign_intermediate(csr, "", extra_params={"ttl": "438000h"}, mount_point=ROOT)
    assert "CN = hvac Tutorial Intermediate" in openssl("x509", "-noout", "-subject", "-in", "{0}", files=(signed["data"]["certificate"],)).stdout
    assert any("truncated" in w for w in signed["warnings"])

    revoked = pki.revoke_issuer("hvac-b", mount_point=ROOT)["data"]
    assert revoked["revoked"] is True
    pki.delete_issuer("hvac-b", mount_point=ROOT)
    assert pki.list_issuers(mount_point=ROOT)["data"]["keys"] == [first["issuer_id"]]


def test_delete_root_then_generate_again(client):
    pki = client.secrets.pki
    pki.delete_root(mount_point=ROOT)
    fresh = pki.generate_root("exported", "hvac Root 2", extra_params={"key_type": "ec", "key_bits": 384}, mount_point=ROOT)["data"]
    assert fresh["private_key_type"] == "ec" and "PRIVATE KEY" in fresh["private_key"]
    assert pki.read_issuer("default", mount_point=ROOT)["data"]["issuer_id"] == fresh["issuer_id"]
