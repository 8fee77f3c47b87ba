"""hvac (unchanged) against Hangar's JWT/OIDC login method: auth.jwt (config, roles, JWT login with
RSA and EC keys side by side) and auth.oidc (auth URL from a real provider, callback errors).

Environment: VAULT_ADDR, VAULT_TOKEN; OIDC_ISSUER (an OIDC provider the runner started, with the
client `hangar`/`hangar-secret` and the redirect URI REDIRECT). openssl signs the test JWTs.
"""
import base64
import json
import os
import subprocess
import tempfile
import time
import urllib.parse
import uuid

import hvac
import hvac.exceptions
import pytest

REDIRECT = "http://127.0.0.1:8250/oidc/callback"


@pytest.fixture(scope="module")
def client():
    return hvac.Client(url=os.environ["VAULT_ADDR"], token=os.environ["VAULT_TOKEN"])


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Key:
    """A private key made by openssl; signs JWTs with `openssl dgst`."""

    def __init__(self, directory, kind):
        self.path = os.path.join(directory, f"{kind}.pem")
        if kind == "rsa":
            subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", self.path], check=True, capture_output=True)
            self.alg = "RS256"
        else:
            subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", self.path], check=True, capture_output=True)
            self.alg = "ES256"
        self.public_pem = subprocess.run(["openssl", "pkey", "-in", self.path, "-pubout"], check=True, capture_output=True, text=True).stdout

    def sign(self, claims):
        signing_input = f'{b64url(json.dumps({"alg": self.alg, "typ": "JWT"}).encode())}.{b64url(json.dumps(claims).encode())}'
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.path], input=signing_input.encode(), check=True, capture_output=True).stdout
        if self.alg == "ES256":
            sig = der_to_raw(sig)
        return f"{signing_input}.{b64url(sig)}"


def der_to_raw(der):
    """An ECDSA signature from DER (openssl) to JWS's r||s, 32 bytes each."""
    def integer(at):
        assert der[at] == 0x02
        length = der[at + 1]
        value = der[at + 2 : at + 2 + length]
        return value.lstrip(b"\x00").rjust(32, b"\x00"), at + 2 + length

    start = 3 if der[1] & 0x80 else 2
    r, nxt = integer(start)
    s, _ = integer(nxt)
    return r + s


@pytest.fixture(scope="module")
def keys():
    with tempfile.TemporaryDirectory() as d:
        yield Key(d, "rsa"), Key(d, "ec")


def test_jwt_login(client, keys):
    path = f"hvac-jwt-{uuid.uuid4().hex[:8]}"
    client.sys.enable_auth_method("jwt", path=path)
    try:
        rsa, ec = keys
        client.auth.jwt.configure(jwt_validation_pubkeys=[ec.public_pem, rsa.public_pem], jwt_supported_algs=["RS256", "ES256"], bound_issuer="https://ci.example", path=path)
        config = client.auth.jwt.read_config(path=path)["data"]
        assert config["bound_issuer"] == "https://ci.example" and len(config["jwt_validation_pubkeys"]) == 2
        client.auth.jwt.create_role(
            "ci", user_claim="sub", allowed_redirect_uris=[], role_type="jwt", bound_audiences=["hangar"],
            token_policies=["default"], token_ttl="60s", token_max_ttl="10m", path=path,
        )
        assert client.auth.jwt.read_role("ci", path=path)["data"]["user_claim"] == "sub"
        assert client.auth.jwt.list_roles(path=path)["data"]["keys"] == ["ci"]
        now = int(time.time())
        claims = {"iss": "https://ci.example", "aud": "hangar", "sub": "pipeline-7", "iat": now, "exp": now + 300}
        for key in keys:
            login = hvac.Client(url=os.environ["VAULT_ADDR"])
            auth = login.auth.jwt.jwt_login("ci", key.sign(claims), path=path)["auth"]
            assert auth["lease_duration"] == 60 and auth["renewable"] and auth["policies"] == ["default"]
            assert login.token == auth["client_token"] and login.is_authenticated()
        with pytest.raises(hvac.exceptions.InvalidRequest, match="audience|aud"):
            client.auth.jwt.jwt_login("ci", rsa.sign({**claims, "aud": "other"}), use_token=False, path=path)
        # Login tokens are leases under auth/<path>/login, revoked by prefix.
        assert len(client.sys.list_leases(f"auth/{path}/login")["data"]["keys"]) == 2
        client.sys.revoke_prefix(f"auth/{path}")
        with pytest.raises(hvac.exceptions.InvalidPath):
            client.sys.list_leases(f"auth/{path}/login")
        client.auth.jwt.delete_role("ci", path=path)
        with pytest.raises(hvac.exceptions.InvalidPath):
            client.auth.jwt.read_role("ci", path=path)
    finally:
        client.sys.disable_auth_method(path)


def test_oidc_auth_url_and_callback(client):
    issuer = os.environ["OIDC_ISSUER"]
    path = f"hvac-oidc-{uuid.uuid4().hex[:8]}"
    client.sys.enable_auth_method("oidc", path=path)
    try:
        client.auth.oidc.configure(oidc_discovery_url=issuer, oidc_client_id="hangar", oidc_client_secret="hangar-secret", default_role="web", path=path)
        client.auth.oidc.create_role("web", user_claim="sub", allowed_redirect_uris=[REDIRECT], token_policies=["default"], path=path)
        url = client.auth.oidc.oidc_authorization_url_request("web", REDIRECT, path=path)["data"]["auth_url"]
        parsed = urllib.parse.urlparse(url)
        query = urllib.parse.parse_qs(parsed.query)
        assert url.startswith(issuer)
        assert query["client_id"] == ["hangar"] and query["redirect_uri"] == [REDIRECT] and query["response_type"] == ["code"]
        assert "openid" in query["scope"][0].split() and query["state"][0] and query["nonce"][0]
        with pytest.raises(hvac.exceptions.InvalidRequest, match="state"):
            client.auth.oidc.oidc_callback(state="not-a-state", nonce="n", code="c", path=path)
        with pytest.raises(hvac.exceptions.InvalidRequest, match="redirect_uri"):
            client.auth.oidc.oidc_authorization_url_request("web", "http://evil.example/cb", path=path)
    finally:
        client.sys.disable_auth_method(path)
